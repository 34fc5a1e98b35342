// Acceptance of each n-gram strategy on the real model, per task category of the calibration
// set (bench/tasks/calibration.jsonl, one task per category): Gemma 3 270M Q4_K_M
// (scripts/install-real-model.mjs), Power's `ngram` and llama.cpp's n-gram families at one K,
// greedy, each task's prompt as raw text (the model is a base model without a template). Per
// task: the autoregressive control once, then every strategy on its own session; acceptance =
// accepted / proposed over the request's rounds, "rounds with proposals" the share of rounds
// that verified any. Every run must emit the control's tokens (column "= AR").
//
// With --part ar (or all, the default): Power autoregressive decode against the bare C-API loop
// (power-bench-loop, native/tools/bench_loop.cpp) on the same model, prompts and threads.
//
//   node --import tsx bench/real-ngram.ts [--part all|ngram|ar] [--tokens 64] [--k 7] [--threads 2] [--write]
//
// --write replaces its sections of bench/RESULTS-real.md. Needs the built addon (build/addon-cpu).
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';

import { SAMPLING_DEFAULTS } from '../app/contract/engine-types.js';
import { median, steadyDecodeTokensPerSecond } from '../app/contract/report/stats.js';
import type { Strategy } from '../app/contract/strategies.js';
import { readBuildInfo } from '../app/engine/build-info.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { ROOT } from '../app/paths.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand, RESULTS_REAL_MD, writeBetweenMarkers } from './lib/results.js';
import { run } from './lib/run.js';

const values = benchOptions({ tokens: '64', k: '7', threads: '2', part: 'all' }, ['write']);
if (!['all', 'ngram', 'ar'].includes(values.part)) throw new Error('--part must be all, ngram or ar');
const { tokens, k, threads } = positiveIntegers(values, ['tokens', 'k', 'threads']);

const MODEL = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');
const BEGIN = '<!-- real-ngram: begin -->';
const END = '<!-- real-ngram: end -->';
const STRATEGIES: readonly Strategy[] = ['ngram', 'ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache'];
const TASKS = readFileSync(join(ROOT, 'bench', 'tasks', 'calibration.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim().startsWith('{'))
  .map((l) => JSON.parse(l) as { id: string; category: string; prompt: string });

const started = Date.now();
const loadAtStart = load1();
const engine = EngineClient.start();
const modelId = (await engine.call('loadModel', { path: MODEL, gpuLayers: 0 })).modelId;
const session = async (strategy: Strategy) =>
  (await engine.call('createSession', { modelId, contextSize: 1024, threads, strategy, k: strategy === 'none' ? 0 : k, s: 0 })).sessionId;

if (values.part !== 'ar') {
  interface Cell {
    accepted: number;
    proposed: number;
    rounds: number;
    verifying: number;
    same: boolean;
  }
  const cells = new Map<string, Cell>(); // `${category}/${strategy}`
  const sessions = new Map<Strategy, string>();
  for (const s of ['none', ...STRATEGIES] as const) sessions.set(s, await session(s));
  for (const task of TASKS) {
    const prompt = await engine.call('tokenize', { modelId, text: task.prompt, addSpecial: true, parseSpecial: false });
    const control = await runRequest(engine, { sessionId: sessions.get('none')!, prompt, maxTokens: tokens, sampling: SAMPLING_DEFAULTS });
    for (const strategy of STRATEGIES) {
      const run = await runRequest(engine, { sessionId: sessions.get(strategy)!, prompt, maxTokens: tokens, sampling: SAMPLING_DEFAULTS });
      const proposed = run.rounds.reduce((n, r) => n + r.proposed, 0);
      const accepted = run.rounds.reduce((n, r) => n + r.accepted, 0);
      cells.set(`${task.category}/${strategy}`, {
        accepted,
        proposed,
        rounds: run.rounds.length,
        verifying: run.rounds.filter((r) => r.proposed > 0).length,
        same: run.digest === control.digest,
      });
    }
    console.error(`${task.category} done`);
  }
  for (const id of sessions.values()) await engine.call('disposeSession', { sessionId: id });

  const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(0)} %`);
  const rows = TASKS.map((t) => {
    const cs = STRATEGIES.map((s) => cells.get(`${t.category}/${s}`)!);
    return `| ${t.category} | ${cs.map((c) => `${pct(c.accepted, c.proposed)} (${c.proposed})`).join(' | ')} |`;
  });
  const total = STRATEGIES.map((s) => {
    const cs = TASKS.map((t) => cells.get(`${t.category}/${s}`)!);
    const sum = (f: (c: Cell) => number) => cs.reduce((n, c) => n + f(c), 0);
    return {
      s,
      acc: pct(
        sum((c) => c.accepted),
        sum((c) => c.proposed),
      ),
      proposed: sum((c) => c.proposed),
      share: pct(
        sum((c) => c.verifying),
        sum((c) => c.rounds),
      ),
      same: cs.every((c) => c.same),
    };
  });
  const info = readBuildInfo('cpu');
  const md = [
    BEGIN,
    `## n-gram acceptance per category on the real model (bench/real-ngram.ts, ${isoSeconds()})`,
    '',
    `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end (a shared machine); flavour cpu ` +
      `(llama.cpp ${info.llamaCppRelease}); Gemma 3 270M Q4_K_M; ${threads} threads; context 1024; the 12 calibration tasks ` +
      `(bench/tasks/calibration.jsonl) as raw prompts; greedy; ${tokens} tokens per request; K${k}; one run; run time ` +
      `${((Date.now() - started) / 60000).toFixed(1)} min. Rerun: \`${benchCommand('real-ngram', ['--tokens', String(tokens), '--k', String(k), '--threads', String(threads), '--write'])}\`.`,
    '',
    "Acceptance: accepted / proposed tokens of the task's request, in brackets the proposed tokens (0: the strategy found nothing to propose).",
    '',
    `| category | ${STRATEGIES.join(' | ')} |`,
    `| --- | ${STRATEGIES.map(() => '---').join(' | ')} |`,
    ...rows,
    `| **all** | ${total.map((t) => `**${t.acc}** (${t.proposed})`).join(' | ')} |`,
    `| rounds with proposals | ${total.map((t) => t.share).join(' | ')} |`,
    `| = AR | ${total.map((t) => (t.same ? 'yes' : '**no**')).join(' | ')} |`,
    '',
    END,
  ].join('\n');
  console.log(md);
  if (values.write) writeBetweenMarkers(RESULTS_REAL_MD, BEGIN, END, md, '# Results: real vocabularies\n');
}

if (values.part !== 'ngram') {
  // Power AR against the bare C-API loop: the same prompt tokens, 128 tokens, three repetitions
  const AR_TOKENS = 128;
  const REPS = 3;
  const exe = join(ROOT, 'build', 'addon-cpu', 'power-bench-loop');
  const texts = TASKS.slice(0, 2).map((t) => t.prompt);
  const sessionId = await session('none');
  const rowsAr: string[] = [];
  const arStarted = Date.now();
  for (const [i, text] of texts.entries()) {
    const prompt = await engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false });
    const power: number[] = [];
    const bare: number[] = [];
    let same = true;
    for (let r = 0; r < REPS; r++) {
      const out = await runRequest(engine, { sessionId, prompt, maxTokens: AR_TOKENS, sampling: SAMPLING_DEFAULTS });
      power.push(
        steadyDecodeTokensPerSecond(
          out.rounds.map((r) => ({ emitted: r.tokens.length, endUs: r.endUs })),
          2,
        ) ?? 0,
      );
      const b = await run(exe, [MODEL, String(AR_TOKENS), '1024', [...prompt].join(','), String(threads), 'auto'], { cwd: dirname(exe) });
      if (b.code !== 0) throw new Error(`power-bench-loop failed (${b.code}): ${b.stderr.trim()}`);
      const j = JSON.parse(b.stdout) as { tokens: number[]; decodeTokensPerSecond: number };
      bare.push(j.decodeTokensPerSecond);
      same &&= j.tokens.join(',') === out.tokens.join(',');
    }
    const p = median(power) ?? 0;
    const q = median(bare) ?? 0;
    rowsAr.push(
      `| ${TASKS[i]!.category} (${prompt.length} tokens) | ${p.toFixed(1)} | ${q.toFixed(1)} | ${(p / q).toFixed(2)} | ${same ? 'yes' : '**no**'} |`,
    );
  }
  await engine.call('disposeSession', { sessionId });
  const BEGIN_AR = '<!-- real-ar: begin -->';
  const END_AR = '<!-- real-ar: end -->';
  const info = readBuildInfo('cpu');
  const mdAr = [
    BEGIN_AR,
    `## Power AR against the bare C-API loop on the real model (bench/real-ngram.ts --part ar, ${isoSeconds()})`,
    '',
    `${machineLine()}, load ${load1().toFixed(1)} at the end (a shared machine); flavour cpu (llama.cpp ${info.llamaCppRelease}); Gemma 3 270M Q4_K_M; ` +
      `${threads} threads; greedy; ${AR_TOKENS} tokens; ${REPS} repetitions, Power and the loop alternating; medians; run time ` +
      `${((Date.now() - arStarted) / 60000).toFixed(1)} min. Rerun: \`${benchCommand('real-ngram', ['--part', 'ar', '--threads', String(threads), '--write'])}\`.`,
    '',
    'Power: `steadyDecodeTokensPerSecond` of the request (after two warm-up rounds); the loop: its decode tok/s ' +
      '(power-bench-loop: one llama_decode per token and llama.cpp\'s greedy sampler, nothing else). "same tokens": both emitted the same 128 tokens.',
    '',
    '| prompt | Power AR tok/s | bare loop tok/s | Power / loop | same tokens |',
    '| --- | --- | --- | --- | --- |',
    ...rowsAr,
    '',
    END_AR,
  ].join('\n');
  console.log(mdAr);
  if (values.write) writeBetweenMarkers(RESULTS_REAL_MD, BEGIN_AR, END_AR, mdAr, '# Results: real vocabularies\n');
}
await engine.call('disposeModel', { modelId });
await engine.close();
