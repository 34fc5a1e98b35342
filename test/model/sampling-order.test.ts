// Step 4 where arithmetic cannot interfere: the same logit rows, sampled by the transaction's
// rule and by a plain autoregressive sampler, give the same tokens and leave the samplers'
// random state equal (same number of draws). A sampler that drew for a rejected suffix would
// leave a different state, and the probe would see it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import { EngineClient } from '../../app/engine/client.js';
import { syntheticModels } from '../fixtures/models.js';

const VOCAB = 882;

/** k + 1 rows of logits from a seeded PRNG, with a few plausible tokens per row. */
function rows(seed: number, n: number): Float32Array<ArrayBuffer> {
  let x = seed >>> 0;
  const rand = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const out = new Float32Array(n * VOCAB).fill(-20);
  for (let r = 0; r < n; r++) for (let j = 0; j < 6; j++) out[r * VOCAB + 300 + Math.floor(rand() * 200)] = rand() * 3;
  return out;
}

describe('sampling order', () => {
  let engine: EngineClient;
  let modelId: string;
  before(async () => {
    engine = EngineClient.start({ testHooks: true });
    modelId = (await engine.call('loadModel', { path: (await syntheticModels())['target.gguf'], gpuLayers: 0 })).modelId;
  });
  after(async () => {
    await engine.call('disposeModel', { modelId });
    await engine.close();
  });

  const stochastic: SamplingOptions = {
    temperature: 1,
    seed: 0,
    topK: 0,
    topP: 1,
    minP: 0,
    repeatPenalty: 1.05,
    repeatLastN: 64,
    presencePenalty: 0,
    frequencyPenalty: 0,
    path: 'cpu',
  };

  test('speculative order and autoregressive order pick the same tokens with the same draws', async () => {
    let mismatches = 0;
    let accepted = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const k = 1 + (seed % 7);
      const r = rows(seed, k + 1);
      // proposals: the row's argmax, so some are accepted and some are not
      const proposals = Int32Array.from({ length: k }, (_, i) => {
        const row = r.subarray(i * VOCAB, (i + 1) * VOCAB);
        return row.indexOf(Math.max(...row));
      });
      const out = await engine.call('samplingOrderCheck', {
        modelId,
        rows: r,
        proposals,
        sampling: { ...stochastic, seed },
        extraDraws: 0,
      });
      assert.deepEqual(out.spec, out.ar, `seed ${seed}`);
      assert.equal(out.probeSpec, out.probeAr, `seed ${seed}: the samplers drew a different number of times`);
      assert.ok(out.spec.length <= k + 1);
      accepted += out.accepted;
      if (out.spec.length < k + 1) mismatches++;
    }
    // the rows exercise both outcomes: early mismatches and accepted runs
    assert.ok(mismatches > 20 && accepted > 20, `${mismatches} mismatching rounds, ${accepted} accepted proposals`);
  });

  test('the probe notices one extra draw', async () => {
    let noticed = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const out = await engine.call('samplingOrderCheck', {
        modelId,
        rows: rows(seed, 4),
        proposals: Int32Array.of(1, 2, 3),
        sampling: { ...stochastic, seed },
        extraDraws: 1,
      });
      if (out.probeSpec !== out.probeAr) noticed++;
    }
    assert.ok(noticed > 25, `an extra draw changed the next draw in ${noticed}/50 cases`);
  });
});
