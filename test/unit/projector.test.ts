// Multimodal projectors read from their headers (app/models/projector.ts): their facts as clip.cpp
// computes them, which projector beside a model pairs with it, refusals with the reason, the
// library's refusal to take one as a chat model, and the memory estimate that counts it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { describeEstimate, estimateMemory, estimateSplit, GIB, type SplitDevice } from '../../app/engine/memory-estimate.js';
import { gv, kv, type GgufModel } from '../../app/gguf/types.js';
import { checkModelFile, ModelFileError } from '../../app/models/check-file.js';
import { describeAccepts, pairProjector, projectorFacts, projectorFor, type ProjectorFacts } from '../../app/models/projector.js';
import { writeGguf } from '../../tools/gguf/writer.js';
import { makeLlamaModelSpec, PROJECTOR_MODELS, SYNTHETIC_MODELS } from '../../tools/models/synthetic.js';
import { makeProjectorSpec, type ProjectorParams } from '../../tools/models/synthetic-projector.js';
import { infoOfSpec, targetPlan } from '../fixtures/gguf-info.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const BASE: ProjectorParams = PROJECTOR_MODELS['mmproj-swa-target.gguf'].params;
const projector = (over: Partial<ProjectorParams> = {}): GgufModel => makeProjectorSpec({ ...BASE, ...over });
// a model's header: only its width matters to the pairing
const modelOf = (path: string, embd = 128) =>
  infoOfSpec(makeLlamaModelSpec({ ...SYNTHETIC_MODELS['target.gguf'].params, embd, heads: 4, kvHeads: 2 }), path);

function facts(spec: GgufModel): ProjectorFacts {
  const f = projectorFacts(infoOfSpec(spec, 'mmproj.gguf'));
  assert.ok(typeof f !== 'string', String(f));
  return f;
}

const withMeta = (spec: GgufModel, key: string, value: ReturnType<typeof gv.u32>): GgufModel => ({
  ...spec,
  metadata: [...spec.metadata.filter((e) => e.key !== key), kv(key, value)],
});

describe('projector facts', () => {
  test('gemma3 tokens per image: (image / patch)² pooled by n_merge², 4 unless clip.vision.projector.scale_factor says', () => {
    assert.equal(facts(projector()).tokensPerImage, 4); // (64/8)² / 16
    assert.equal(facts(projector({ imageSize: 128 })).tokensPerImage, 16); // (128/8)² / 16
    assert.equal(facts(withMeta(projector(), 'clip.vision.projector.scale_factor', gv.u32(2))).tokensPerImage, 16);
  });

  test('an mlp (llava) projector costs one token per patch and writes mm.2.weight ne1 wide; with tiles its cost varies', () => {
    const spec = withMeta(projector(), 'clip.projector_type', gv.str('mlp'));
    const mlp: GgufModel = {
      ...spec,
      tensors: [
        ...spec.tensors.filter((t) => !t.name.startsWith('mm.')),
        { name: 'mm.0.weight', shape: [32, 96], type: 'f32', data: () => new Float32Array(32 * 96) },
        { name: 'mm.2.weight', shape: [96, 96], type: 'f32', data: () => new Float32Array(96 * 96) },
      ],
    };
    const f = facts(mlp);
    assert.equal(f.tokensPerImage, 64);
    assert.equal(f.outputWidth, 96);
    const tiled = facts({ ...mlp, metadata: [...mlp.metadata, kv('clip.vision.image_grid_pinpoints', gv.i32s([336, 672]))] });
    assert.equal(tiled.tokensPerImage, null);
    assert.match(describeAccepts({ ...tiled, compatible: true }), /tokens per image depend on the image's size/);
  });

  test('a projector type whose cost depends on the image has no fixed token count', () => {
    assert.equal(facts(withMeta(projector(), 'clip.projector_type', gv.str('qwen2.5vl_merger'))).tokensPerImage, null);
  });

  test('a file that is not a clip projector, or declares no encoder, is refused with the reason', () => {
    assert.match(
      String(projectorFacts(modelOf('x.gguf'))),
      /not a multimodal projector \(general.architecture is 'llama', expected 'clip'\)/,
    );
    const none = withMeta(projector(), 'clip.has_vision_encoder', gv.bool(false));
    assert.match(String(projectorFacts(infoOfSpec(none))), /neither a vision nor an audio encoder/);
  });

  test('a projector pairs with a model of its output width; another width is refused with both widths', () => {
    const f = facts(projector({ textEmbd: 1152 }));
    const no = pairProjector(modelOf('m.gguf', 640), f);
    assert.equal(no.compatible, false);
    assert.equal(no.reason, "projector outputs 1152-wide embeddings; this model's are 640");
    assert.equal(pairProjector(modelOf('m.gguf', 1152), f).compatible, true);
  });
});

describe('the projector beside a model', () => {
  const tmp = suiteTempDir('power-projector-');
  let n = 0;
  const folder = async (files: Record<string, GgufModel | string>): Promise<string> => {
    const dir = join(tmp(), `case-${n++}`);
    await mkdir(dir);
    for (const [name, content] of Object.entries(files)) {
      if (typeof content === 'string') await writeFile(join(dir, name), content);
      else await writeGguf(join(dir, name), content);
    }
    return dir;
  };

  test('one projector of the model width pairs; of another width it is shown refused with the reason', async () => {
    const dir = await folder({ 'mmproj-vision.gguf': projector() });
    const p = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf')));
    assert.equal(p?.compatible, true);
    assert.equal(p?.path, join(dir, 'mmproj-vision.gguf'));
    const wide = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf'), 640));
    assert.equal(wide?.compatible, false);
    assert.equal(wide?.reason, "projector outputs 128-wide embeddings; this model's are 640");
  });

  test('with several, mmproj-X.gguf is the projector of X.gguf, fitting or not', async () => {
    const dir = await folder({ 'mmproj-a.gguf': projector(), 'mmproj-model.gguf': projector({ textEmbd: 96 }) });
    const p = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf')));
    assert.equal(p?.path, join(dir, 'mmproj-model.gguf'));
    assert.equal(p?.compatible, false);
    assert.match(p?.reason ?? '', /outputs 96-wide/);
  });

  test('with several and none named for the model, the first of its width pairs', async () => {
    const dir = await folder({ 'mmproj-a.gguf': projector({ textEmbd: 96 }), 'mmproj-b.gguf': projector() });
    const p = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf')));
    assert.equal(p?.path, join(dir, 'mmproj-b.gguf'));
    assert.equal(p?.compatible, true);
  });

  test("another model's projector (mmproj-Y.gguf beside Y.gguf) is not this model's, and a non-projector mmproj file is ignored", async () => {
    const dir = await folder({ 'mmproj-other.gguf': projector(), 'other.gguf': 'a model', 'mmproj-broken.gguf': 'not a GGUF' });
    assert.equal(await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf'))), null);
    const own = await projectorFor(join(dir, 'other.gguf'), modelOf(join(dir, 'other.gguf')));
    assert.equal(own?.compatible, true);
  });

  test('a FIFO or a folder named like a projector is passed over without blocking', async () => {
    const dir = await folder({ 'mmproj-b.gguf': projector() });
    execFileSync('mkfifo', [join(dir, 'mmproj-a.gguf')]);
    await mkdir(join(dir, 'mmproj-model.gguf'));
    const p = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf')));
    assert.equal(p?.path, join(dir, 'mmproj-b.gguf'));
  });

  test('a folder without projectors pairs nothing: the model accepts text', async () => {
    const dir = await folder({});
    const p = await projectorFor(join(dir, 'model.gguf'), modelOf(join(dir, 'model.gguf')));
    assert.equal(p, null);
    assert.equal(describeAccepts(p), 'text');
  });

  test('a projector is refused as a model, with what it is', async () => {
    const dir = await folder({ 'mmproj-model.gguf': projector() });
    await assert.rejects(
      checkModelFile(join(dir, 'mmproj-model.gguf'), ['llama', 'clip']),
      (e: Error) => e instanceof ModelFileError && /is a multimodal projector \(clip\), not a chat model/.test(e.message),
    );
  });
});

test("the memory estimate counts a paired projector's weights", () => {
  const info = infoOfSpec(projector());
  const bytes = info.tensors.reduce((a, t) => a + t.byteSize, 0);
  const without = estimateMemory(targetPlan());
  const withProjector = estimateMemory(targetPlan({ projector: info }));
  assert.equal(without.projector, 0);
  assert.equal(withProjector.projector, bytes);
  assert.equal(withProjector.total - without.total, bytes);
  assert.match(describeEstimate(withProjector, targetPlan()), /projector 0\.1 MiB/);
});

test('split over devices, the projector goes to the first one', () => {
  const info = infoOfSpec(projector());
  const bytes = info.tensors.reduce((a, t) => a + t.byteSize, 0);
  const dev = (name: string): SplitDevice => ({ name, description: name, freeBytes: 8 * GIB, remote: false, cuda: true });
  const shares = estimateSplit(targetPlan({ projector: info }), [dev('A'), dev('B')], { tensorSplit: [1, 1] });
  assert.deepEqual(
    shares.map((x) => [x.device?.name ?? 'host', x.projector]),
    [
      ['host', 0],
      ['A', bytes],
      ['B', 0],
    ],
  );
  const without = estimateSplit(targetPlan(), [dev('A'), dev('B')], { tensorSplit: [1, 1] });
  assert.equal(shares[1]!.total - without[1]!.total, bytes);
});
