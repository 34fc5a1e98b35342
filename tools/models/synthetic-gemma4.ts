// A synthetic Gemma 4 target and its Gemma 4 assistant (the MTP drafter that keeps no KV of its
// own and attends over the target's), in the tensor and key layouts llama.cpp's gemma4 and
// gemma4-assistant loaders read (their load_arch_hparams/load_arch_tensors).
//
// The pair is built to agree, not trained. The target's head is low-rank: output = A·P, with P
// projecting the target's hidden size onto the assistant's and A the assistant's own (tied)
// token embeddings. The assistant's pre-projection passes the target's scaled input embedding
// of the anchor through P and gives the target's hidden row little say, and its blocks write
// little into its stream (small post-norm weights), so it proposes argmax A·P·x(token): the
// target's choice whenever the target's own blocks do not change it. `blockWeight` (the
// target's post-norm weights) sets how often they do.
import { gv, kv } from '../../app/gguf/types.js';
import type { GgufEntry, GgufModel, GgufTensorSpec } from '../../app/gguf/types.js';
import { TokenType, makeVocab, vocabMetadata } from '../../app/models/vocab.js';
import { addGaussian, f32Tensor } from './synthetic-random.js';

export interface Gemma4ModelParams {
  arch: 'gemma4';
  name: string;
  seed: number;
  embd: number;
  /** sliding-window flag of each block; the last must be full attention, the one before it sliding (what an assistant reads) */
  swaLayers: boolean[];
  heads: number;
  kvHeads: number;
  /** head size of the full-attention blocks */
  headDim: number;
  /** head size of the sliding-window blocks */
  headDimSwa: number;
  ff: number;
  contextLength: number;
  slidingWindow: number;
  /** the assistant's hidden size: the rank of the target's head */
  headRank: number;
  /** weight of every block's post-attention and post-FFN norm: how much the blocks move the choice */
  blockWeight: number;
}

export interface Gemma4AssistantParams {
  arch: 'gemma4-assistant';
  name: string;
  seed: number;
  /** the target it is built for (its head factors make the assistant agree) */
  target: Gemma4ModelParams;
  /** sliding-window flag of each of its blocks (it needs at least one) */
  swaLayers: boolean[];
  heads: number;
  ff: number;
  /** declared target hidden size (embedding_length_out); absent: the target's */
  targetHidden?: number;
}

const RMS_EPS = 1e-6;
const ROPE_BASE = 1000000;
const ROPE_BASE_SWA = 10000;

type Fill = (data: Float32Array) => void;
/** zeros, then `fill` */
const tensor = (name: string, shape: number[], fill: Fill): GgufTensorSpec => f32Tensor(name, shape, { value: 0 }, 0, fill);

const normal =
  (std: number, seedText: string): Fill =>
  (d) =>
    addGaussian(d, std, seedText);
const constant =
  (value: number): Fill =>
  (d) =>
    d.fill(value);

/** A (V × rank, row v contiguous) and P (rank × E, row j contiguous): the target's head is A·P. */
function headFactors(p: Gemma4ModelParams, vocabSize: number, tokenTypes: readonly number[]) {
  const a = new Float32Array(vocabSize * p.headRank);
  addGaussian(a, 1, `${p.seed}/head-a`);
  // tokens that are not NORMAL never win (as the other synthetic heads do)
  tokenTypes.forEach((type, id) => {
    if (type !== TokenType.NORMAL) a.fill(0, id * p.headRank, (id + 1) * p.headRank);
  });
  const proj = new Float32Array(p.headRank * p.embd);
  addGaussian(proj, 1 / Math.sqrt(p.embd), `${p.seed}/head-p`);
  return { a, proj };
}

/** A block's GELU FFN and its norms; `post`: the post-FFN norm's weight (how much it writes) */
function ffnTensors(b: string, E: number, ff: number, seed: number, post: number): GgufTensorSpec[] {
  return [
    tensor(`${b}ffn_norm.weight`, [E], constant(1)),
    tensor(`${b}ffn_gate.weight`, [E, ff], normal(0.1, `${seed}/${b}ffn_gate`)),
    tensor(`${b}ffn_up.weight`, [E, ff], normal(0.1, `${seed}/${b}ffn_up`)),
    tensor(`${b}ffn_down.weight`, [ff, E], normal(0.1, `${seed}/${b}ffn_down`)),
    tensor(`${b}post_ffw_norm.weight`, [E], constant(post)),
  ];
}

function headDimOf(p: Gemma4ModelParams, swa: boolean): number {
  return swa ? p.headDimSwa : p.headDim;
}

function commonMetadata(arch: string, name: string, p: { contextLength: number; embd: number; layers: number; ff: number }): GgufEntry[] {
  const pre = `${arch}.`;
  return [
    kv('general.architecture', gv.str(arch)),
    kv('general.name', gv.str(name)),
    kv('general.file_type', gv.u32(0)),
    kv('general.alignment', gv.u32(32)),
    kv(`${pre}context_length`, gv.u32(p.contextLength)),
    kv(`${pre}embedding_length`, gv.u32(p.embd)),
    kv(`${pre}block_count`, gv.u32(p.layers)),
    kv(`${pre}feed_forward_length`, gv.u32(p.ff)),
  ];
}

function attentionMetadata(arch: string, t: Gemma4ModelParams, heads: number, swaLayers: boolean[]): GgufEntry[] {
  const pre = `${arch}.`;
  return [
    kv(`${pre}attention.head_count`, gv.u32(heads)),
    kv(`${pre}attention.head_count_kv`, gv.u32(t.kvHeads)),
    kv(`${pre}attention.key_length`, gv.u32(t.headDim)),
    kv(`${pre}attention.value_length`, gv.u32(t.headDim)),
    kv(`${pre}attention.key_length_swa`, gv.u32(t.headDimSwa)),
    kv(`${pre}attention.value_length_swa`, gv.u32(t.headDimSwa)),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(RMS_EPS)),
    kv(`${pre}attention.sliding_window`, gv.u32(t.slidingWindow)),
    kv(`${pre}attention.sliding_window_pattern`, gv.bools(swaLayers)),
    kv(`${pre}rope.dimension_count`, gv.u32(t.headDim)),
    kv(`${pre}rope.dimension_count_swa`, gv.u32(t.headDimSwa)),
    kv(`${pre}rope.freq_base`, gv.f32(ROPE_BASE)),
    kv(`${pre}rope.freq_base_swa`, gv.f32(ROPE_BASE_SWA)),
  ];
}

export function makeGemma4ModelSpec(p: Gemma4ModelParams): GgufModel {
  const n = p.swaLayers.length;
  if (n < 2 || p.swaLayers[n - 1] || !p.swaLayers[n - 2])
    throw new RangeError(`${p.name}: the last block must be full attention, the one before sliding`);
  const vocab = makeVocab();
  const V = vocab.tokens.length;
  const E = p.embd;
  const metadata: GgufEntry[] = [
    ...commonMetadata('gemma4', p.name, { ...p, layers: n }),
    ...attentionMetadata('gemma4', p, p.heads, p.swaLayers),
    kv('gemma4.embedding_length_per_layer_input', gv.u32(0)),
    ...vocabMetadata(vocab),
  ];
  const s = p.seed;
  const tensors: GgufTensorSpec[] = [];
  // llama.cpp scales the input by sqrt(E): drawn at 1/sqrt(E), the stream starts at RMS 1
  tensors.push(tensor('token_embd.weight', [E, V], normal(1 / Math.sqrt(E), `${s}/token_embd`)));
  tensors.push(tensor('rope_freqs.weight', [p.headDim / 2], constant(1)));
  for (let i = 0; i < n; i++) {
    const b = `blk.${i}.`;
    const D = headDimOf(p, p.swaLayers[i]!);
    tensors.push(
      tensor(`${b}attn_norm.weight`, [E], constant(1)),
      tensor(`${b}attn_q.weight`, [E, p.heads * D], normal(0.1, `${s}/${b}attn_q`)),
      tensor(`${b}attn_k.weight`, [E, p.kvHeads * D], normal(0.1, `${s}/${b}attn_k`)),
      tensor(`${b}attn_v.weight`, [E, p.kvHeads * D], normal(0.1, `${s}/${b}attn_v`)),
      tensor(`${b}attn_output.weight`, [p.heads * D, E], normal(0.1, `${s}/${b}attn_output`)),
      tensor(`${b}attn_q_norm.weight`, [D], constant(1)),
      tensor(`${b}attn_k_norm.weight`, [D], constant(1)),
      tensor(`${b}post_attention_norm.weight`, [E], constant(p.blockWeight)),
      ...ffnTensors(b, E, p.ff, s, p.blockWeight),
    );
  }
  tensors.push(tensor('output_norm.weight', [E], constant(1)));
  tensors.push(
    tensor('output.weight', [E, V], (d) => {
      const { a, proj } = headFactors(p, V, vocab.tokenTypes);
      const R = p.headRank;
      for (let v = 0; v < V; v++) {
        for (let j = 0; j < R; j++) {
          const av = a[v * R + j]!;
          if (av === 0) continue;
          for (let i = 0; i < E; i++) d[v * E + i]! += av * proj[j * E + i]!;
        }
      }
    }),
  );
  return { metadata, tensors };
}

export function makeGemma4AssistantSpec(p: Gemma4AssistantParams): GgufModel {
  const t = p.target;
  const vocab = makeVocab();
  const V = vocab.tokens.length;
  const E = t.headRank; // the assistant's own width
  const Et = t.embd;
  const n = p.swaLayers.length;
  const arch = 'gemma4-assistant';
  const metadata: GgufEntry[] = [
    ...commonMetadata(arch, p.name, { contextLength: t.contextLength, embd: E, layers: n, ff: p.ff }),
    kv(`${arch}.embedding_length_out`, gv.u32(p.targetHidden ?? Et)),
    kv(`${arch}.nextn_predict_layers`, gv.u32(n)),
    ...attentionMetadata(arch, t, p.heads, p.swaLayers),
    ...vocabMetadata(vocab),
  ];
  const s = p.seed;
  const factors = () => headFactors(t, V, vocab.tokenTypes);
  const tensors: GgufTensorSpec[] = [
    // tied: its output head; the input embeddings are the target's
    tensor('token_embd.weight', [E, V], (d) => d.set(factors().a)),
    tensor('output_norm.weight', [E], constant(1)),
    tensor('rope_freqs.weight', [t.headDim / 2], constant(1)),
    // [x; h] -> P·x + (a little of h)
    tensor('nextn.pre_projection.weight', [2 * Et, E], (d) => {
      addGaussian(d, 0.02, `${s}/pre_projection`);
      const { proj } = factors();
      for (let j = 0; j < E; j++) for (let i = 0; i < Et; i++) d[j * 2 * Et + i] = proj[j * Et + i]!;
    }),
    tensor('nextn.post_projection.weight', [E, Et], normal(1 / Math.sqrt(E), `${s}/post_projection`)),
  ];
  for (let i = 0; i < n; i++) {
    const b = `blk.${i}.`;
    const D = headDimOf(t, p.swaLayers[i]!);
    tensors.push(
      tensor(`${b}attn_norm.weight`, [E], constant(1)),
      tensor(`${b}attn_q.weight`, [E, p.heads * D], normal(0.1, `${s}/${b}attn_q`)),
      tensor(`${b}attn_output.weight`, [p.heads * D, E], normal(0.1, `${s}/${b}attn_output`)),
      tensor(`${b}attn_q_norm.weight`, [D], constant(1)),
      tensor(`${b}post_attention_norm.weight`, [E], constant(0.05)),
      tensor(`${b}layer_output_scale.weight`, [1], constant(1)),
      ...ffnTensors(b, E, p.ff, s, 0.05),
    );
  }
  return { metadata, tensors };
}
