// What a real vocabulary costs: the real-vocabulary pair (REAL_VOCAB_MODELS: the qwen35 BPE
// tokenizer, 151,936 tokens, Q8_0, E=128) against the small-vocabulary pair of the synthetic set
// (target.gguf / draft-close.gguf: 882 tokens, F32, E=128, the same blocks; and its Q8_0 twin
// target-q8_0.gguf / draft-close-q8_0.gguf, so that only the vocabulary differs). On each, in one run:
// Power autoregressive decode tok/s, draft-model K3 and K7 speed-up over it, and per-round
// timings from the round records (propose, verify, sample + commit, and what is left of the
// round's wall time: the host's own work), greedy and seeded. Every configuration runs `--reps`
// times per prompt, the pairs and configurations back to back inside each repetition (so the
// machine's drift cancels in the ratios); figures are medians (app/contract/report/stats.ts).
//
//   node --import tsx bench/real-vocab.ts [--reps 3] [--tokens 256] [--prompts 2] [--threads 1] [--write]
//
// --write replaces the benchmark section of bench/RESULTS-real.md. Needs the built addon
// (build/addon-cpu); the engine is driven directly (EngineClient, runRequest).

import { median, steadyDecodeTokensPerSecond } from '../app/contract/report/stats.js';
import type { RoundRecord, SamplingOptions } from '../app/contract/engine-types.js';
import { SAMPLING_DEFAULTS } from '../app/contract/engine-types.js';
import { readBuildInfo } from '../app/engine/build-info.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { BENCH_MODELS_CACHE, MODELS_CACHE, ROOT } from '../app/paths.js';
import { makeModelFiles, makeModels, REAL_VOCAB_MODELS } from '../tools/models/synthetic.js';
import { fixed, percent, times } from './lib/format.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { PROMPTS } from './lib/prompts.js';
import { benchCommand, writeBetweenMarkers } from './lib/results.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { medianOf, medianRatio } from './lib/stats.js';

const values = benchOptions({ reps: '3', tokens: '256', prompts: '2', threads: '1' }, ['write']);
const { reps, tokens, prompts: promptCount, threads } = positiveIntegers(values, ['reps', 'tokens', 'prompts', 'threads']);

const RESULTS_REAL_MD = `${ROOT}/bench/RESULTS-real.md`;
const HEADING = '## Real vocabulary against the small one';
const CONTEXT = 1024;
const KS = [3, 7] as const;
const MODES: readonly (readonly [string, SamplingOptions])[] = [
  ['greedy', SAMPLING_DEFAULTS],
  ['seeded', { ...SAMPLING_DEFAULTS, temperature: 0.8, topK: 40, topP: 0.95, seed: 7 }],
];
// the same English for both pairs: the small vocabulary's words (bench/lib/prompts.ts) are English too
const TEXTS = PROMPTS.slice(0, promptCount);

interface Pair {
  label: string;
  target: string;
  draft: string;
}

const small = await makeModels(MODELS_CACHE);
const real = await makeModelFiles(BENCH_MODELS_CACHE, REAL_VOCAB_MODELS, { onLog: (l) => console.log(`  ${l}`) });
const PAIRS: Pair[] = [
  { label: 'small vocabulary (882 tokens, F32)', target: small['target.gguf'], draft: small['draft-close.gguf'] },
  // the same with Q8_0 matrices, as the real-vocabulary pair has: only the vocabulary differs
  { label: 'small vocabulary (882 tokens, Q8_0)', target: small['target-q8_0.gguf'], draft: small['draft-close-q8_0.gguf'] },
  { label: 'real vocabulary (151,936 tokens, Q8_0)', target: real['real-vocab-target.gguf'], draft: real['real-vocab-draft.gguf'] },
];

/** What one request says: its steady rate, acceptance and the mean of each step per steady round (µs). */
interface Run {
  digest: string;
  steady: number | null;
  acceptance: number | null;
  wall: number;
  propose: number;
  verify: number;
  commit: number;
}

/** Per-round means over the steady rounds (after the two warm-up ones), as bench/speculative.ts's host overhead. */
function perRound(rounds: readonly RoundRecord[]): Pick<Run, 'wall' | 'propose' | 'verify' | 'commit'> {
  let wall = 0;
  let propose = 0;
  let verify = 0;
  let commit = 0;
  for (let i = 2; i < rounds.length; i++) {
    const r = rounds[i]!;
    wall += r.endUs - rounds[i - 1]!.endUs;
    propose += r.proposeUs;
    verify += r.verifyUs;
    commit += r.commitUs;
  }
  const n = Math.max(1, rounds.length - 2);
  return { wall: wall / n, propose: propose / n, verify: verify / n, commit: commit / n };
}

const engine = EngineClient.start();
const started = Date.now();
const loadAtStart = load1();
type Key = `${number} ${string} ${number}`; // pair, mode, k (0: AR)
const runs = new Map<Key, Run[]>();
try {
  const loaded = [];
  for (const pair of PAIRS) {
    const target = (await engine.call('loadModel', { path: pair.target, gpuLayers: 0 })).modelId;
    const draft = (await engine.call('loadModel', { path: pair.draft, gpuLayers: 0 })).modelId;
    const prompts = [];
    for (const text of TEXTS) prompts.push(await engine.call('tokenize', { modelId: target, text, addSpecial: true, parseSpecial: false }));
    loaded.push({ target, draft, prompts });
  }
  for (let rep = 0; rep < reps; rep++) {
    for (const [p, pair] of loaded.entries()) {
      for (const [mode, sampling] of MODES) {
        for (const k of [0, ...KS]) {
          const { sessionId } = await engine.call('createSession', {
            modelId: pair.target,
            contextSize: CONTEXT,
            threads,
            strategy: k === 0 ? 'none' : 'draft-model',
            k,
            s: k,
            ...(k > 0 ? { draftModelId: pair.draft } : {}),
          });
          try {
            for (const [i, prompt] of pair.prompts.entries()) {
              const r = await runRequest(engine, {
                sessionId,
                prompt,
                maxTokens: tokens,
                sampling: { ...sampling, seed: sampling.seed + i },
              });
              const timed = r.rounds.map((x) => ({ emitted: x.tokens.length, endUs: x.endUs }));
              const run: Run = {
                digest: r.digest,
                steady: steadyDecodeTokensPerSecond(timed, 2),
                acceptance: r.stats.acceptanceRate,
                ...perRound(r.rounds),
              };
              const key: Key = `${p} ${mode} ${k}`;
              runs.set(key, [...(runs.get(key) ?? []), run]);
            }
          } finally {
            await engine.call('disposeSession', { sessionId });
          }
        }
      }
    }
    console.log(`repetition ${rep + 1}/${reps} done (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  for (const pair of loaded) {
    await engine.call('disposeModel', { modelId: pair.target });
    await engine.call('disposeModel', { modelId: pair.draft });
  }
} finally {
  await engine.close();
}

const ms = (us: number | null) => fixed(us === null ? null : us / 1000, 3);
const rowsSpeed: string[] = [];
const rowsRound: string[] = [];
for (const [p, pair] of PAIRS.entries()) {
  for (const [mode] of MODES) {
    const ar = runs.get(`${p} ${mode} 0`)!;
    const spec = KS.map((k) => runs.get(`${p} ${mode} ${k}`)!);
    const exact = spec.every((s) => s.every((r, i) => r.digest === ar[i]!.digest)) ? 'yes' : 'no';
    rowsSpeed.push(
      `| ${pair.label} | ${mode} | ${fixed(medianOf(ar.map((r) => r.steady)), 1)} | ` +
        spec
          .map(
            (s) =>
              `${times(medianRatio(s.map((r, i) => [r.steady, ar[i]!.steady] as const)))} (${percent(medianOf(s.map((r) => r.acceptance)))})`,
          )
          .join(' | ') +
        ` | ${exact} |`,
    );
    for (const [k, rs] of [[0, ar], ...KS.map((k, j) => [k, spec[j]!] as const)] as const) {
      const m = (f: (r: Run) => number) => median(rs.map(f));
      const other = m((r) => r.wall - r.propose - r.verify - r.commit);
      rowsRound.push(
        `| ${pair.label} | ${mode} | ${k === 0 ? 'AR' : `K${k}`} | ${ms(m((r) => r.wall))} | ${ms(m((r) => r.propose))} | ${ms(m((r) => r.verify))} | ` +
          `${ms(m((r) => r.commit))} | ${ms(other)} (${percent(m((r) => (r.wall - r.propose - r.verify - r.commit) / r.wall))}) |`,
      );
    }
  }
}

const info = readBuildInfo('cpu');
const md = [
  `${HEADING} (bench/real-vocab.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end (a shared machine); flavour cpu ` +
    `(llama.cpp ${info.llamaCppRelease}); ${threads} thread${threads === 1 ? '' : 's'}; context ${CONTEXT}; ${TEXTS.length} English prompts × ${tokens} tokens; ` +
    `${reps} repetitions; medians over repetitions × prompts; run time ${((Date.now() - started) / 60000).toFixed(1)} min. ` +
    `Rerun: \`${benchCommand('real-vocab', ['--reps', String(reps), '--tokens', String(tokens), '--prompts', String(promptCount), '--threads', String(threads), '--write'])}\`.`,
  '',
  'Decode: `steadyDecodeTokensPerSecond` of each request (tokens after the two warm-up rounds / their time). ' +
    'Speed-up: draft-model K / AR per repetition and prompt, then the median; in brackets the acceptance rate. ' +
    '"= AR": every draft-model run emitted the autoregressive tokens.',
  '',
  '| pair | sampling | AR decode tok/s | K3 speed-up (acceptance) | K7 speed-up (acceptance) | = AR |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rowsSpeed,
  '',
  'Per steady round (means per request, then the median), ms: wall = end of the round to the end of the previous one; ' +
    'propose (step 2), verify (step 3: the target decode of K + 1 rows with every logits row), sample + commit (steps 4–5: the ' +
    "sampler over each row, up to 151,936 candidates); host = wall − the three, the engine's own work between steps " +
    '(checkpoint, round record and hand-over), with its share of the wall.',
  '',
  '| pair | sampling | run | wall | propose | verify | sample + commit | host (share) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rowsRound,
  '',
].join('\n');
console.log(md);
const NEW_FILE = [
  '# Results: real vocabularies',
  '',
  'The synthetic models on a real tokenizer (`REAL_VOCAB_MODELS` in tools/models/synthetic.ts, docs/testing.md):',
  'what a 151,936-token vocabulary costs a small model, measured against the small-vocabulary synthetic pair.',
  '',
  '',
].join('\n');
// between markers: the sections other benches put after this one stay
const BEGIN = '<!-- real-vocab: begin -->';
const END = '<!-- real-vocab: end -->';
if (values.write) writeBetweenMarkers(RESULTS_REAL_MD, BEGIN, END, `${BEGIN}\n${md.trimEnd()}\n${END}`, NEW_FILE);
