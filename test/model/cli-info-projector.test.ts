// `power info` and multimodal projectors: a projector file described on its own, the projector a
// model pairs with (what the model accepts, tokens per image), and --mmproj refused with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import type { ProjectorPairing } from '../../app/models/projector.js';
import { writeGguf } from '../../tools/gguf/writer.js';
import { makeProjectorModels, PROJECTOR_MODELS, type ModelSet } from '../../tools/models/synthetic.js';
import { makeProjectorSpec } from '../../tools/models/synthetic-projector.js';
import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';
import { MODELS_CACHE } from '../../app/paths.js';

interface ModelInfoJson {
  accepts: { text: boolean; image: boolean; audio: boolean };
  projector: ProjectorPairing | null;
}

describe('power info and projectors', () => {
  const tmp = suiteTempDir('power-info-mmproj-');
  let models: ModelSet;
  let mmproj: string;
  before(async () => {
    models = await syntheticModels();
    mmproj = (await makeProjectorModels(MODELS_CACHE))['mmproj-swa-target.gguf'];
  });

  test('describes a projector file: type, what it accepts, image and patch size, tokens per image, output width', () => {
    const json = jsonOf<Record<string, unknown>>(power(['info', mmproj, '--json']));
    assert.equal(json.kind, 'projector');
    assert.equal(json.projectorType, 'gemma3');
    assert.deepEqual(json.accepts, { image: true, audio: false });
    assert.equal(json.imageSize, 64);
    assert.equal(json.patchSize, 8);
    assert.equal(json.tokensPerImage, 4);
    assert.equal(json.outputWidth, 128);
    const text = power(['info', mmproj]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /\nkind {10}multimodal projector \(clip, gemma3 projector\): not a chat model\n/);
    assert.match(text.stdout, /\nimage {9}64x64 pixels in 8x8 patches: 4 tokens per image\n/);
  });

  test('a model with mmproj-<model>.gguf beside it accepts images through it, at its token cost', () => {
    const json = jsonOf<ModelInfoJson>(power(['info', models['swa-target.gguf'], '--json']));
    assert.deepEqual(json.accepts, { text: true, image: true, audio: false });
    assert.equal(json.projector?.path, mmproj);
    assert.equal(json.projector?.compatible, true);
    const text = power(['info', models['swa-target.gguf']]);
    assert.match(text.stdout, /\naccepts {7}text; image via mmproj-swa-target\.gguf \(gemma3 projector, 4 tokens per image\)\n/);
    assert.match(text.stdout, /\n {2}fits model {2}yes\n/);
  });

  test("another model's projector is not paired: the model accepts text", () => {
    const json = jsonOf<ModelInfoJson>(power(['info', models['target.gguf'], '--json']));
    assert.deepEqual(json.accepts, { text: true, image: false, audio: false });
    assert.equal(json.projector, null);
  });

  test('--mmproj checks a hand-picked projector: one of another width is refused with the reason', async () => {
    const wide = join(tmp(), 'mmproj-wide.gguf');
    await writeGguf(wide, makeProjectorSpec({ ...PROJECTOR_MODELS['mmproj-swa-target.gguf'].params, textEmbd: 96 }));
    const run = power(['info', models['target.gguf'], '--mmproj', wide]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /\naccepts {7}text \(mmproj-wide\.gguf does not fit: projector outputs 96-wide embeddings; this model's are 128\)\n/,
    );
    assert.match(run.stdout, /\n {2}fits model {2}no: projector outputs 96-wide embeddings; this model's are 128\n/);
    const fits = jsonOf<ModelInfoJson>(power(['info', models['target.gguf'], '--mmproj', mmproj, '--json']));
    assert.equal(fits.accepts.image, true);
  });

  test('--mmproj on a file that is no projector, and a projector given as the model with --draft, are refused', () => {
    const notProjector = power(['info', models['target.gguf'], '--mmproj', models['draft-far.gguf']]);
    assert.equal(notProjector.code, 2);
    assert.match(
      notProjector.stderr,
      /--mmproj .*draft-far\.gguf: not a multimodal projector \(general\.architecture is 'llama', expected 'clip'\)/,
    );
    const fifo = join(tmp(), 'mmproj.fifo');
    execFileSync('mkfifo', [fifo]);
    const blocked = power(['info', models['target.gguf'], '--mmproj', fifo]);
    assert.equal(blocked.code, 2);
    assert.match(blocked.stderr, /--mmproj .*mmproj\.fifo: not a file/);
    const asModel = power(['info', mmproj, '--draft', models['draft-far.gguf']]);
    assert.equal(asModel.code, 2);
    assert.match(asModel.stderr, /is a multimodal projector: --draft and --mmproj go with a model/);
    const generate = power(generateArgs(mmproj, 'hi'));
    assert.equal(generate.code, 2);
    assert.match(generate.stderr, /is a multimodal projector \(clip\), not a chat model/);
  });
});
