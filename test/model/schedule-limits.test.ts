// The widest K/S schedule a small context can hold still emits exactly the autoregressive
// tokens, and the engine itself refuses a wider one (for every front door, not only the CLI's
// up-front check in app/runtime/spec-schedule.ts). One engine, models loaded once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { scheduleProblem } from '../../app/runtime/spec-schedule.js';
import { EngineCallError, EngineClient } from '../../app/engine/client.js';
import { runRequest } from '../../app/service/request.js';
import { syntheticModels } from '../fixtures/models.js';
import { GREEDY } from '../fixtures/engine-generate.js';

const PROMPT = Int32Array.from([1, 300, 301, 302]);
const CTX = 16;

describe('K and S at the edge of a 16-token context', () => {
  let engine: EngineClient;
  const ids: Record<'target' | 'draft' | 'hybrid' | 'hybridMtp', string> = { target: '', draft: '', hybrid: '', hybridMtp: '' };

  before(async () => {
    const models = await syntheticModels();
    engine = EngineClient.start();
    const load = async (path: string, loadMtp = false) => (await engine.call('loadModel', { path, gpuLayers: 0, loadMtp })).modelId;
    ids.target = await load(models['target.gguf']);
    ids.draft = await load(models['draft-close.gguf']);
    ids.hybrid = await load(models['hybrid-mtp.gguf']);
    ids.hybridMtp = await load(models['hybrid-mtp.gguf'], true);
  });
  after(() => engine.close());

  async function tokens(modelId: string, strategy: 'none' | 'ngram' | 'draft-model' | 'mtp', k: number, s: number): Promise<number[]> {
    const { sessionId } = await engine.call('createSession', {
      modelId,
      contextSize: CTX,
      threads: 1,
      strategy,
      k,
      s,
      ...(strategy === 'draft-model' ? { draftModelId: ids.draft } : {}),
    });
    try {
      return (await runRequest(engine, { sessionId, prompt: PROMPT, maxTokens: 12, sampling: GREEDY })).tokens;
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  }

  test('K = ctx - 1 (and S = ctx - 2 on the hybrid) emits the control tokens', async () => {
    assert.equal(scheduleProblem({ k: CTX - 1, s: CTX - 1, contextSize: CTX, batchSize: 512, recurrent: false }), null);
    const control = await tokens(ids.target, 'none', 0, 0);
    assert.deepEqual(await tokens(ids.target, 'ngram', CTX - 1, CTX - 1), control);
    assert.deepEqual(await tokens(ids.target, 'draft-model', CTX - 1, CTX - 1), control);
    assert.equal(scheduleProblem({ k: CTX - 1, s: CTX - 2, contextSize: CTX, batchSize: 512, recurrent: true }), null);
    assert.deepEqual(await tokens(ids.hybridMtp, 'mtp', CTX - 1, CTX - 2), await tokens(ids.hybrid, 'none', 0, 0));
  });

  test('the engine refuses a verify block wider than the batch, and S that llama.cpp would assert on', async () => {
    const create = (modelId: string, strategy: 'ngram' | 'mtp', k: number, s: number) =>
      engine.call('createSession', { modelId, contextSize: CTX, threads: 1, strategy, k, s });
    await assert.rejects(
      create(ids.target, 'ngram', CTX, CTX),
      (e: unknown) => e instanceof EngineCallError && /K = 16 needs a verify batch of 17 rows but this context allows 16/.test(e.message),
    );
    await assert.rejects(
      create(ids.hybridMtp, 'mtp', CTX - 1, CTX - 1),
      /S = 15 needs batches of more than 16 rows but this context allows 16/,
    );
    // the engine is still alive and serves the next request
    assert.ok((await tokens(ids.target, 'none', 0, 0)).length > 0);
    assert.equal(engine.crash, null);
  });
});
