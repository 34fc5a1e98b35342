// A synthetic multimodal projector in llama.cpp's clip format (the `mmproj-*.gguf` its mtmd
// library loads beside a text model): a one-block SigLIP-style vision encoder and the Gemma 3
// projector (average pool of n_merge x n_merge patches, RMS norm, one matrix into the text
// model's embedding width). Gemma 3's is the projector with the fewest tensors of its own
// (mm.input_projection.weight and mm.soft_emb_norm.weight) whose output width is a free
// parameter, and its image cost is fixed: (image_size / patch_size)² / n_merge² tokens.
// Random weights drawn like the rest of the synthetic set (model seed + tensor name); what
// clip.cpp's loader requires of each tensor is checked in test/unit/synthetic-projector.test.ts.
import { gv, kv, type GgufEntry, type GgufModel, type GgufTensorSpec } from '../../app/gguf/types.js';
import { f32Tensor, type F32Init } from './synthetic-random.js';

export interface ProjectorParams {
  arch: 'clip';
  name: string;
  seed: number;
  /** clip.projector_type */
  projector: 'gemma3';
  /** the text model's embedding width: the projector's output (mm.input_projection.weight ne0) */
  textEmbd: number;
  /** the vision encoder's width, blocks, heads and FFN size */
  embd: number;
  layers: number;
  heads: number;
  ff: number;
  imageSize: number;
  patchSize: number;
}

/** llama_ftype ALL_F32: every tensor is F32 */
const ALL_F32 = 0;

export function makeProjectorSpec(p: ProjectorParams): GgufModel {
  const E = p.embd;
  const side = p.imageSize / p.patchSize;
  if (!Number.isInteger(side) || E % p.heads !== 0 || p.ff === E) {
    // ff = embd would make clip.cpp swap ffn_up and ffn_down (its fix for old exports)
    throw new RangeError(`bad projector layout for ${p.name}`);
  }
  const metadata: GgufEntry[] = [
    kv('general.architecture', gv.str('clip')),
    kv('general.name', gv.str(p.name)),
    kv('general.file_type', gv.u32(ALL_F32)),
    kv('general.alignment', gv.u32(32)),
    kv('clip.projector_type', gv.str(p.projector)),
    kv('clip.has_vision_encoder', gv.bool(true)),
    kv('clip.has_audio_encoder', gv.bool(false)),
    kv('clip.use_gelu', gv.bool(true)),
    kv('clip.vision.embedding_length', gv.u32(E)),
    kv('clip.vision.feed_forward_length', gv.u32(p.ff)),
    kv('clip.vision.block_count', gv.u32(p.layers)),
    kv('clip.vision.projection_dim', gv.u32(p.textEmbd)),
    kv('clip.vision.attention.head_count', gv.u32(p.heads)),
    kv('clip.vision.attention.layer_norm_epsilon', gv.f32(1e-6)),
    kv('clip.vision.image_size', gv.u32(p.imageSize)),
    kv('clip.vision.patch_size', gv.u32(p.patchSize)),
    kv('clip.vision.image_mean', gv.f32s([0.5, 0.5, 0.5])),
    kv('clip.vision.image_std', gv.f32s([0.5, 0.5, 0.5])),
  ];
  const tensors: GgufTensorSpec[] = [];
  const add = (name: string, shape: number[], init: F32Init): void => {
    tensors.push(f32Tensor(name, shape, init, p.seed));
  };
  const one = { value: 1 };
  const zero = { value: 0 };
  const w = { std: 1 / Math.sqrt(E) };
  // ggml order (ne0 first): the patch convolution's kernel is [patch, patch, channels, embd]
  add('v.patch_embd.weight', [p.patchSize, p.patchSize, 3, E], { std: 1 / Math.sqrt(3 * p.patchSize * p.patchSize) });
  add('v.patch_embd.bias', [E], zero);
  add('v.position_embd.weight', [E, side * side], { std: 0.02 });
  for (let i = 0; i < p.layers; i++) {
    const b = `v.blk.${i}.`;
    add(`${b}ln1.weight`, [E], one);
    add(`${b}ln1.bias`, [E], zero);
    for (const m of ['attn_q', 'attn_k', 'attn_v', 'attn_out']) {
      add(`${b}${m}.weight`, [E, E], w);
      add(`${b}${m}.bias`, [E], zero);
    }
    add(`${b}ln2.weight`, [E], one);
    add(`${b}ln2.bias`, [E], zero);
    add(`${b}ffn_up.weight`, [E, p.ff], w);
    add(`${b}ffn_up.bias`, [p.ff], zero);
    add(`${b}ffn_down.weight`, [p.ff, E], { std: 1 / Math.sqrt(p.ff) });
    add(`${b}ffn_down.bias`, [E], zero);
  }
  add('v.post_ln.weight', [E], one);
  add('v.post_ln.bias', [E], zero);
  add('mm.soft_emb_norm.weight', [E], one);
  // clip.cpp multiplies by its transpose: ne0 is the text model's width, ne1 the encoder's
  add('mm.input_projection.weight', [p.textEmbd, E], w);
  return { metadata, tensors };
}
