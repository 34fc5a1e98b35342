// FR, the compact draft projection, against the whole-vocabulary MTP head: the qwen35 hybrid on
// the real qwen35 vocabulary (REAL_VOCAB_MODELS' real-vocab-hybrid-mtp.gguf: 151,936 tokens,
// Q8_0, one NextN block), `--strategy mtp` with the whole head and with FR at each N of --fr,
// on the calibration tasks (bench/tasks/calibration.jsonl), greedy and seeded. Per run: the
// draft's time per round (propose, step 2), the acceptance rate and the steady decode rate
// against the autoregressive control; every run is checked to emit the control's tokens.
// Every configuration runs `--reps` times per task, back to back inside each repetition (the
// machine's drift cancels in the ratios); figures are medians.
//
//   node --import tsx bench/fr.ts [--reps 2] [--tokens 96] [--tasks 6] [--k 3] [--fr 8192,32768] [--threads 1] [--write]
//
// --write replaces bench/RESULTS-fr.md. Needs the built addon (build/addon-cpu) of an engine
// built from source: FR needs scripts/native/patches/llama-mtp-fr-vocab.patch.

import { SAMPLING_DEFAULTS, type RoundRecord, type SamplingOptions } from '../app/contract/engine-types.js';
import { loadTaskSet } from '../app/bench/tasks.js';
import { readBuildInfo } from '../app/engine/build-info.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { BENCH_MODELS_CACHE, ROOT } from '../app/paths.js';
import { makeModelFiles, REAL_VOCAB_MODELS } from '../tools/models/synthetic.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { fixed, percent, times } from './lib/format.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand, writeTail } from './lib/results.js';
import { medianOf, medianRatio } from './lib/stats.js';

const values = benchOptions({ reps: '2', tokens: '96', tasks: '6', k: '3', fr: '8192,32768', threads: '1' }, ['write']);
const { reps, tokens, tasks: taskCount, k, threads } = positiveIntegers(values, ['reps', 'tokens', 'tasks', 'k', 'threads']);
const FRS = String(values.fr)
  .split(',')
  .map((n) => Number(n));
if (FRS.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--fr takes comma-separated positive integers');

const RESULTS_FR_MD = `${ROOT}/bench/RESULTS-fr.md`;
const HEADING = '## FR against the whole head';
const CONTEXT = 1024;
const MODES: readonly (readonly [string, SamplingOptions])[] = [
  ['greedy', SAMPLING_DEFAULTS],
  ['seeded', { ...SAMPLING_DEFAULTS, temperature: 0.8, topK: 40, topP: 0.95, seed: 7 }],
];
// 0: the autoregressive control; -1: the whole head; N: FR at N
const ARMS = [0, -1, ...FRS] as const;
const armName = (arm: number) => (arm === 0 ? 'AR' : arm === -1 ? `mtp K${k}, whole head` : `mtp K${k}, FR ${arm.toLocaleString('en')}`);

interface Run {
  digest: string;
  steady: number | null;
  acceptance: number | null;
  /** µs per steady round in propose (step 2) */
  propose: number;
}

function proposeUs(rounds: readonly RoundRecord[]): number {
  const steady = rounds.slice(2);
  return steady.length ? steady.reduce((sum, r) => sum + r.proposeUs, 0) / steady.length : 0;
}

const { tasks } = await loadTaskSet('calibration');
const chosen = tasks.slice(0, taskCount);
const models = await makeModelFiles(BENCH_MODELS_CACHE, REAL_VOCAB_MODELS, { onLog: (l) => console.log(`  ${l}`) });
const engine = EngineClient.start();
const started = Date.now();
const loadAtStart = load1();
const runs = new Map<string, Run[]>(); // by `${mode} ${arm}`
try {
  const path = models['real-vocab-hybrid-mtp.gguf'];
  const control = (await engine.call('loadModel', { path, gpuLayers: 0 })).modelId;
  const mtp = (await engine.call('loadModel', { path, gpuLayers: 0, loadMtp: true })).modelId;
  const prompts = [];
  for (const task of chosen)
    prompts.push(await engine.call('tokenize', { modelId: control, text: task.prompt, addSpecial: true, parseSpecial: false }));
  for (let rep = 0; rep < reps; rep++) {
    for (const [mode, sampling] of MODES) {
      for (const arm of ARMS) {
        const { sessionId } = await engine.call('createSession', {
          modelId: arm === 0 ? control : mtp,
          contextSize: CONTEXT,
          threads,
          strategy: arm === 0 ? 'none' : 'mtp',
          k: arm === 0 ? 0 : k,
          s: arm === 0 ? 0 : k,
          ...(arm > 0 ? { frVocab: arm } : {}),
        });
        try {
          for (const [i, prompt] of prompts.entries()) {
            const seeded = { ...sampling, seed: sampling.seed + i };
            const r = await runRequest(engine, { sessionId, prompt, maxTokens: tokens, sampling: seeded });
            // the request's own evidence: its rate after the warm-up rounds
            const steady = r.stats.steadyDecodeTokensPerSecond;
            const run = { digest: r.digest, steady, acceptance: r.stats.acceptanceRate, propose: proposeUs(r.rounds) };
            runs.set(`${mode} ${arm}`, [...(runs.get(`${mode} ${arm}`) ?? []), run]);
          }
        } finally {
          await engine.call('disposeSession', { sessionId });
        }
      }
    }
    console.log(`repetition ${rep + 1}/${reps} done (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
} finally {
  await engine.close();
}

const rows: string[] = [];
for (const [mode] of MODES) {
  const ar = runs.get(`${mode} 0`)!;
  const whole = runs.get(`${mode} -1`)!;
  for (const arm of ARMS.slice(1)) {
    const rs = runs.get(`${mode} ${arm}`)!;
    const exact = rs.every((r, i) => r.digest === ar[i]!.digest) ? 'yes' : 'no';
    rows.push(
      `| ${mode} | ${armName(arm)} | ${fixed((medianOf(rs.map((r) => r.propose)) ?? 0) / 1000, 3)} | ` +
        `${arm === -1 ? '1.00×' : times(medianRatio(rs.map((r, i) => [r.propose, whole[i]!.propose] as const)))} | ` +
        `${percent(medianOf(rs.map((r) => r.acceptance)))} | ${fixed(medianOf(rs.map((r) => r.steady)), 1)} | ` +
        `${times(medianRatio(rs.map((r, i) => [r.steady, ar[i]!.steady] as const)))} | ${exact} |`,
    );
  }
}

const info = readBuildInfo('cpu');
const md = [
  `${HEADING} (bench/fr.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end (a shared machine); flavour cpu ` +
    `(llama.cpp ${info.llamaCppRelease}); ${threads} thread${threads === 1 ? '' : 's'}; context ${CONTEXT}; the first ${chosen.length} ` +
    `calibration tasks × ${tokens} tokens; ${reps} repetitions; medians over repetitions × tasks; run time ${((Date.now() - started) / 60000).toFixed(1)} min. ` +
    `Rerun: \`${benchCommand('fr', ['--reps', String(reps), '--tokens', String(tokens), '--tasks', String(chosen.length), '--k', String(k), '--fr', FRS.join(','), '--threads', String(threads), '--write'])}\`.`,
  '',
  'Propose: the draft step per steady round (ms), and against the whole head on the same task. Acceptance: accepted / proposed. ' +
    'Decode: `steadyDecodeTokensPerSecond`, and against the autoregressive control on the same task. "= AR": every run emitted the control\'s tokens.',
  '',
  `| sampling | run | propose ms | propose vs whole head | acceptance | decode tok/s | vs AR | = AR |`,
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
  'The model is synthetic (random weights on the real tokenizer): its head agrees with its trunk by chance, so the acceptance ' +
    'says how often that chance falls among the first N tokens, not what a trained head accepts on real text. The propose ' +
    'times are what FR is for: the head projects N rows of 151,936.',
  '',
].join('\n');
console.log(md);
const NEW_FILE = [
  '# Results: FR, the compact draft projection',
  '',
  'The MTP head drafting among the first N tokens of the vocabulary (docs/speculative-decoding.md, "FR: the compact draft projection"),',
  'against the whole head, on the real-vocabulary synthetic hybrid (REAL_VOCAB_MODELS in tools/models/synthetic.ts).',
  '',
  '',
].join('\n');
if (values.write) writeTail(RESULTS_FR_MD, HEADING, md, NEW_FILE);
