// The synthetic projector holds what llama.cpp's clip loader and its gemma3 graph require, with
// the shapes they use (names as clip-impl.h spells them: KEY_*, TN_*), read back from a written
// file. llama.cpp's tools are not built here, so this is the check that the file would load.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { readGgufInfo } from '../../app/gguf/reader.js';
import type { GgufInfo } from '../../app/gguf/types.js';
import { projectorFacts } from '../../app/models/projector.js';
import { writeGguf } from '../../tools/gguf/writer.js';
import { PROJECTOR_MODELS, SYNTHETIC_MODELS } from '../../tools/models/synthetic.js';
import { makeProjectorSpec } from '../../tools/models/synthetic-projector.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const { params } = PROJECTOR_MODELS['mmproj-swa-target.gguf'];
const tmp = suiteTempDir('power-mmproj-');

async function written(): Promise<GgufInfo> {
  const path = join(tmp(), 'mmproj-swa-target.gguf');
  await writeGguf(path, makeProjectorSpec(params));
  return readGgufInfo(path);
}

function meta(info: GgufInfo, key: string): unknown {
  const v = info.metadata.get(key);
  assert.ok(v, `${key} is missing`);
  return v.value;
}

function shape(info: GgufInfo, name: string): number[] {
  const t = info.tensors.find((x) => x.name === name);
  assert.ok(t, `tensor ${name} is missing`);
  return t.shape;
}

test('the synthetic projector declares every key clip.cpp load_hparams requires for a gemma3 vision projector', async () => {
  const info = await written();
  assert.equal(meta(info, 'general.architecture'), 'clip');
  assert.equal(meta(info, 'clip.projector_type'), 'gemma3'); // KEY_PROJ_TYPE
  assert.equal(meta(info, 'clip.has_vision_encoder'), true); // KEY_HAS_VISION_ENC: GGML_ASSERT(has_vision)
  // get_u32/get_f32 without `false`: required (KEY_N_EMBD, KEY_N_HEAD, KEY_N_FF, KEY_N_BLOCK, KEY_PROJ_DIM, KEY_LAYER_NORM_EPS)
  for (const key of [
    'embedding_length',
    'attention.head_count',
    'feed_forward_length',
    'block_count',
    'projection_dim',
    'attention.layer_norm_epsilon',
  ]) {
    assert.equal(typeof meta(info, `clip.vision.${key}`), 'number', key);
  }
  // KEY_IMAGE_SIZE, KEY_PATCH_SIZE; the sanity check wants 0 <= image_size <= 8192, 0 < patch_size < 65536
  const imageSize = meta(info, 'clip.vision.image_size') as number;
  const patchSize = meta(info, 'clip.vision.patch_size') as number;
  assert.ok(imageSize > 0 && imageSize <= 8192 && patchSize > 0 && patchSize < 65536);
  // KEY_IMAGE_MEAN / KEY_IMAGE_STD: "must have at least 3 elements"
  assert.ok((meta(info, 'clip.vision.image_mean') as number[]).length >= 3);
  assert.ok((meta(info, 'clip.vision.image_std') as number[]).length >= 3);
  // gemma3's n_merge is 4 unless KEY_PROJ_SCALE_FACTOR says otherwise; the avg-pool needs whole kernels
  assert.equal(info.metadata.has('clip.vision.projector.scale_factor'), false);
  assert.equal((imageSize / patchSize) % 4, 0);
});

test('the synthetic projector holds every tensor clip.cpp load_tensors and the siglip graph use for gemma3, with their shapes', async () => {
  const info = await written();
  const E = meta(info, 'clip.vision.embedding_length') as number;
  const F = meta(info, 'clip.vision.feed_forward_length') as number;
  const P = meta(info, 'clip.vision.patch_size') as number;
  const side = (meta(info, 'clip.vision.image_size') as number) / P;
  // TN_PATCH_EMBD: the kernel of build_inp's ggml_conv_2d (patch x patch x 3 channels -> E)
  assert.deepEqual(shape(info, 'v.patch_embd.weight'), [P, P, 3, E]);
  assert.deepEqual(shape(info, 'v.patch_embd.bias'), [E]); // TN_PATCH_BIAS
  // TN_POS_EMBD: added to the [E, n_patches] input by build_vit
  assert.deepEqual(shape(info, 'v.position_embd.weight'), [E, side * side]);
  const blocks = meta(info, 'clip.vision.block_count') as number;
  for (let il = 0; il < blocks; il++) {
    const b = `v.blk.${il}.`;
    // TN_ATTN_OUTPUT weight is required by the loader; Q, K, V are what build_vit multiplies by
    for (const m of ['attn_q', 'attn_k', 'attn_v', 'attn_out']) {
      assert.deepEqual(shape(info, `${b}${m}.weight`), [E, E], m);
      assert.deepEqual(shape(info, `${b}${m}.bias`), [E], m);
    }
    for (const n of ['ln1', 'ln2']) {
      assert.deepEqual(shape(info, `${b}${n}.weight`), [E]); // TN_LN_1, TN_LN_2
      assert.deepEqual(shape(info, `${b}${n}.bias`), [E]);
    }
    // TN_FFN_UP and TN_FFN_DOWN are required (no experts); ffn_down's ne0 != E, else the loader swaps them
    assert.deepEqual(shape(info, `${b}ffn_up.weight`), [E, F]);
    assert.deepEqual(shape(info, `${b}ffn_down.weight`), [F, E]);
    assert.notEqual(F, E);
  }
  // PROJECTOR_TYPE_GEMMA3: TN_MM_INP_PROJ and TN_MM_SOFT_EMB_N, both required
  assert.deepEqual(shape(info, 'mm.soft_emb_norm.weight'), [E]);
  // multiplied by its transpose against [E, tokens]; clip_n_mmproj_embd reads its ne[0]
  const width = shape(info, 'mm.input_projection.weight');
  assert.deepEqual(width, [SYNTHETIC_MODELS['swa-target.gguf'].params.embd, E]);
  // every tensor in the file is one of those (nothing the loader would ignore)
  const expected = 3 + blocks * 16 + 4;
  assert.equal(info.tensors.length, expected);
});

test("the synthetic projector's facts: gemma3, images of 64 pixels, 4 tokens each, 128-wide like swa-target", async () => {
  const facts = projectorFacts(await written());
  assert.ok(typeof facts !== 'string', String(facts));
  assert.equal(facts.projectorType, 'gemma3');
  assert.deepEqual(facts.accepts, { image: true, audio: false });
  // clip_n_output_tokens: (64 / 8)² patches pooled 4 x 4
  assert.equal(facts.tokensPerImage, 4);
  assert.equal(facts.outputWidth, SYNTHETIC_MODELS['swa-target.gguf'].params.embd);
});
