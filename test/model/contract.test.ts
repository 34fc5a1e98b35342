// The exactness contract (docs/exactness.md) over the strategy × K × S × sampling matrix
// (our proposers, and llama.cpp's own through libllama-common: eagle3, dflash, dspark, its n-gram families):
// every speculative run emits exactly the tokens of the autoregressive control with the same
// settings, and its counters are consistent. The full grid runs on the F32 models; the F16, Q8_0
// and Q4_0 models (llama.cpp's kernels of those types) run a representative grid: every
// strategy, K ∈ {1, 7}, S ∈ {K, K−1} on the hybrid, greedy and seeded. Every configuration runs on
// both sampling paths: the CPU's, and llama.cpp's backend samplers in the graph. Runs through one engine host with the models
// loaded once; each configuration gets a session of its own and the same prompts in the same
// order, so prefill batches match and only the verify passes differ from the control.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import { EngineClient } from '../../app/engine/client.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { cachedControl, configLabel, counterTotals, promptRunner, type ContractConfig } from '../fixtures/contract.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { disposeAndClose, GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

/** `length` tokens of `tokens` repeated */
function cycle(tokens: readonly number[], length: number): number[] {
  return Array.from({ length }, (_, i) => tokens[i % tokens.length]!);
}

const PROMPTS: number[][] = [
  // two prompts that make drafting certain where the short replies below never repeat enough: a
  // token cycle repeated and cut where the target's greedy next token is the cycle's own (found by
  // setting the cycle's token there to that prediction until it held). First, since llama.cpp's
  // ngram-cache adds to its cache only the history past the longest a session has seen, and the
  // seeds follow the order.
  // 13 tokens on the llama target, 82 in all: llama.cpp's ngram-simple drafts only after a
  // 12-token match followed by 12 more in over 61 tokens of history, and its other n-gram
  // families find the cycle from the first round, greedy and seeded
  [1, ...cycle([419, 756, 606, 436, 324, 727, 480, 326, 334, 791, 786, 565, 525], 81)],
  // 7 tokens on the hybrid (and its F16, Q8_0, Q4_0 copies): our ngram, seeing the cycle agree
  // with itself, drafts K tokens at once where it expects little, and the target rejects such a
  // draft whole: deeper than S, it replays
  [1, ...cycle([435, 479, 762, 559, 620, 496, 539], 44)],
  [1, 300, 301, 302, 303],
  [1, 263, 400, 500, 600, 700],
  [1, 42, 43, 44],
  [1, 500, 501, 500, 501, 500, 501],
  [1, 350, 360, 370, 380, 390, 400, 410],
  [1, 262, 263, 264],
  [1, 600, 610, 620, 600, 610, 620, 600],
  [1, 270, 280, 290, 300, 310],
];
const TOKENS = 64;

const STOCHASTIC: SamplingOptions = {
  temperature: 0.9,
  seed: 1234,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repeatPenalty: 1.1,
  repeatLastN: 64,
  presencePenalty: 0.1,
  frequencyPenalty: 0.1,
  path: 'cpu',
};
const GREEDY_BACKEND: SamplingOptions = { ...GREEDY, path: 'backend' };
// penalties run on the backend only without proposals (app/engine/sampling-path.ts): the seeded
// backend chain is top-k, top-p, min-p, temperature and the draw
const STOCHASTIC_BACKEND: SamplingOptions = {
  ...STOCHASTIC,
  repeatPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  path: 'backend',
};

type ModelName = keyof ModelSet;
type Config = ContractConfig<ModelName>;

function grid(target: ModelName, hybrid: ModelName, drafts: ModelName[], ks: number[]): Config[] {
  const out: Config[] = [];
  for (const k of ks) {
    out.push({ target, strategy: 'ngram', k, s: k });
    out.push({ target, strategy: 'suffix', k, s: k });
    for (const draft of drafts) out.push({ target, strategy: 'draft-model', draft, k, s: k });
    // recurrent target: S is the snapshot window; S = K - 1 exercises the guarded replay
    for (const s of [k, k - 1]) {
      out.push({ target: hybrid, strategy: 'ngram', k, s });
      out.push({ target: hybrid, strategy: 'suffix', k, s });
      out.push({ target: hybrid, strategy: 'mtp', k, s });
    }
  }
  return out;
}

/**
 * llama.cpp's own proposers (libllama-common): the draft artifacts that read the target's hidden
 * states, the close ones over the K grid and the far ones at one K, and llama.cpp's n-gram
 * families at one K; on the hybrid, the close ones at K3 with S ∈ {3, 2}.
 */
function llamaCppGrid(target: ModelName, hybrid: ModelName): Config[] {
  const out: Config[] = [];
  const close = [
    ['eagle3', 'eagle3-close.gguf'],
    ['dflash', 'dflash-close.gguf'],
    ['dspark', 'dspark-close.gguf'],
  ] as const;
  for (const k of [1, 3, 7]) for (const [strategy, draft] of close) out.push({ target, strategy, draft, k, s: k });
  out.push({ target, strategy: 'eagle3', draft: 'eagle3-far.gguf', k: 3, s: 3 });
  out.push({ target, strategy: 'dflash', draft: 'dflash-far.gguf', k: 3, s: 3 });
  for (const strategy of ['ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache'] as const) {
    out.push({ target, strategy, k: 3, s: 3 });
  }
  // the hybrid: llama.cpp runs the artifacts on a qwen35 target too; the ones made for it agree
  // often enough that rollbacks deeper than S (S = K - 1) really replay; DSpark has none of its
  // own, and the llama target's fits the hybrid's header (hidden 128, the same vocabulary)
  const hybridClose = [
    ['eagle3', 'hybrid-eagle3-close.gguf'],
    ['dflash', 'hybrid-dflash-close.gguf'],
    ['dspark', 'dspark-close.gguf'],
  ] as const;
  for (const [strategy, draft] of hybridClose) {
    for (const s of [3, 2]) out.push({ target: hybrid, strategy, draft, k: 3, s });
  }
  return out;
}

function configs(): Config[] {
  return [
    ...grid('target.gguf', 'hybrid-mtp.gguf', ['draft-same.gguf', 'draft-close.gguf', 'draft-far.gguf'], [1, 3, 7]),
    ...llamaCppGrid('target.gguf', 'hybrid-mtp.gguf'),
    ...(['f16', 'q8_0', 'q4_0'] as const).flatMap((t) =>
      grid(`target-${t}.gguf`, `hybrid-mtp-${t}.gguf`, [`draft-close-${t}.gguf`], [1, 7]),
    ),
  ];
}

const label = configLabel;

/**
 * Whether some proposals are certain to be accepted under every sampling mode over the prompts:
 * the proposer agrees with the target by construction (the identical and the close drafts, the
 * close artifacts built from that target's own weights, the hybrid's MTP head) and proposes more
 * than once per prompt (at S = 0 a request proposes until its first rejection only). Not the far
 * ones (random), DSpark's close artifact on the hybrid (the llama target's), nor prompt lookup,
 * which is accepted only where the reply repeats itself.
 */
function acceptanceCertain(c: Config): boolean {
  if (c.s === 0) return false;
  if (c.strategy === 'mtp') return true;
  if (c.draft === undefined || c.draft.endsWith('-far.gguf')) return false;
  return !c.target.startsWith('hybrid') || c.strategy === 'draft-model' || c.draft.startsWith('hybrid-');
}

describe('exactness contract', () => {
  let engine: EngineClient;
  const summary: string[] = [];

  const runner = promptRunner({
    engine: () => engine,
    paths: syntheticModels,
    load: () => ({ gpuLayers: 0 }),
    session: { contextSize: 256, threads: 1 },
    prompts: PROMPTS,
    maxTokens: TOKENS,
  });

  const runAll = runner.run;
  const control = cachedControl(runAll);

  before(async () => {
    engine = EngineClient.start();
  });

  after(async () => {
    console.log(`contract matrix (${PROMPTS.length} prompts × ${TOKENS} tokens each):\n${summary.join('\n')}`);
    await disposeAndClose(engine, runner.modelIds());
  });

  for (const c of configs()) {
    // every configuration on both sampling paths: the CPU's, and llama.cpp's backend samplers
    // (on ggml's CPU backend, the same sampler graph a GPU runs)
    const modes = [
      ['greedy', GREEDY],
      ['seeded', STOCHASTIC],
      ['greedy-backend', GREEDY_BACKEND],
      ['seeded-backend', STOCHASTIC_BACKEND],
    ] as const;
    for (const [mode, sampling] of modes) {
      test(`${label(c)} ${mode} emits the control's tokens`, async () => {
        const controlRuns = await control(c.target, mode, sampling);
        const runs = await runAll(c, sampling);
        // every configuration proposes (one that drafts nothing would compare the control with
        // itself); where the pair agrees by construction, some of it is accepted too
        assertDraftedSameAsControl(runs, controlRuns, { label: `${label(c)} ${mode}`, accepted: acceptanceCertain(c) });
        for (const run of runs) {
          const s = run.stats;
          assert.ok(s.accepted <= s.proposed);
          assert.ok(s.replays <= 1, 'at most one replay per request');
          if (s.clampedTo !== null) assert.equal(s.replays, 1, 'a clamp only after a replay');
          if (s.replays > 0) assert.equal(s.clampedTo, c.s);
          for (const r of run.rounds) {
            assert.ok(r.proposed <= c.k, 'never more proposals than K');
            assert.ok(r.accepted <= r.proposed);
            assert.ok(r.tokens.length <= r.accepted + 1);
          }
          // after the clamp every round proposes at most S
          const clampAt = run.rounds.findIndex((r) => r.replay);
          if (clampAt >= 0) for (const r of run.rounds.slice(clampAt + 1)) assert.ok(r.proposed <= c.s);
          // a recurrent target replays exactly the rounds that reject more proposals than its S
          // snapshots take back (the last round may end at an end-of-generation token, which keeps one more)
          if (c.target.startsWith('hybrid'))
            for (const r of run.rounds.slice(0, -1))
              assert.equal(r.replay, r.proposed - r.accepted > c.s, 'replay iff the rejected tail exceeds S');
        }
        const { proposed, accepted, replays } = counterTotals(runs);
        // the draft proposes its greedy choice, so under greedy sampling the identical draft always agrees
        if (c.draft === 'draft-same.gguf' && mode === 'greedy') assert.equal(accepted, proposed, 'the identical draft is always accepted');
        if (c.draft?.endsWith('-far.gguf') && mode === 'greedy')
          assert.ok(accepted / proposed < 0.05, 'the far draft is rejected on most rounds');
        // suffix drafts as deep as its odds and this session's measured row cost say, so whether
        // a draft deeper than S is rejected whole varies with the machine's timings
        if (c.s < c.k && mode === 'greedy' && c.strategy !== 'suffix')
          assert.ok(replays > 0, 'S < K triggers the guarded replay somewhere');
        summary.push(
          `  ${label(c).padEnd(62)} ${mode.padEnd(7)} identical ${runs.length}/${runs.length}` +
            `  acceptance ${(accepted / Math.max(1, proposed)).toFixed(3)}  replays ${replays}`,
        );
      });
    }
  }
});
