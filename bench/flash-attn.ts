// Flash Attention on or off for the CPU engine: prefill and decode speed at 256, 1,024 and
// 4,096 positions, autoregressive and speculative. Three models:
//   - `long`: the LONG_MODELS pair (F16 llama, head size 64), draft-model K4, a prompt of
//     synthetic token ids;
//   - `h128`: the same with heads of 128 (LONG_H128_MODELS);
//   - `real`: Gemma 3 270M Q4_K_M (head size 256, one KV head for four), `ngram-mod` K64 (its
//     best strategy on repeated text), the article of bench/lib/text-prompts.ts repeated to length.
// Each position runs both settings back to back (order alternating per repetition); figures are
// medians over the repetitions and the on/off ratio is taken inside each pair (docs/exactness.md
// says what the default is and why).
//
//   node --import tsx bench/flash-attn.ts [--model long|h128|real] [--reps N] [--positions 256,1024,4096] [--decode N] [--write]
//
// --write appends the table to bench/RESULTS-cpu.md. Needs the built addon and dist/ (npm ci).

import { readBuildInfo } from '../app/engine/build-info.js';
import { existsSync } from 'node:fs';

import { LONG_H128_MODELS, LONG_MODELS, makeModelFiles } from '../tools/models/synthetic.js';
import { REAL_MODEL } from '../test/fixtures/real-model.js';
import { BENCH_MODELS_CACHE } from '../app/paths.js';
import { benchOptions } from './lib/args.js';
import { isoSeconds, machineLine } from './lib/machine.js';
import { appendSection, FLASH_ATTN_HEADING, RESULTS_CPU_MD } from './lib/results.js';
import { failer, powerSync, requireDist } from './lib/run.js';
import { ARTICLE } from './lib/text-prompts.js';
import { medianOf, medianRatio } from './lib/stats.js';

const values = benchOptions({ model: 'long', reps: '3', positions: '256,1024,4096', decode: '64' }, ['write']);
const reps = Number(values.reps);
const positions = values.positions.split(',').map(Number);
const decodeTokens = Number(values.decode);
const SETTINGS = ['on', 'off'] as const;
type Setting = (typeof SETTINGS)[number];

const fail = failer('flash-attn');
requireDist(fail);
if (values.model !== 'long' && values.model !== 'h128' && values.model !== 'real') fail('--model must be long, h128 or real');
const real = values.model === 'real';
const h128 = values.model === 'h128';
if (real && !existsSync(REAL_MODEL)) fail(`${REAL_MODEL} is missing: node scripts/install-real-model.mjs`);

const onLog = (l: string) => console.log(`  ${l}`);
/** the synthetic pair: target and draft */
const pair: { target: string; draft: string } | null = real
  ? null
  : h128
    ? await makeModelFiles(BENCH_MODELS_CACHE, LONG_H128_MODELS, { onLog }).then((m) => ({
        target: m['long-h128-f16-target.gguf'],
        draft: m['long-h128-f16-draft.gguf'],
      }))
    : await makeModelFiles(BENCH_MODELS_CACHE, LONG_MODELS, { onLog }).then((m) => ({
        target: m['long-f16-target.gguf'],
        draft: m['long-f16-draft.gguf'],
      }));

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

/** The article repeated to about n tokens (it runs at about 109 tokens a copy on Gemma 3's tokenizer). */
function articlePrompt(n: number): string {
  return ARTICLE.repeat(Math.max(1, Math.round(n / 109)));
}

interface Run {
  promptTokens: number;
  prefill: number;
  decode: number;
  digest: string;
}

function generate(fa: Setting, position: number, speculative: boolean): Run {
  // the reply ends at `position`: the prompt fills the rest
  const promptLength = Math.max(8, position - decodeTokens);
  const args = [
    'generate',
    '--model',
    pair?.target ?? REAL_MODEL,
    '--device',
    'cpu',
    ...(real ? ['--prompt', articlePrompt(promptLength), '--raw'] : ['--prompt-tokens', promptTokens(promptLength)]),
    '--max-tokens',
    String(decodeTokens),
    '--ctx',
    String(position + 256),
    '--flash-attn',
    fa,
    '--json',
    ...(!speculative
      ? []
      : pair
        ? ['--strategy', 'draft-model', '--draft', pair.draft, '--k', '4']
        : ['--strategy', 'ngram-mod', '--k', '64']),
  ];
  const r = powerSync(args);
  if (r.status !== 0) throw new Error(`power generate failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as {
    digest: string;
    stats: { promptTokens: number; prefillTokensPerSecond: number; steadyDecodeTokensPerSecond: number | null };
  };
  return {
    promptTokens: out.stats.promptTokens,
    prefill: out.stats.prefillTokensPerSecond,
    decode: out.stats.steadyDecodeTokensPerSecond ?? NaN,
    digest: out.digest,
  };
}

const fmt = (x: number | null) => (x === null || Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
/** on/off, per repetition, then the median */
const ratio = (pairs: [number, number][]) => medianRatio(pairs)?.toFixed(2) ?? '-';
const rows: string[] = [];
const started = Date.now();
for (const position of positions) {
  const runs: Record<Setting, { ar: Run[]; spec: Run[] }> = { on: { ar: [], spec: [] }, off: { ar: [], spec: [] } };
  const pairs = { prefill: [] as [number, number][], decode: [] as [number, number][], spec: [] as [number, number][] };
  for (let i = 0; i < reps; i++) {
    const order = i % 2 === 0 ? SETTINGS : ([...SETTINGS].reverse() as Setting[]);
    for (const fa of order) {
      runs[fa].ar.push(generate(fa, position, false));
      runs[fa].spec.push(generate(fa, position, true));
    }
    const on = { ar: runs.on.ar[i]!, spec: runs.on.spec[i]! };
    const off = { ar: runs.off.ar[i]!, spec: runs.off.spec[i]! };
    pairs.prefill.push([on.ar.prefill, off.ar.prefill]);
    pairs.decode.push([on.ar.decode, off.ar.decode]);
    pairs.spec.push([on.spec.decode, off.spec.decode]);
  }
  for (const fa of SETTINGS) {
    const r = runs[fa];
    const same = r.spec.every((k, j) => k.digest === r.ar[j]!.digest) ? 'yes' : 'no';
    rows.push(
      `| ${position} | ${medianOf(r.ar.map((x) => x.promptTokens))} | ${fa} | ${fmt(medianOf(r.ar.map((x) => x.prefill)))} | ${fmt(medianOf(r.ar.map((x) => x.decode)))} | ` +
        `${fmt(medianOf(r.spec.map((x) => x.decode)))} | ${same} | ` +
        (fa === 'on' ? `${ratio(pairs.prefill)} / ${ratio(pairs.decode)} / ${ratio(pairs.spec)}` : '') +
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
    (real
      ? 'Gemma 3 270M Q4_K_M (head size 256, 4 query heads per KV head; speculative: `ngram-mod` K64, the article repeated as the prompt); '
      : `\`${h128 ? 'LONG_H128_MODELS' : 'LONG_MODELS'}\` pair (F16 llama, 8 blocks, E=1024, ${h128 ? '8/2 heads of 128' : '16/4 heads of 64'}; speculative: draft-model K4, its first 2 blocks); `) +
    'default threads; ' +
    `${reps} repetitions, medians; run time ${((Date.now() - started) / 60000).toFixed(1)} min.`,
  `"position": where the reply ends (prompt = position − ${decodeTokens}${real ? ', about' : ''}, then ${decodeTokens} tokens). ` +
    '"spec = AR": the speculative run emitted the autoregressive tokens of its setting in every repetition. ' +
    'Ratios on/off per repetition, then the median.',
  '',
  '| position | prompt tokens | Flash Attention | prefill tok/s | AR decode tok/s | spec decode tok/s | spec = AR | on/off: prefill / AR / spec |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
].join('\n');
console.log(table);
if (values.write) appendSection(RESULTS_CPU_MD, table);
