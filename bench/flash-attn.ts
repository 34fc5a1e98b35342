// Flash Attention on or off for the CPU engine: prefill and decode speed at 256, 1,024 and
// 4,096 positions, autoregressive and draft-model K4, on the LONG_MODELS pair. Each position runs
// both settings back to back (order alternating per repetition); figures are medians over the
// repetitions and the on/off ratio is taken inside each pair (docs/exactness.md says what the
// default is and why).
//
//   node --import tsx bench/flash-attn.ts [--reps N] [--positions 256,1024,4096] [--decode N] [--write]
//
// --write appends the table to bench/RESULTS-cpu.md. Needs the built addon and dist/ (npm ci).

import { readBuildInfo } from '../app/engine/build-info.js';
import { LONG_MODELS, makeModelFiles } from '../tools/models/synthetic.js';
import { BENCH_MODELS_CACHE } from '../app/paths.js';
import { benchOptions } from './lib/args.js';
import { isoSeconds, machineLine } from './lib/machine.js';
import { appendSection, FLASH_ATTN_HEADING, RESULTS_CPU_MD } from './lib/results.js';
import { failer, powerSync, requireDist } from './lib/run.js';
import { medianOf, medianRatio } from './lib/stats.js';

const values = benchOptions({ reps: '3', positions: '256,1024,4096', decode: '64' }, ['write']);
const reps = Number(values.reps);
const positions = values.positions.split(',').map(Number);
const decodeTokens = Number(values.decode);
const SETTINGS = ['on', 'off'] as const;
type Setting = (typeof SETTINGS)[number];

requireDist(failer('flash-attn'));

const models = await makeModelFiles(BENCH_MODELS_CACHE, LONG_MODELS, { onLog: (l) => console.log(`  ${l}`) });

/** A deterministic prompt of n token ids from the synthetic vocabulary's plain tokens. */
function promptTokens(n: number): string {
  const ids = [1];
  let x = 12345;
  while (ids.length < n) {
    x = (x * 1103515245 + 12345) % 2147483648;
    ids.push(262 + (x % 400));
  }
  return ids.join(',');
}

interface Run {
  prefill: number;
  decode: number;
  digest: string;
}

function generate(fa: Setting, position: number, speculative: boolean): Run {
  // the reply ends at `position`: the prompt fills the rest
  const prompt = promptTokens(Math.max(8, position - decodeTokens));
  const args = [
    'generate',
    '--model',
    models['long-f16-target.gguf'],
    '--device',
    'cpu',
    '--prompt-tokens',
    prompt,
    '--max-tokens',
    String(decodeTokens),
    '--ctx',
    String(position + 256),
    '--flash-attn',
    fa,
    '--json',
    ...(speculative ? ['--strategy', 'draft-model', '--draft', models['long-f16-draft.gguf'], '--k', '4'] : []),
  ];
  const r = powerSync(args);
  if (r.status !== 0) throw new Error(`power generate failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as {
    digest: string;
    stats: { prefillTokensPerSecond: number; steadyDecodeTokensPerSecond: number | null };
  };
  return { prefill: out.stats.prefillTokensPerSecond, decode: out.stats.steadyDecodeTokensPerSecond ?? NaN, digest: out.digest };
}

const fmt = (x: number | null) => (x === null || Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
/** on/off, per repetition, then the median */
const ratio = (pairs: [number, number][]) => medianRatio(pairs)?.toFixed(2) ?? '-';
const rows: string[] = [];
const started = Date.now();
for (const position of positions) {
  const runs: Record<Setting, { ar: Run[]; k4: Run[] }> = { on: { ar: [], k4: [] }, off: { ar: [], k4: [] } };
  const pairs = { prefill: [] as [number, number][], decode: [] as [number, number][], k4: [] as [number, number][] };
  for (let i = 0; i < reps; i++) {
    const order = i % 2 === 0 ? SETTINGS : ([...SETTINGS].reverse() as Setting[]);
    for (const fa of order) {
      runs[fa].ar.push(generate(fa, position, false));
      runs[fa].k4.push(generate(fa, position, true));
    }
    const on = { ar: runs.on.ar[i]!, k4: runs.on.k4[i]! };
    const off = { ar: runs.off.ar[i]!, k4: runs.off.k4[i]! };
    pairs.prefill.push([on.ar.prefill, off.ar.prefill]);
    pairs.decode.push([on.ar.decode, off.ar.decode]);
    pairs.k4.push([on.k4.decode, off.k4.decode]);
  }
  for (const fa of SETTINGS) {
    const r = runs[fa];
    const same = r.k4.every((k, j) => k.digest === r.ar[j]!.digest) ? 'yes' : 'no';
    rows.push(
      `| ${position} | ${fa} | ${fmt(medianOf(r.ar.map((x) => x.prefill)))} | ${fmt(medianOf(r.ar.map((x) => x.decode)))} | ` +
        `${fmt(medianOf(r.k4.map((x) => x.decode)))} | ${same} | ` +
        (fa === 'on' ? `${ratio(pairs.prefill)} / ${ratio(pairs.decode)} / ${ratio(pairs.k4)}` : '') +
        ' |',
    );
    console.log(rows.at(-1));
  }
}

const info = readBuildInfo('cpu');
const table = [
  '',
  `${FLASH_ATTN_HEADING} (bench/flash-attn.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}; flavour cpu ` +
    `(llama.cpp ${info.llamaCppRelease}, ${info.flashAttnBatchInvariant ? 'Flash Attention patched: one path for every row, scripts/native/patches' : 'ggml Flash Attention as released'}); ` +
    `\`LONG_MODELS\` pair (F16 llama, 8 blocks, E=1024; draft its first 2 blocks); default threads; ` +
    `${reps} repetitions, medians; run time ${((Date.now() - started) / 60000).toFixed(1)} min.`,
  `"position": where the reply ends (prompt = position − ${decodeTokens}, then ${decodeTokens} tokens). ` +
    '"K4 = AR": the draft-model K4 run emitted the autoregressive tokens in every repetition. ' +
    'Ratios on/off per repetition, then the median.',
  '',
  '| position | Flash Attention | prefill tok/s | AR decode tok/s | K4 decode tok/s | K4 = AR | on/off: prefill / AR / K4 |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
].join('\n');
console.log(table);
if (values.write) appendSection(RESULTS_CPU_MD, table);
