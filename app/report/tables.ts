// The report's tables as plain rows of text: the Markdown and the HTML renderings both print
// these, so they cannot disagree with each other.
import { bytes, fixed, ks, median, percent, profileSettings, ratio, shortDigest, yesNo } from './format.js';
import { requestSpeedupCell } from './prefill.js';
import type { PartFigures } from '../contract/report/parts.js';
import type { ProfileSummary, Report, RequestRecord } from '../contract/report/schema.js';
import { strategyLabel } from '../contract/strategies.js';

export interface Table {
  id: string;
  title: string;
  headers: string[];
  rows: string[][];
}

/** The sampling of a chat's replies, each distinct setting once: "greedy", "temperature 0.8, seed 7". */
function chatSampling(report: Report): string {
  const seen = new Set<string>();
  for (const r of report.chat?.replies ?? []) {
    const s = r.sampling;
    seen.add(
      s.temperature === 0 ? 'greedy' : `temperature ${s.temperature}, seed ${s.seed}, top-k ${s.topK}, top-p ${s.topP}, min-p ${s.minP}`,
    );
  }
  return [...seen].join('; ') || '-';
}

function chatRunTable(report: Report): Table {
  const { run } = report;
  const chat = report.chat!;
  const superseded = chat.replies.filter((r) => r.superseded).length;
  return {
    id: 'run',
    title: 'Chat',
    headers: ['', ''],
    rows: [
      ['chat', `${chat.title} (${chat.id})`],
      ['started', run.startedAt],
      ['last change', run.finishedAt],
      [
        'turns',
        `${chat.turns} user messages, ${report.requests.length} replies in the report${superseded ? ` (${superseded} replaced by Regenerate or the A/B, kept)` : ''}`,
      ],
      ['profiles', run.profiles.map((p) => `${p.name} (${profileSettings(p)})`).join(', ')],
      ['sampling', chatSampling(report)],
      ['warm-up rounds', String(run.warmupRounds)],
      ...chat.left.map((l) => ['left out', `${l.messageId}: ${l.reason}`]),
      ...chat.notes.map((n) => ['note', n]),
    ],
  };
}

/** The run's strategy, a chain as its list ("ngram,mtp"): every speculative profile of a bench runs the same. */
export function runStrategy(report: Report): string {
  return strategyLabel(report.run.strategy, report.run.profiles.find((p) => p.fallbacks)?.fallbacks);
}

export function runTable(report: Report): Table {
  if (report.kind === 'power-chat-report') return chatRunTable(report);
  const { run } = report;
  return {
    id: 'run',
    title: 'Run',
    headers: ['', ''],
    rows: [
      ['command', run.command],
      ['started', run.startedAt],
      ['finished', run.finishedAt],
      ['strategy', runStrategy(report)],
      ['profiles', run.profiles.map((p) => `${p.name} (${profileSettings(p)})`).join(', ')],
      ['tasks', `${run.tasks.name}: ${run.tasks.count} tasks in ${run.tasks.categories.length} categories`],
      ['repeat', String(run.repeat)],
      ['max tokens', run.maxTokens === null ? 'per task' : String(run.maxTokens)],
      ['sampling', run.temperature === 0 ? 'greedy' : `temperature ${run.temperature}, seed ${run.seed}`],
      ['warm-up rounds', String(run.warmupRounds)],
      ...(run.cancelled ? [['cancelled', `yes: ${report.requests.length} requests completed`]] : []),
    ],
  };
}

export function environmentTable(report: Report): Table {
  const e = report.environment;
  const rows: string[][] = [
    ['OS', `${e.os.platform} ${e.os.release} (${e.os.arch})`],
    ['CPU', `${e.cpu.model}, ${e.cpu.logicalCores} logical cores`],
    ['memory', bytes(e.memoryBytes)],
    ['GPU', e.gpus.length ? e.gpus.map((g) => `${g.description || g.name} (${bytes(g.memoryBytes)})`).join('; ') : 'none'],
    ['GPU driver', e.gpuDriver ?? '-'],
    [
      'backend',
      e.backend
        ? `${e.backend.device} (${e.backend.kind}, addon flavour ${e.backend.flavour})${e.backend.note ? `; ${e.backend.note}` : ''}`
        : 'not recorded',
    ],
    ['llama.cpp', e.llamaCppRelease],
    ['Power', e.powerVersion],
    ['Node.js', e.nodeVersion],
  ];
  for (const m of e.models) {
    rows.push([
      `${m.role} model`,
      `${m.name}: ${bytes(m.sizeBytes)}, ${m.architecture}, ${m.quantization}, ${(m.parameters / 1e6).toFixed(1)} M parameters, sha256 ${m.sha256 ?? 'not computed yet'}`,
    ]);
  }
  const s = e.settings;
  rows.push([
    'settings',
    s
      ? `GPU layers ${s.gpuLayers ?? '-'}, Flash Attention ${s.flashAttn}, context ${s.contextSize}, threads ${s.threads}, batch ${s.batchSize}`
      : 'not recorded',
  ]);
  return { id: 'environment', title: 'Environment', headers: ['', ''], rows };
}

/** A column of a table with a row per item: its header, and its cell for an item. */
type Column<T> = readonly [header: string, cell: (item: T) => string];

/** A table with a row per item, its headers and its cells read off one list of columns so they stay in step. */
function itemTable<T>(id: string, title: string, columns: readonly Column<T>[], items: readonly T[]): Table {
  return {
    id,
    title,
    headers: columns.map(([header]) => header),
    rows: items.map((item) => columns.map(([, cell]) => cell(item))),
  };
}

/**
 * Outputs equal to the control's: "matches/requests" in a bench report (every request has its
 * control); in a chat report over the replies that had one, with those that had none counted.
 */
export function digestCell(report: Report, p: ProfileSummary): string {
  if (p.digestMatches === null) return 'control';
  if (report.kind !== 'power-chat-report') return `${p.digestMatches}/${p.requests}`;
  const own = report.requests.filter((r) => r.profile === p.name);
  const compared = own.filter((r) => r.matchesControl !== null).length;
  if (compared === 0) return 'no control';
  const without = own.length - compared;
  return `${p.digestMatches}/${compared}${without > 0 ? ` (${without} without control)` : ''}`;
}

function profileColumns(report: Report): Column<ProfileSummary>[] {
  return [
    ['profile', (p) => p.name],
    ['K/S', ks],
    ['requests', (p) => String(p.requests)],
    ['steady tok/s', (p) => median(p.steadyDecodeTokensPerSecond, 1)],
    ['p10', (p) => fixed(p.steadyDecodeTokensPerSecond?.p10, 1)],
    ['p90', (p) => fixed(p.steadyDecodeTokensPerSecond?.p90, 1)],
    ['speedup (ratio of medians)', (p) => (p.speedup ? ratio(p.speedup.steadyDecode.ratioOfMedians) : 'control')],
    ['speedup (median of task ratios)', (p) => (p.speedup ? ratio(p.speedup.steadyDecode.medianOfTaskRatios) : 'control')],
    ['request tok/s', (p) => median(p.requestTokensPerSecond, 1)],
    // over the pairs that prefilled alike only, as the JSON's speedup.request
    ['request speedup', requestSpeedupCell],
    ['TTFT ms', (p) => median(p.ttftMs, 1)],
    ['prefill tok/s', (p) => median(p.prefillTokensPerSecond, 1)],
    ['acceptance', (p) => (p.proposed > 0 ? percent(p.accepted / p.proposed) : '-')],
    ['mean accept len', (p) => median(p.meanAcceptanceLength, 2)],
    ['replays', (p) => String(p.replays)],
    ['digest = control', (p) => digestCell(report, p)],
  ];
}

export function profilesTable(report: Report): Table {
  return itemTable('profiles', 'Profiles (medians over tasks and repeats)', profileColumns(report), report.profiles);
}

export function acceptanceTable(report: Report): Table {
  const spec = report.profiles.filter((p) => p.k !== null);
  const width = spec.reduce((w, p) => Math.max(w, p.acceptancePerPosition.length), 0);
  return {
    id: 'acceptance',
    title: 'Acceptance per position (pooled over verify rounds)',
    headers: ['profile', ...Array.from({ length: width }, (_, i) => String(i + 1))],
    rows: spec.map((p) => [p.name, ...Array.from({ length: width }, (_, i) => percent(p.acceptancePerPosition[i]))]),
  };
}

export function categoryTable(report: Report): Table {
  const spec = report.profiles.filter((p) => p.k !== null);
  const categories = report.run.tasks.categories;
  return {
    id: 'categories',
    title: 'Steady-decode speedup per category (median of task ratios)',
    headers: ['category', ...spec.map((p) => p.name)],
    rows: categories.map((c) => [c, ...spec.map((p) => ratio(p.categories.find((x) => x.category === c)?.speedup))]),
  };
}

/** A chain's verify rounds by the member that drafted them, a row per member of each chain profile. */
export function membersTable(report: Report): Table {
  const rows = report.profiles.flatMap((p) =>
    (p.members ?? []).map((m) => [p.name, m.strategy, String(m.rounds), String(m.proposed), String(m.accepted), percent(m.acceptanceRate)]),
  );
  return {
    id: 'members',
    title: 'Chain members (verify rounds by the member that drafted them)',
    headers: ['profile', 'member', 'rounds', 'proposed', 'accepted', 'acceptance'],
    rows,
  };
}

/**
 * Where the drafts came from, for a drafter that tells (`suffix`: this request, a chat's earlier
 * turns included, or the model's store of earlier replies): a row per source of each profile, the
 * drafter's expected accepted tokens per round beside the actual ones.
 */
export function sourcesTable(report: Report): Table {
  const rows = report.profiles.flatMap((p) =>
    (p.sources ?? []).map((s) => [
      p.name,
      s.source,
      String(s.rounds),
      String(s.drafted),
      String(s.accepted),
      percent(s.drafted > 0 ? s.accepted / s.drafted : null),
      fixed(s.meanExpected, 2),
      fixed(s.meanAccepted, 2),
    ]),
  );
  return {
    id: 'sources',
    title: 'Draft sources (verify rounds by where the draft came from)',
    headers: ['profile', 'source', 'rounds', 'drafted', 'accepted', 'acceptance', 'expected/round', 'accepted/round'],
    rows,
  };
}

/** One part of a reply that thought, as a row of the thinking table. */
interface PartRow {
  request: RequestRecord;
  part: string;
  figures: PartFigures;
}

const PART_COLUMNS: readonly Column<PartRow>[] = [
  ['task', (r) => r.request.task],
  ['profile', (r) => r.request.profile],
  ['part', (r) => r.part],
  ['tokens', (r) => String(r.figures.tokens)],
  ['rounds', (r) => String(r.figures.rounds)],
  ['proposed', (r) => String(r.figures.proposed)],
  ['accepted', (r) => String(r.figures.accepted)],
  ['acceptance', (r) => percent(r.figures.acceptanceRate)],
  ['tokens/round', (r) => fixed(r.figures.tokensPerRound, 2)],
  ['time s', (r) => fixed(r.figures.ms === null ? null : r.figures.ms / 1000, 2)],
  ['tok/s', (r) => fixed(r.figures.tokensPerSecond, 1)],
];

/**
 * A chat's replies that thought, two rows each: the thinking (with "budget reached" where the
 * budget ended it) and the answer. No rows (and so no table) when no reply thought.
 */
export function thinkingTable(report: Report): Table {
  const rows: PartRow[] = [];
  report.chat?.replies.forEach((reply, i) => {
    const parts = reply.parts;
    if (!parts) return;
    const request = report.requests[i]!;
    const thinking = parts.forced ? 'thinking (budget reached)' : parts.done ? 'thinking' : 'thinking (not ended)';
    rows.push({ request, part: thinking, figures: parts.thinking }, { request, part: 'answer', figures: parts.answer });
  });
  return itemTable('thinking', 'Thinking vs answer (replies that thought)', PART_COLUMNS, rows);
}

const REQUEST_COLUMNS: readonly Column<RequestRecord>[] = [
  ['task', (r) => r.task],
  ['category', (r) => r.category],
  ['profile', (r) => r.profile],
  ['repeat', (r) => String(r.repeat + 1)],
  ['prompt tokens', (r) => String(r.promptTokens)],
  ['generated', (r) => String(r.generatedTokens)],
  ['TTFT ms', (r) => fixed(r.ttftMs, 1)],
  ['prefill tok/s', (r) => fixed(r.prefillTokensPerSecond, 1)],
  ['steady tok/s', (r) => fixed(r.steadyDecodeTokensPerSecond, 1)],
  ['request tok/s', (r) => fixed(r.requestTokensPerSecond, 1)],
  ['proposed', (r) => String(r.proposed)],
  ['accepted', (r) => String(r.accepted)],
  ['rounds', (r) => String(r.rounds)],
  ['acceptance', (r) => percent(r.acceptanceRate)],
  ['mean accept len', (r) => fixed(r.meanAcceptanceLength, 2)],
  ['replays', (r) => String(r.replays)],
  ['clamp', (r) => (r.clampedTo === null ? '-' : String(r.clampedTo))],
  ['digest', (r) => shortDigest(r.digest)],
  ['= control', (r) => yesNo(r.matchesControl)],
];

export function requestsTable(report: Report): Table {
  return itemTable('requests', 'Requests', REQUEST_COLUMNS, report.requests);
}

export function allTables(report: Report): Table[] {
  return [
    runTable(report),
    environmentTable(report),
    profilesTable(report),
    acceptanceTable(report),
    membersTable(report),
    sourcesTable(report),
    thinkingTable(report),
    categoryTable(report),
    requestsTable(report),
  ];
}
