// One policy for the options the native addon takes (native/src/js_options.h): an absent option
// takes its default, the one the engine protocol gives (app/engine/protocol.ts); a present one of
// the wrong type or out of range is refused with its name, never dropped. The engine protocol
// checks the same options first, so this calls the addon directly, as a host that skipped those
// checks would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { K_MAX } from '../../app/contract/profile.js';
import { loadBinding, type NativeBinding, type NativeModel } from '../../app/engine-host/binding.js';
import { engineMethods } from '../../app/engine/protocol.js';
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

  // the three ways an option can be absent
  const absentAs = (keys: readonly string[]) =>
    [{}, Object.fromEntries(keys.map((k) => [k, undefined])), Object.fromEntries(keys.map((k) => [k, null]))] as Record<string, unknown>[];

  test("Model.load: absent, undefined and null options take the engine protocol's defaults", async () => {
    // the app's defaults (app/engine/protocol.ts) are what the addon applies: an mtp session
    // needs the NextN weights, which loadMtp loads; gpuLayers and devices place layers on GPUs,
    // which the CPU flavour has none of
    const defaults = engineMethods.loadModel.input.parse({ path: models['hybrid-mtp.gguf'] });
    const mtpSession = async (options: Record<string, unknown>) => {
      const m = await binding.Model.load(models['hybrid-mtp.gguf'], options as never);
      try {
        const session = await binding.Session.create(m, { strategy: 'mtp', k: 3, s: 2, contextSize: 256 } as never);
        await session.dispose();
        return 'opened';
      } catch (error) {
        return (error as Error).message;
      } finally {
        await m.dispose();
      }
    };
    const byDefault = await mtpSession({ loadMtp: defaults.loadMtp });
    const otherwise = await mtpSession({ loadMtp: !defaults.loadMtp });
    assert.notEqual(byDefault, otherwise, 'loadMtp shows in whether an mtp session opens');
    assert.match(defaults.loadMtp ? otherwise : byDefault, /strategy 'mtp' needs the model loaded with loadMtp: true/);
    for (const absent of absentAs(['gpuLayers', 'loadMtp', 'devices'])) {
      assert.equal(await mtpSession(absent), byDefault, `loadMtp ${JSON.stringify(absent)} is loadMtp: ${defaults.loadMtp}`);
    }
  });

  test("Session.create: absent, undefined and null options take the engine protocol's defaults", async () => {
    const d = engineMethods.createSession.input.parse({ modelId: 'm', contextSize: 1024 });
    const info = async (options: Record<string, unknown>) => {
      const session = await binding.Session.create(model, { contextSize: 1024, ...options } as never);
      try {
        return session.info();
      } finally {
        await session.dispose();
      }
    };
    const given = await info({ batchSize: d.batchSize, threads: d.threads, strategy: d.strategy, k: d.k, s: d.s, flashAttn: d.flashAttn });
    // the protocol's values, as the session reports them (threads 0: the engine's own count)
    assert.equal(given.batchSize, d.batchSize);
    assert.equal(given.strategy, d.strategy);
    assert.equal(given.k, d.k);
    assert.ok(given.threads >= 1, `threads ${given.threads}`);
    for (const absent of absentAs(['batchSize', 'threads', 'strategy', 'k', 's', 'flashAttn', 'pMin', 'adaptiveK', 'proposerSampling'])) {
      assert.deepEqual(await info(absent), given, JSON.stringify(absent));
    }
    // and a value given is not the default: the check can tell them apart
    assert.notDeepEqual(await info({ batchSize: d.batchSize / 2, threads: given.threads + 1, strategy: 'ngram', k: 3 }), given);
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
