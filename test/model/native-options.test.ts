// One policy for the options the native addon takes (native/src/js_options.h): an absent option
// takes its default; a present one of the wrong type or out of range is refused with its name,
// never dropped. The engine protocol checks the same options first, so this calls the addon
// directly, as a host that skipped those checks would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { K_MAX } from '../../app/contract/profile.js';
import { loadBinding, type NativeBinding, type NativeModel } from '../../app/engine-host/binding.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { syntheticModels } from '../fixtures/models.js';

describe('native options: wrong types and ranges are refused by name', () => {
  let binding: NativeBinding;
  let models: ModelSet;
  let model: NativeModel;
  before(async () => {
    ({ binding } = loadBinding('cpu'));
    models = await syntheticModels();
    model = await binding.Model.load(models['target.gguf'], { gpuLayers: 0 });
  });
  after(() => model.dispose());

  const load = (options: Record<string, unknown>) => async () => binding.Model.load(models['target.gguf'], options as never);
  const create = (options: Record<string, unknown>) => async () => binding.Session.create(model, options as never);

  test('Model.load: each option of the wrong type or out of range', async () => {
    await assert.rejects(load({ gpuLayers: '10' }), { name: 'TypeError', message: 'gpuLayers must be a finite number' });
    await assert.rejects(load({ gpuLayers: 1.5 }), { name: 'RangeError', message: 'gpuLayers must be an integer in [-1, 100000]' });
    await assert.rejects(load({ loadMtp: 'yes' }), { name: 'TypeError', message: 'loadMtp must be a boolean' });
    await assert.rejects(load({ devices: 'CPU' }), { name: 'TypeError', message: 'devices must be an array' });
    await assert.rejects(load({ devices: [0] }), { name: 'TypeError', message: 'devices must hold strings (entry 0 is not one)' });
    await assert.rejects(load({ splitMode: 'rows' }), {
      name: 'RangeError',
      message: "splitMode must be 'layer', 'row' or 'none' (got 'rows')",
    });
    await assert.rejects(load({ mainGpu: -1 }), { name: 'RangeError', message: /^mainGpu must be an integer in \[0, \d+\]$/ });
    await assert.rejects(load({ tensorSplit: ['1'] }), {
      name: 'RangeError',
      message: 'tensorSplit entries must be finite and not negative',
    });
    await assert.rejects(load({ cpuMoe: 1 }), { name: 'TypeError', message: 'cpuMoe must be a boolean' });
    await assert.rejects(load({ nCpuMoe: -2 }), { name: 'RangeError', message: 'nCpuMoe must be an integer in [0, 100000]' });
    await assert.rejects(load({ onProgress: true }), { name: 'TypeError', message: 'onProgress must be a function' });
  });

  test('absent, undefined and null options take their defaults', async () => {
    const m = await binding.Model.load(models['target.gguf'], { gpuLayers: undefined, loadMtp: null, devices: undefined } as never);
    await m.dispose();
  });

  test('Session.create: strategy, Flash Attention and the proposer sampling path', async () => {
    await assert.rejects(create({ strategy: 5 }), { name: 'TypeError', message: 'strategy must be a string' });
    await assert.rejects(create({ flashAttn: true }), { name: 'TypeError', message: 'flashAttn must be a string' });
    await assert.rejects(create({ flashAttn: 'yes' }), {
      name: 'RangeError',
      message: "flashAttn must be 'on', 'off' or 'auto' (got 'yes')",
    });
    await assert.rejects(create({ proposerSampling: 'gpu' }), {
      name: 'RangeError',
      message: "proposerSampling must be 'cpu' or 'backend' (got 'gpu')",
    });
    await assert.rejects(create({ contextSize: '2048' }), { name: 'TypeError', message: 'contextSize must be a finite number' });
  });

  test('Session.create: p-min out of range and strategy lists that cannot run as a chain', async () => {
    await assert.rejects(create({ strategy: 'ngram', k: 3, pMin: 1.5 }), {
      name: 'RangeError',
      message: 'pMin must be a number in [0, 1]',
    });
    await assert.rejects(create({ strategy: 'ngram', k: 3, pMin: -0.1 }), {
      name: 'RangeError',
      message: 'pMin must be a number in [0, 1]',
    });
    await assert.rejects(create({ strategy: 'ngram', k: 3, pMin: 'high' }), { name: 'TypeError', message: 'pMin must be a finite number' });
    await assert.rejects(create({ strategy: 'ngram', k: 3, adaptiveK: 1 }), { name: 'TypeError', message: 'adaptiveK must be a boolean' });
    const refused = async (strategy: string, message: RegExp) => assert.rejects(create({ strategy, k: 3, contextSize: 256 }), { message });
    await refused('ngram,ngram', /strategy 'ngram' appears twice in the strategy list/);
    await refused('ngram,none', /'none' cannot be part of a strategy list/);
    await refused('ngram,', /the strategy list has an empty member/);
    await refused('ngram,warp', /strategy 'warp' is not implemented by this engine/);
    await refused('draft-model,eagle3', /at most one member of a strategy list may use the draft file/);
    await refused('ngram,mtp', /strategy 'mtp' needs a model with NextN\/MTP layers/);
    await refused('ngram,draft-model', /strategy 'draft-model' needs a draft Model/);
    const chain = await binding.Session.create(model, { strategy: 'ngram,ngram-mod', k: 3, contextSize: 256 } as never);
    assert.equal(chain.info().strategy, 'ngram,ngram-mod', 'a chain goes by its list');
    await chain.dispose();
  });

  test("Session.create: K reaches the contract's K_MAX and no further", async () => {
    await assert.rejects(create({ strategy: 'ngram', k: K_MAX + 1 }), {
      name: 'RangeError',
      message: `k must be an integer in [0, ${K_MAX}]`,
    });
    const session = await binding.Session.create(model, { strategy: 'ngram', k: K_MAX, contextSize: 256 } as never);
    await session.dispose();
  });
});
