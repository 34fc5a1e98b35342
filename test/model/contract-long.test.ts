// The exactness contract past the boundaries the short contract never reaches: replies that run
// past 256, 512 and 1,024 positions (where ggml's CPU Flash Attention, as released, changed how
// it sums a one-row decode), a prompt that is prefilled in two batches, and a second chat turn
// that reuses the context of the first. Every strategy class (draft model, MTP on the hybrid with
// K7/S7 and K7/S6, ngram, an EAGLE-3 artifact) on F32 and F16, the sliding-window gemma3 target,
// and the F16 pair on which the divergence was first seen; Flash Attention on and off; greedy
// and seeded; two threads (a one-thread decode never took the split path).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import { LONG_MODELS, makeModelFiles, type ModelSet } from '../../tools/models/synthetic.js';
import { BENCH_MODELS_CACHE } from '../../app/paths.js';
import { assertSameAsControl, configLabel, type ContractConfig } from '../fixtures/contract.js';
import { GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

type ModelName = keyof ModelSet | keyof typeof LONG_MODELS;

interface Config extends ContractConfig<ModelName> {
  /** tokens of the first reply */
  reply: number;
}

const small = (c: Omit<Config, 'reply'>): Config => ({ ...c, reply: 1100 });
const CONFIGS: Config[] = [
  { target: 'long-f16-target.gguf', strategy: 'draft-model', draft: 'long-f16-draft.gguf', k: 4, s: 4, reply: 1000 },
  small({ target: 'target.gguf', strategy: 'draft-model', draft: 'draft-close.gguf', k: 4, s: 4 }),
  small({ target: 'target.gguf', strategy: 'ngram', k: 7, s: 7 }),
  small({ target: 'target.gguf', strategy: 'eagle3', draft: 'eagle3-close.gguf', k: 3, s: 3 }),
  small({ target: 'target-f16.gguf', strategy: 'draft-model', draft: 'draft-close-f16.gguf', k: 4, s: 4 }),
  small({ target: 'hybrid-mtp.gguf', strategy: 'mtp', k: 7, s: 7 }),
  small({ target: 'hybrid-mtp.gguf', strategy: 'mtp', k: 7, s: 6 }),
  small({ target: 'hybrid-mtp-f16.gguf', strategy: 'mtp', k: 7, s: 6 }),
  small({ target: 'swa-target.gguf', strategy: 'draft-model', draft: 'swa-draft-close.gguf', k: 7, s: 7 }),
  small({ target: 'swa-target.gguf', strategy: 'ngram', k: 7, s: 7 }),
  small({ target: 'swa-target-f16.gguf', strategy: 'draft-model', draft: 'swa-draft-close.gguf', k: 4, s: 4 }),
];

// untruncated, so that draws near a boundary happen often
const SEEDED: SamplingOptions = { ...GREEDY, temperature: 1.2, seed: 2, topK: 0, topP: 1, minP: 0 };

/** A deterministic prompt of n plain tokens of the synthetic vocabulary. */
function longPrompt(n: number): number[] {
  const ids = [1];
  let x = 777;
  while (ids.length < n) {
    x = (x * 1103515245 + 12345) % 2147483648;
    ids.push(262 + (x % 400));
  }
  return ids;
}

/** The three requests of a conversation, run in one session, in order. */
interface Steps {
  turn1: GenerationOutcome;
  turn2: GenerationOutcome;
  prompt600: GenerationOutcome;
}

const label = configLabel;

describe('exactness contract past 256, 512 and 1,024 positions', () => {
  let models: Record<ModelName, string>;
  let engine: EngineClient;
  const modelIds = new Map<string, string>();
  const controls = new Map<string, Steps>();

  async function modelId(name: ModelName): Promise<string> {
    if (!modelIds.has(name)) {
      const loaded = await engine.call('loadModel', { path: models[name], gpuLayers: 0, loadMtp: name.startsWith('hybrid-mtp') });
      modelIds.set(name, loaded.modelId);
    }
    return modelIds.get(name)!;
  }

  async function session(c: Config, strategy: Strategy, flashAttn: 'on' | 'off') {
    const speculative = strategy !== 'none';
    const created = await engine.call('createSession', {
      modelId: await modelId(c.target),
      contextSize: 2048,
      threads: 2,
      flashAttn,
      strategy,
      k: speculative ? c.k : 0,
      s: speculative ? c.s : 0,
      ...(speculative && c.draft ? { draftModelId: await modelId(c.draft) } : {}),
    });
    assert.equal(created.flashAttn, flashAttn, 'llama.cpp runs the Flash Attention setting asked for');
    return created.sessionId;
  }

  /** turn 1 (a short prompt, a long reply), turn 2 on the same context, then a 600-token prompt */
  async function conversation(c: Config, strategy: Strategy, flashAttn: 'on' | 'off', sampling: SamplingOptions): Promise<Steps> {
    const sessionId = await session(c, strategy, flashAttn);
    try {
      const first = [1, 300, 301, 302, 303];
      const turn1 = await runRequest(engine, { sessionId, prompt: Int32Array.from(first), maxTokens: c.reply, sampling });
      const second = [...first, ...turn1.tokens, 263, 400, 500];
      const turn2 = await runRequest(engine, {
        sessionId,
        prompt: Int32Array.from(second),
        maxTokens: 200,
        sampling: { ...sampling, seed: sampling.seed + 1 },
      });
      const prompt600 = await runRequest(engine, {
        sessionId,
        prompt: Int32Array.from(longPrompt(600)),
        maxTokens: 500,
        sampling: { ...sampling, seed: sampling.seed + 2 },
      });
      return { turn1, turn2, prompt600 };
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  }

  before(async () => {
    models = { ...(await syntheticModels()), ...(await makeModelFiles(BENCH_MODELS_CACHE, LONG_MODELS)) };
    engine = EngineClient.start();
  });

  after(async () => {
    for (const id of modelIds.values()) await engine.call('disposeModel', { modelId: id });
    const live = await engine.call('liveHandles', {});
    await engine.close();
    assert.deepEqual({ models: live.models, contexts: live.contexts }, { models: 0, contexts: 0 });
  });

  for (const flashAttn of ['on', 'off'] as const) {
    for (const [mode, sampling] of [
      ['greedy', GREEDY],
      ['seeded', SEEDED],
    ] as const) {
      for (const c of CONFIGS) {
        test(`Flash Attention ${flashAttn}, ${mode}: ${label(c)} emits the control's tokens`, async () => {
          const key = `${c.target} ${flashAttn} ${mode} ${c.reply}`;
          if (!controls.has(key)) controls.set(key, await conversation(c, 'none', flashAttn, sampling));
          const control = controls.get(key)!;
          const spec = await conversation(c, c.strategy, flashAttn, sampling);
          for (const step of ['turn1', 'turn2', 'prompt600'] as const) assertSameAsControl(spec[step], control[step], step);
          assert.equal(control.turn1.tokens.length, c.reply, 'the first reply runs to its length (past 1,024 positions)');
          assert.ok(spec.turn1.stats.proposed > 0, 'the proposer proposed');
        });
      }
    }

    test(`Flash Attention ${flashAttn}: a turn on a reused context equals the same turn prefilled from scratch`, async () => {
      // the chat A/B: the control of a later turn runs in a session of its own, which prefills
      // the whole conversation, while the speculative reply reused the context of the turns
      // before; prefill rows must equal the decode rows they replace
      for (const c of [CONFIGS[0]!, CONFIGS[8]!]) {
        const reused = controls.get(`${c.target} ${flashAttn} greedy ${c.reply}`) ?? (await conversation(c, 'none', flashAttn, GREEDY));
        const sessionId = await session(c, 'none', flashAttn);
        try {
          const second = [1, 300, 301, 302, 303, ...reused.turn1.tokens, 263, 400, 500];
          const fresh = await runRequest(engine, {
            sessionId,
            prompt: Int32Array.from(second),
            maxTokens: 200,
            sampling: { ...GREEDY, seed: 1 },
          });
          assert.equal(fresh.digest, reused.turn2.digest, `${c.target}: the fresh prefill changed the second turn`);
        } finally {
          await engine.call('disposeSession', { sessionId });
        }
      }
    });
  }
});
