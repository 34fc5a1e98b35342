// The two sampling paths against each other (docs/exactness.md "Sampling paths"): llama.cpp's
// backend samplers, run here on ggml's CPU backend (the same sampler graph a GPU runs), against
// our CPU sampling. Greedy must agree token for token on every kind of synthetic target; seeded
// runs are compared by `power audit --compare-sampling`'s comparison, and every difference must
// be explained (a greedy tie, or a draw within rounding of a boundary). The proposers' greedy
// drafting on the backend keeps the contract too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../../app/contract/engine-types.js';
import { EngineClient } from '../../app/engine/client.js';
import { compareSamplingPaths, type AuditRequest } from '../../app/service/audit.js';
import { runRequest } from '../../app/service/request.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { realVocabModels, syntheticModels } from '../fixtures/models.js';

const GREEDY: SamplingOptions = SAMPLING_DEFAULTS;
const SEEDED: SamplingOptions = { ...SAMPLING_DEFAULTS, temperature: 0.9, topK: 40, topP: 0.95, minP: 0.05 };
const PROMPT = Int32Array.from([1, 300, 301, 302, 303]);

describe('sampling paths', () => {
  let models: ModelSet;
  let realVocab: Awaited<ReturnType<typeof realVocabModels>>;
  let engine: EngineClient;
  const ids = new Map<string, string>();

  async function modelId(path: string, loadMtp = false): Promise<string> {
    const key = `${path} ${loadMtp}`;
    if (!ids.has(key)) ids.set(key, (await engine.call('loadModel', { path, gpuLayers: 0, loadMtp })).modelId);
    return ids.get(key)!;
  }

  function request(modelIdOf: string, extra: Partial<AuditRequest>): AuditRequest {
    return {
      modelId: modelIdOf,
      strategy: 'ngram',
      k: 3,
      s: 3,
      contextSize: 1024,
      threads: 1,
      prompt: PROMPT,
      maxTokens: 300,
      sampling: GREEDY,
      ...extra,
    };
  }

  before(async () => {
    models = await syntheticModels();
    realVocab = await realVocabModels();
    engine = EngineClient.start();
  });

  after(async () => {
    for (const id of ids.values()) await engine.call('disposeModel', { modelId: id });
    await engine.close();
  });

  for (const name of ['target.gguf', 'target-q4_0.gguf', 'hybrid-mtp.gguf', 'swa-target.gguf'] as const) {
    test(`${name}: greedy on the backend emits the CPU's tokens, autoregressive and speculative`, async () => {
      const id = await modelId(models[name]);
      for (const speculative of [false, true]) {
        const c = await compareSamplingPaths(engine, request(id, {}), speculative);
        assert.ok(c.identical, `first difference: ${JSON.stringify(c.firstDivergence)}`);
        assert.equal(c.cpu.sampling?.path, 'cpu');
        assert.equal(c.backend.sampling?.path, 'backend');
        assert.equal(c.cpu.tokens.length, 300);
      }
    });
  }

  test('seeded runs on the real 151,936-token vocabulary: every difference between the paths is explained', async () => {
    const id = await modelId(realVocab['real-vocab-target.gguf']);
    const summary: string[] = [];
    for (const seed of [1, 2, 3, 4]) {
      const c = await compareSamplingPaths(engine, request(id, { sampling: { ...SEEDED, seed }, maxTokens: 200 }), false);
      const d = c.firstDivergence;
      summary.push(d ? `seed ${seed}: token ${d.index} ${d.cause}` : `seed ${seed}: identical`);
      assert.notEqual(d?.cause, 'unexplained', `seed ${seed}: ${JSON.stringify(d)}`);
    }
    console.log(summary.join('\n'));
  });

  for (const [strategy, draft] of [
    ['draft-model', 'draft-close.gguf'],
    ['mtp', null],
  ] as const) {
    test(`${strategy} drafting greedily on the backend keeps the control's tokens`, async () => {
      const target = strategy === 'mtp' ? await modelId(models['hybrid-mtp.gguf'], true) : await modelId(models['target.gguf']);
      const draftId = draft ? await modelId(models[draft]) : null;
      const session = (k: number, proposerSampling: 'cpu' | 'backend') =>
        engine.call('createSession', {
          modelId: target,
          contextSize: 1024,
          threads: 1,
          strategy: k === 0 ? 'none' : strategy,
          k,
          s: k,
          proposerSampling,
          ...(draftId && k > 0 ? { draftModelId: draftId } : {}),
        });
      for (const sampling of [GREEDY, { ...SEEDED, seed: 5 }]) {
        const control = await session(0, 'cpu');
        const spec = await session(7, 'backend');
        const want = await runRequest(engine, { sessionId: control.sessionId, prompt: PROMPT, maxTokens: 300, sampling });
        const got = await runRequest(engine, { sessionId: spec.sessionId, prompt: PROMPT, maxTokens: 300, sampling });
        assert.deepEqual(got.tokens, want.tokens);
        assert.ok(got.stats.proposed > 0);
        await engine.call('disposeSession', { sessionId: control.sessionId });
        await engine.call('disposeSession', { sessionId: spec.sessionId });
      }
    });
  }

  test('an explicit backend path with penalties and proposals is refused with the reason; nothing runs', async () => {
    const id = await modelId(models['target.gguf']);
    const session = await engine.call('createSession', { modelId: id, contextSize: 256, threads: 1, strategy: 'ngram', k: 3, s: 3 });
    await assert.rejects(
      runRequest(engine, {
        sessionId: session.sessionId,
        prompt: PROMPT,
        maxTokens: 8,
        sampling: { ...GREEDY, repeatPenalty: 1.1, path: 'backend' },
      }),
      (e: Error & { code?: string }) => e.code === 'bad-input' && /penalties/.test(e.message),
    );
    // the session is still usable: auto falls back to the CPU and says why
    const ok = await runRequest(engine, {
      sessionId: session.sessionId,
      prompt: PROMPT,
      maxTokens: 8,
      sampling: { ...GREEDY, repeatPenalty: 1.1 },
    });
    assert.equal(ok.sampling?.path, 'cpu');
    assert.match(ok.sampling?.reason ?? '', /CPU/);
    await engine.call('disposeSession', { sessionId: session.sessionId });
  });
});
