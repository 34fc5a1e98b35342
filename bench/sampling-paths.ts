// Backend against CPU sampling on the CPU (docs/exactness.md "Sampling paths"): decode tokens/s
// of the autoregressive control and of draft-model K7, each path, greedy and seeded, on the
// small-vocabulary pair and on the real 151,936-token vocabulary pair. Medians of --repeat runs,
// all in one run so the ratios compare like with like.
//   node --import tsx bench/sampling-paths.ts [--tokens 200] [--repeat 3]
import { parseArgs } from 'node:util';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../app/contract/engine-types.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { realVocabModels, syntheticModels } from '../test/fixtures/models.js';
import { medianOf } from './lib/stats.js';

const { values } = parseArgs({ options: { tokens: { type: 'string', default: '200' }, repeat: { type: 'string', default: '3' } } });
const TOKENS = Number(values.tokens);
const REPEAT = Number(values.repeat);
const SEEDED: SamplingOptions = { ...SAMPLING_DEFAULTS, temperature: 0.8, seed: 11, topK: 40, topP: 0.95, minP: 0.05 };

const synthetic = await syntheticModels();
const real = await realVocabModels();
const pairs = [
  { name: 'small vocabulary (target.gguf + draft-close.gguf)', target: synthetic['target.gguf'], draft: synthetic['draft-close.gguf'] },
  {
    name: 'real vocabulary, 151,936 tokens (real-vocab-target + real-vocab-draft)',
    target: real['real-vocab-target.gguf'],
    draft: real['real-vocab-draft.gguf'],
  },
];
const engine = EngineClient.start();
const prompt = Int32Array.from([1, 300, 301, 302, 303, 304]);
const lines: string[] = [];
try {
  for (const pair of pairs) {
    const target = (await engine.call('loadModel', { path: pair.target, gpuLayers: 0 })).modelId;
    const draft = (await engine.call('loadModel', { path: pair.draft, gpuLayers: 0 })).modelId;
    lines.push(`\n${pair.name}, ${TOKENS} tokens, median of ${REPEAT}`);
    lines.push('| run | sampling | cpu tok/s | backend tok/s | backend / cpu | host time per round, cpu → backend (µs) |');
    lines.push('|---|---|---|---|---|---|');
    for (const [label, strategy, k] of [
      ['AR', 'none', 0],
      ['draft K7', 'draft-model', 7],
    ] as const) {
      for (const [mode, sampling] of [
        ['greedy', SAMPLING_DEFAULTS],
        ['seeded', SEEDED],
      ] as const) {
        const rate: Record<string, number> = {};
        const perRound: Record<string, number> = {};
        for (const path of ['cpu', 'backend'] as const) {
          const rates: number[] = [];
          const commits: number[] = [];
          for (let r = 0; r < REPEAT; r++) {
            const s = await engine.call('createSession', {
              modelId: target,
              contextSize: 1024,
              threads: 0,
              strategy,
              k,
              s: k,
              proposerSampling: path,
              ...(k > 0 ? { draftModelId: draft } : {}),
            });
            const out = await runRequest(engine, { sessionId: s.sessionId, prompt, maxTokens: TOKENS, sampling: { ...sampling, path } });
            await engine.call('disposeSession', { sessionId: s.sessionId });
            rates.push(out.stats.steadyDecodeTokensPerSecond ?? 0);
            // the sampling step of each round (commit time: rows sampled, state cut)
            commits.push(medianOf(out.rounds.map((round) => round.commitUs)) ?? 0);
          }
          rate[path] = medianOf(rates) ?? 0;
          perRound[path] = medianOf(commits) ?? 0;
        }
        lines.push(
          `| ${label} | ${mode} | ${rate.cpu!.toFixed(1)} | ${rate.backend!.toFixed(1)} | ${(rate.backend! / rate.cpu!).toFixed(2)}× | ${perRound.cpu!.toFixed(0)} → ${perRound.backend!.toFixed(0)} |`,
        );
      }
    }
    await engine.call('disposeModel', { modelId: draft });
    await engine.call('disposeModel', { modelId: target });
  }
} finally {
  await engine.close();
}
console.log(lines.join('\n'));
