// The model library: adding files and folders, the `power info` facts read from the header
// (checked against what llama.cpp reports), SHA-256 in the background, drafts with reasons,
// strategies, the memory estimate, and removal that never deletes a file.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';

import { EngineClient } from '../../app/engine/client.js';
import { MIB } from '../../app/engine/memory-estimate.js';
import { createPowerService } from '../../app/service/index.js';
import { SYNTHETIC_MODELS } from '../../tools/models/synthetic.js';
import { MOE_MODELS } from '../../tools/models/synthetic-moe.js';
import { MODELS_CACHE } from '../../app/paths.js';
import { makeBadFiles } from '../fixtures/models.js';
import { serviceForSuite } from '../fixtures/service.js';

describe('model library', () => {
  const f = serviceForSuite();

  test('a folder adds every GGUF in it, named by file name, with the facts llama.cpp reports', async () => {
    const names = Object.keys(f.models).sort();
    // the folder holds the synthetic set (F32 and the F16/Q8_0/Q4_0 models) and the MoE pair
    assert.deepEqual(names, [...Object.keys(SYNTHETIC_MODELS), ...Object.keys(MOE_MODELS)].sort());
    const engine = EngineClient.start();
    try {
      for (const entry of Object.values(f.models)) {
        const { modelId, info } = await engine.call('loadModel', { path: entry.path, gpuLayers: 0 });
        await engine.call('disposeModel', { modelId });
        const facts = entry.facts!;
        assert.deepEqual(
          {
            architecture: facts.architecture,
            fileType: facts.fileType,
            contextLength: facts.contextLength,
            layers: facts.layers,
            nextnLayers: facts.nextnLayers,
            recurrent: facts.recurrent,
            hybrid: facts.hybrid,
            vocabType: facts.vocabType,
            vocabSize: facts.vocabSize,
            chatTemplate: facts.chatTemplate,
            parameters: facts.parameters,
          },
          {
            architecture: info.architecture,
            fileType: info.fileType,
            contextLength: info.contextLength,
            layers: info.layers,
            nextnLayers: info.nextnLayers,
            recurrent: info.recurrent,
            hybrid: info.hybrid,
            vocabType: info.vocabType,
            vocabSize: info.vocabSize,
            chatTemplate: info.chatTemplate !== null,
            parameters: info.parameters,
          },
          entry.name,
        );
        assert.equal(entry.sizeBytes, (await stat(entry.path)).size);
      }
    } finally {
      await engine.close();
    }
  });

  test('SHA-256 is computed in the background and saved', async () => {
    for (let i = 0; i < 200; i++) {
      const { entries } = await f.service.models.list({});
      if (entries.every((e) => e.sha256.state !== 'pending')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const { entries } = await f.service.models.list({});
    for (const e of entries) {
      assert.equal(e.sha256.state, 'done', e.name);
      if (e.sha256.state === 'done')
        assert.equal(
          e.sha256.hex,
          createHash('sha256')
            .update(await readFile(e.path))
            .digest('hex'),
          e.name,
        );
    }
  });

  test('drafts come with the reason when incompatible; strategies follow the draft', async () => {
    const { service, models } = f;
    const { drafts } = await service.models.drafts({ targetId: models['target.gguf']!.id });
    const by = Object.fromEntries(drafts.map((d) => [d.name, d]));
    assert.equal(by['draft-close']!.compatible, true);
    assert.equal(by['draft-close']!.strategy, 'draft-model');
    assert.equal(by['draft-badvocab']!.compatible, false);
    assert.match(by['draft-badvocab']!.reason!, /vocabulary size differs/);
    assert.ok(!('target' in by));
    // artifacts name the strategy they serve, told apart as llama.cpp does
    assert.equal(by['eagle3-close']!.strategy, 'eagle3');
    assert.equal(by['dflash-close']!.strategy, 'dflash');
    assert.equal(by['dspark-close']!.strategy, 'dspark');
    assert.equal(by['dspark-close']!.compatible, true);
    assert.equal(by['eagle3-wrong-hidden']!.compatible, false);
    assert.match(by['eagle3-wrong-hidden']!.reason!, /target hidden size 96/);
    const plain = await service.models.strategies({ targetId: models['target.gguf']!.id });
    assert.equal(plain['draft-model'].available, false);
    assert.equal(plain.mtp.available, false);
    const withDraft = await service.models.strategies({ targetId: models['target.gguf']!.id, draftId: models['draft-close.gguf']!.id });
    assert.equal(withDraft['draft-model'].available, true);
    assert.equal((await service.models.strategies({ targetId: models['hybrid-mtp.gguf']!.id })).mtp.available, true);
  });

  test('the memory estimate has the KV llama.cpp allocates', async () => {
    const e = await f.service.models.estimate({ targetId: f.models['target.gguf']!.id, contextSize: 2048 });
    assert.equal(e.kv, 2 * MIB);
    assert.equal(e.contextSize, 2048);
    assert.match(e.description, /KV 2\.0 MiB at 2048 ctx/);
  });

  test('bad files are refused or skipped with the reason; duplicates are skipped', async () => {
    const bad = await makeBadFiles(join(f.dataDir, 'bad'));
    await assert.rejects(
      f.service.models.add({ path: bad.notGguf }),
      (e: { code: string; message: string }) => e.code === 'bad-input' && /not a GGUF/.test(e.message),
    );
    const folder = await f.service.models.add({ path: join(f.dataDir, 'bad') });
    assert.deepEqual(
      folder.added.map((a) => a.name),
      ['missing-tensor', 'duplicate-tokens'].sort(),
    );
    assert.equal(folder.skipped.length, 4);
    assert.ok(folder.skipped.every((s) => s.reason.length > 0));
    const again = await f.service.models.add({ path: MODELS_CACHE });
    assert.equal(again.added.length, 0);
    // every model is there already; the projectors beside swa-target.gguf and gemma4-target.gguf are no models
    const isProjector = (path: string) => /[\\/]mmproj-[^\\/]*\.gguf$/.test(path);
    const models = again.skipped.filter((s) => !isProjector(s.path));
    assert.ok(models.every((s) => s.reason === 'already in the library'));
    const projectors = again.skipped.filter((s) => isProjector(s.path));
    assert.deepEqual(projectors.map((s) => basename(s.path)).sort(), ['mmproj-gemma4-target.gguf', 'mmproj-swa-target.gguf']);
    for (const projector of projectors) assert.match(projector.reason, /is a multimodal projector \(clip\), not a chat model/);
  });

  test('a model lists the projector beside it and what it accepts; the estimate counts its weights', async () => {
    const swa = f.models['swa-target.gguf']!;
    assert.equal(swa.projector?.path, join(MODELS_CACHE, 'mmproj-swa-target.gguf'));
    assert.equal(swa.projector?.compatible, true);
    assert.deepEqual(swa.projector?.accepts, { image: true, audio: false });
    assert.equal(swa.projector?.tokensPerImage, 4);
    // mmproj-swa-target.gguf is swa-target's: the other 128-wide models get none
    assert.equal(f.models['target.gguf']!.projector, null);
    const e = await f.service.models.estimate({ targetId: swa.id, contextSize: 2048 });
    assert.equal(e.projector, swa.projector?.weightsBytes);
    assert.match(e.description, /projector 0\.1 MiB/);
    assert.equal((await f.service.models.estimate({ targetId: f.models['target.gguf']!.id })).projector, 0);
  });

  test('loading a file that llama.cpp cannot use is a bad-input error, even when it aborts llama.cpp', async () => {
    const { entries } = await f.service.models.list({});
    for (const name of ['missing-tensor', 'duplicate-tokens']) {
      const entry = entries.find((e) => e.name === name)!;
      await assert.rejects(
        f.service.engine.load({ modelId: entry.id, device: 'cpu' }),
        (e: { code: string; message: string }) => e.code === 'bad-input',
      );
    }
    assert.equal((await f.service.engine.state({})).status, 'unloaded');
  });

  test('removing an entry keeps the file; the library persists', async () => {
    const entry = f.models['draft-far.gguf']!;
    await f.service.models.remove({ modelId: entry.id });
    assert.ok((await stat(entry.path)).isFile(), 'the file is still there');
    await assert.rejects(f.service.models.get({ modelId: entry.id }), (e: { code: string }) => e.code === 'not-found');
    const reopened = await createPowerService({ dataDir: f.dataDir });
    const names = (await reopened.models.list({})).entries.map((e) => e.name);
    await reopened.close();
    assert.ok(!names.includes('draft-far'));
    assert.ok(names.includes('target'));
  });
});
