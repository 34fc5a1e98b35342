// MTP on a TBQ4 artifact against the F32 model it was made from: hybrid-mtp-e256.gguf quantized
// with `power quantize --recipe tbq4`, then on each model the autoregressive control and
// `--strategy mtp` (K3 S3 and K7 S7), greedy, a few prompts of 300 tokens. Reports the median
// steady decode rate, the acceptance rate and whether every MTP run emitted the control's
// tokens. The two models run back to back per repetition (order alternating); the speed-up is
// taken per prompt and repetition against the same model's control, then the median.
//
//   node --import tsx bench/tbq4-mtp.ts [--reps N] [--tokens N] [--threads N] [--write]
//
// --threads (default 1): llama.cpp's threads; on a machine busy with other work, more threads
// than free cores make each run spin (minutes instead of seconds).
//
// --write appends the table to bench/RESULTS-cpu.md. Needs the built addon and dist/ (npm ci).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { MODELS_CACHE } from '../app/paths.js';
import { makeModels } from '../tools/models/synthetic.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { appendSection, benchCommand, RESULTS_CPU_MD } from './lib/results.js';
import { failer, powerSync, requireDist } from './lib/run.js';
import { medianOf, medianRatio } from './lib/stats.js';

const fail = failer('tbq4-mtp');
const values = benchOptions({ reps: '3', tokens: '300', threads: '1' }, ['write']);
const { reps, tokens, threads } = positiveIntegers(values, ['reps', 'tokens', 'threads'], fail);
requireDist(fail);

const PROMPTS = ['1,42', '1,300,301,302', '1,263,400,500,600,700'];
const PROFILES = [
  ['3', '3'],
  ['7', '7'],
] as const;

const models = await makeModels(MODELS_CACHE);
const dir = mkdtempSync(join(tmpdir(), 'power-tbq4-bench-'));
const f32 = models['hybrid-mtp-e256.gguf'];
const tbq4 = join(dir, 'hybrid-mtp-e256-tbq4.gguf');
const q = powerSync(['quantize', f32, tbq4, '--recipe', 'tbq4']);
if (q.status !== 0) fail(`power quantize failed: ${q.stderr}`);
console.log(q.stdout);

interface Run {
  decode: number | null;
  proposed: number;
  accepted: number;
  digest: string;
}

function generate(model: string, prompt: string, profile: readonly [string, string] | null): Run {
  const strategy = profile ? ['--strategy', 'mtp', '--k', profile[0], '--s', profile[1]] : ['--strategy', 'none'];
  const r = powerSync([
    'generate',
    '--json',
    '--device',
    'cpu',
    '--model',
    model,
    '--prompt-tokens',
    prompt,
    '--max-tokens',
    String(tokens),
    ...strategy,
  ]);
  if (r.status !== 0) fail(`power generate failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as {
    digest: string;
    stats: { steadyDecodeTokensPerSecond: number | null; proposed: number; accepted: number };
  };
  return { decode: out.stats.steadyDecodeTokensPerSecond, proposed: out.stats.proposed, accepted: out.stats.accepted, digest: out.digest };
}

const MODELS = { f32, tbq4 } as const;
type Name = keyof typeof MODELS;
// per model: the control's runs, and per profile its runs, in the same (prompt, repetition) order
const control: Record<Name, Run[]> = { f32: [], tbq4: [] };
const mtp: Record<Name, Run[][]> = { f32: PROFILES.map(() => []), tbq4: PROFILES.map(() => []) };
const started = Date.now();
const loadBefore = load1();
for (let i = 0; i < reps; i++) {
  const order: Name[] = i % 2 === 0 ? ['f32', 'tbq4'] : ['tbq4', 'f32'];
  for (const prompt of PROMPTS) {
    for (const name of order) {
      control[name].push(generate(MODELS[name], prompt, null));
      PROFILES.forEach((p, j) => mtp[name][j]!.push(generate(MODELS[name], prompt, p)));
    }
  }
  console.log(`repetition ${i + 1}/${reps} done`);
}
rmSync(dir, { recursive: true, force: true });

const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(1));
const rows: string[] = [];
for (const name of ['f32', 'tbq4'] as const) {
  const c = control[name];
  rows.push(`| ${name} | AR | ${fmt(medianOf(c.map((r) => r.decode)))} | - | - | - |`);
  PROFILES.forEach(([k, s], j) => {
    const runs = mtp[name][j]!;
    const proposed = runs.reduce((n, r) => n + r.proposed, 0);
    const accepted = runs.reduce((n, r) => n + r.accepted, 0);
    const exact = runs.every((r, n) => r.digest === c[n]!.digest) ? 'yes' : 'NO';
    const speedup = medianRatio(runs.map((r, n) => [r.decode, c[n]!.decode]));
    rows.push(
      `| ${name} | mtp K${k} S${s} | ${fmt(medianOf(runs.map((r) => r.decode)))} | ${((100 * accepted) / Math.max(1, proposed)).toFixed(1)} % | ` +
        `${speedup?.toFixed(2) ?? '-'} | ${exact} |`,
    );
  });
}
const table = [
  '',
  `## MTP on a TBQ4 artifact (bench/tbq4-mtp.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}; flavour cpu; \`hybrid-mtp-e256.gguf\` (F32) and its \`power quantize --recipe tbq4\` artifact; ` +
    `prompts ${PROMPTS.map((p) => `[${p}]`).join(', ')}, ${tokens} greedy tokens each, ${threads} thread(s); ${reps} repetitions, models alternating; ` +
    `medians; load average ${loadBefore.toFixed(1)} before, run time ${((Date.now() - started) / 60000).toFixed(1)} min. ` +
    'The machine is shared with other jobs: the rates are noisy, the acceptance and exactness are not. ' +
    `Rerun: \`${benchCommand('tbq4-mtp', [`--reps ${reps}`, `--threads ${threads}`])}\`.`,
  '"speed-up": MTP decode over the same model\'s AR decode per prompt and repetition, then the median. ' +
    '"= AR": every MTP run emitted the control\'s tokens (digest).',
  '',
  '| model | strategy | decode tok/s | accepted | speed-up | = AR |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
].join('\n');
console.log(table);
if (values.write) appendSection(RESULTS_CPU_MD, table);
