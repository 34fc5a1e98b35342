// How far our `ngram` is from the best its matches allow, on the real model's own replies: Gemma
// 3 270M Q4_K_M (scripts/install-real-model.mjs), greedy, the four prompts of the server
// comparison (bench/lib/text-prompts.ts). Per prompt: the autoregressive reply, then `ngram` at K
// on a session of its own (it must emit the same tokens), then the reply replayed offline with the
// same match rule (the longest suffix of 4 down to 1 tokens, most recent occurrence) and a
// draft length known in advance: each round drafts exactly what will be accepted, so no verify
// row is wasted and no round is spent short. Time is modelled from the run's own verify passes
// (least squares of their time against their rows) and set against the run's.
//
//   node --import tsx bench/ngram-bound.ts [--tokens 256] [--k 64] [--threads 2] [--write]
//
// --write replaces its section of bench/RESULTS-real.md. Needs the built addon (build/addon-cpu).
import { join } from 'node:path';

import { SAMPLING_DEFAULTS } from '../app/contract/engine-types.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../app/service/request.js';
import { ROOT } from '../app/paths.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand, RESULTS_REAL_MD, writeBetweenMarkers } from './lib/results.js';
import { PROMPT_KINDS } from './lib/text-prompts.js';

const values = benchOptions({ tokens: '256', k: '64', threads: '2' }, ['write']);
const { tokens, k, threads } = positiveIntegers(values, ['tokens', 'k', 'threads']);
const MODEL = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');
const BEGIN = '<!-- ngram-bound: begin -->';
const END = '<!-- ngram-bound: end -->';

/** Where the continuation of the latest earlier occurrence of the longest suffix (4 down to 1 tokens) starts; -1: none. */
function matchFrom(seq: readonly number[]): number {
  const len = seq.length;
  for (let n = Math.min(4, len - 1); n >= 1; n--) {
    for (let start = len - n - 1; start >= 0; start--) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = seq[start + i] === seq[len - n + i];
      if (same) return start + n;
    }
  }
  return -1;
}

/** The reply replayed with drafts exactly as long as their accepted part. */
function bound(prompt: readonly number[], reply: readonly number[]): { rounds: number; accepted: number } {
  let pos = 1; // the first token comes from the prefill
  let rounds = 0;
  let accepted = 0;
  while (pos < reply.length) {
    const seq = [...prompt, ...reply.slice(0, pos)];
    const from = matchFrom(seq);
    let a = 0;
    if (from >= 0) while (a < k && pos + a < reply.length && from + a < seq.length && seq[from + a] === reply[pos + a]) a++;
    rounds++;
    accepted += a;
    pos += a + 1;
  }
  return { rounds, accepted };
}

/** Verify time ≈ fixed + perRow × rows over the run's rounds (µs). */
function verifyFit(run: GenerationOutcome): { fixed: number; perRow: number } {
  const pts = run.rounds.slice(1).map((r) => [r.proposed + 1, r.verifyUs] as const);
  const n = pts.length;
  const sx = pts.reduce((s, [x]) => s + x, 0);
  const sy = pts.reduce((s, [, y]) => s + y, 0);
  const sxx = pts.reduce((s, [x]) => s + x * x, 0);
  const sxy = pts.reduce((s, [x, y]) => s + x * y, 0);
  const perRow = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return { fixed: (sy - perRow * sx) / n, perRow };
}

const started = Date.now();
const loadAtStart = load1();
const engine = EngineClient.start();
const rows: string[] = [];
try {
  const modelId = (await engine.call('loadModel', { path: MODEL, gpuLayers: 0 })).modelId;
  const session = async (strategy: 'none' | 'ngram') =>
    (await engine.call('createSession', { modelId, contextSize: 2048, threads, strategy, k: strategy === 'none' ? 0 : k, s: 0 })).sessionId;
  const control = await session('none');
  const ngram = await session('ngram');
  for (const p of PROMPT_KINDS) {
    const prompt = await engine.call('tokenize', { modelId, text: p.text, addSpecial: true, parseSpecial: false });
    const want = await runRequest(engine, { sessionId: control, prompt, maxTokens: tokens, sampling: SAMPLING_DEFAULTS });
    const run = await runRequest(engine, { sessionId: ngram, prompt, maxTokens: tokens, sampling: SAMPLING_DEFAULTS });
    if (run.digest !== want.digest) throw new Error(`${p.kind}: ngram K${k} did not emit the control's tokens`);
    const { fixed, perRow } = verifyFit(run);
    const proposed = run.rounds.reduce((s, r) => s + r.proposed, 0);
    const accepted = run.rounds.reduce((s, r) => s + r.accepted, 0);
    const verifyMs = run.rounds.slice(1).reduce((s, r) => s + r.verifyUs, 0) / 1000;
    const best = bound([...prompt], want.tokens);
    const bestMs = (best.rounds * (fixed + perRow) + best.accepted * perRow) / 1000;
    rows.push(
      `| ${p.kind} | ${run.rounds.length - 1} | ${accepted} / ${proposed} | ${verifyMs.toFixed(0)} | ${best.rounds} | ${best.accepted} | ` +
        `${bestMs.toFixed(0)} | ${(verifyMs / bestMs).toFixed(2)}× | ${(fixed / 1000).toFixed(1)} + ${(perRow / 1000).toFixed(2)} |`,
    );
    console.log(rows.at(-1));
  }
} finally {
  await engine.close();
}

const md = [
  BEGIN,
  `## Our ngram against the best its matches allow (bench/ngram-bound.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end; Gemma 3 270M Q4_K_M; ${threads} threads; ` +
    `greedy; ${tokens} tokens; K${k}; run time ${((Date.now() - started) / 60_000).toFixed(1)} min. Rerun: \`${benchCommand('ngram-bound', ['--tokens', String(tokens), '--k', String(k), '--threads', String(threads), '--write'])}\`.`,
  '',
  "`ngram` K: the run (rounds after the prefill, accepted / proposed tokens, the verify passes' time). Bound: the same reply " +
    'replayed with our match rule and every draft exactly as long as its accepted part; its verify time from the fit of ' +
    "the run's own verify passes (fixed ms + ms per row). Run / bound: how much verify time a perfect draft length would save.",
  '',
  '| prompt | rounds | accepted / proposed | verify ms | bound rounds | bound accepted | bound verify ms | run / bound | fit ms |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  END,
].join('\n');
console.log('\n' + md);
if (values.write) writeBetweenMarkers(RESULTS_REAL_MD, BEGIN, END, md, '# Results: real vocabularies\n');
