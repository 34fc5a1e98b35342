// The sections and Markdown tables of the GPU check's summary.
export interface Step {
  name: string;
  status: 'ok' | 'FAIL' | 'SKIPPED';
  seconds: number;
  detail: string;
}

export interface ContractRow {
  prompt: number;
  model: string;
  strategy: string;
  match: boolean;
  /** first token index where speculative and AR differ */
  divergence: number | null;
  acceptance: number | null;
  replays: number;
  device: string;
}

export interface SpeedRow {
  model: string;
  config: string;
  decode: number | null;
  request: number | null;
  acceptance: number | null;
  replays: number;
  flashAttn: string;
}

export interface AuditRow {
  type: string;
  k: number;
  prompt: number;
  identical: boolean | null;
  /** first differing token, its control margin and the verify row's max |diff| to the one-row decode */
  index: number | null;
  margin: number | null;
  diff: number | null;
  explained: boolean | null;
  flavour: string;
  error: string | null;
}

/** A summary section: its heading, a blank line, its lines, and the blank line that ends it. */
export function section(heading: string, lines: readonly string[]): string[] {
  return [`## ${heading}`, '', ...lines, ''];
}

const f1 = (x: number | null) => (x === null ? '-' : x.toFixed(1));
const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(0)}%`);
const cell = (s: string) => s.replace(/\|/g, '\\|');

export function stepTable(steps: readonly Step[]): string[] {
  return [
    '| step | status | seconds | detail |',
    '| --- | --- | ---: | --- |',
    ...steps.map((s) => `| ${s.name} | ${s.status} | ${s.seconds.toFixed(1)} | ${cell(s.detail)} |`),
  ];
}

export function contractTable(rows: readonly ContractRow[]): string[] {
  if (rows.length === 0) return ['(not run)'];
  return [
    '| prompt | model | strategy | digest = AR | first divergence | acceptance | replays | device |',
    '| ---: | --- | --- | --- | ---: | ---: | ---: | --- |',
    ...rows.map(
      (r) =>
        `| ${r.prompt} | ${r.model} | ${r.strategy} | ${r.match ? 'yes' : '**NO**'} | ${r.divergence ?? '-'} | ` +
        `${pct(r.acceptance)} | ${r.replays} | ${cell(r.device)} |`,
    ),
  ];
}

export function speedTable(rows: readonly SpeedRow[]): string[] {
  if (rows.length === 0) return ['(not run)'];
  const ar = new Map(rows.filter((r) => r.config === 'AR').map((r) => [r.model, r.decode]));
  return [
    '| model | config | steady decode tok/s (median of runs) | vs AR | request tok/s | acceptance | replays | flash attn |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.map((r) => {
      const base = ar.get(r.model);
      const ratio = base && r.decode !== null ? `${(r.decode / base).toFixed(2)}x` : '-';
      return `| ${r.model} | ${r.config} | ${f1(r.decode)} | ${ratio} | ${f1(r.request)} | ${pct(r.acceptance)} | ${r.replays} | ${r.flashAttn} |`;
    }),
  ];
}

export function auditTable(rows: readonly AuditRow[]): string[] {
  if (rows.length === 0) return ['(not run)'];
  const g = (x: number | null) => (x === null ? '-' : x.toPrecision(3));
  return [
    '| weights | K | prompt | identical | first divergence | control margin | verify row max abs diff | explained | flavour |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | --- |',
    ...rows.map((r) =>
      r.error
        ? `| ${r.type} | ${r.k} | ${r.prompt} | **error** | ${cell(r.error)} | | | | ${r.flavour} |`
        : `| ${r.type} | ${r.k} | ${r.prompt} | ${r.identical ? 'yes' : '**NO**'} | ${r.index ?? '-'} | ${g(r.margin)} | ${g(r.diff)} | ` +
          `${r.explained === null ? '-' : r.explained ? 'yes' : '**NO (bug)**'} | ${r.flavour} |`,
    ),
  ];
}
