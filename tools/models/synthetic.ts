// Deterministic synthetic GGUF models for tests (docs/testing.md "The synthetic models").
// Every tensor is drawn from its own seed (model seed + tensor name), so a draft
// can share any subset of the target's weights exactly and add controlled noise.
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { gv, kv } from '../../app/gguf/types.js';
import { QK } from '../gguf/quantize.js';
import type { GgufEntry, GgufModel, GgufTensorSpec, GgufWritableType } from '../../app/gguf/types.js';
import { writeGguf } from '../gguf/writer.js';
import { replaceFileAtomic, writeFileAtomic } from '../../app/service/storage/atomic-file.js';
import { TokenType, makeAltVocab, makeVocab, vocabMetadata } from '../../app/models/vocab.js';
import { ARTIFACT_REVISION, makeDraftArtifactSpec } from './synthetic-drafts.js';
import type { DraftArtifactParams } from './synthetic-drafts.js';
import { addGaussian } from './synthetic-random.js';
import { makeGemma4AssistantSpec, makeGemma4ModelSpec } from './synthetic-gemma4.js';
import type { Gemma4AssistantParams, Gemma4ModelParams } from './synthetic-gemma4.js';
import { makeProjectorSpec, type ProjectorParams } from './synthetic-projector.js';
import { BUNDLED_VOCABS, bundledVocab, loadBundledVocab, type BundledVocabName } from './real-vocab.js';

/** Bump when generation code changes in a way that alters bytes; invalidates every cache. */
export const GENERATOR_VERSION = 2;

// ---------------------------------------------------------------- tensors

/** Standard deviations of the random weights; these give clear logit margins. */
export interface WeightScales {
  embedding: number;
  output: number;
  /** attn_q, attn_k: sets how sharp attention is. */
  attentionQK: number;
  /** attn_v, attn_output: sets how much context enters the residual stream. */
  attentionVO: number;
  /** FFN and recurrent-block projections. */
  projection: number;
}

/**
 * Measured on llama.cpp v0.4.0 CPU (E=128, 4 blocks): the reference doc's 0.2 attention
 * scale makes the model chaotic, so batch vs single-token evaluation (F16 KV cache) moves
 * logits by ~5e-2 and flips near-tied argmaxes. A weaker value path (0.05) cuts that noise
 * ~50x while greedy output stays varied; weaker still and greedy output falls into loops.
 */
export const DEFAULT_SCALES: WeightScales = { embedding: 1, output: 0.5, attentionQK: 0.1, attentionVO: 0.05, projection: 0.1 };

interface CommonParams {
  seed: number;
  /**
   * Type of the matrices (vectors stay F32, as llama.cpp converters do). Q8_0/Q4_0 quantize every
   * matrix whose rows fill whole 32-element blocks (the rest F16), so the model runs on ggml's
   * real kernels of that type.
   */
  dtype?: ModelDtype;
  /** Gaussian noise of `scale`·(tensor std) added to every random tensor, drawn from `seed`. */
  perturb?: { scale: number; seed: number };
  scales?: WeightScales;
  /** the model's chat template in place of its vocabulary's (e.g. one that renders tools) */
  chatTemplate?: string;
  /**
   * vocabulary entries named anew by id: a bundled tokenizer's padding slots given back the added
   * tokens the real model has there (Qwen 3.5's `<think>` is 151667)
   */
  namedTokens?: Record<number, string>;
}

type Init = { kind: 'normal'; std: number } | { kind: 'const'; value: number } | { kind: 'negexp'; std: number }; // -exp(N(0, std²)): strictly negative, like ssm_a

export type ModelDtype = 'f32' | 'f16' | 'q8_0' | 'q4_0';

function matrixType(dtype: ModelDtype, name: string, shape: number[]): GgufWritableType {
  // ggml's CPU ssm_conv reads its kernel as F32 only (it aborts on F16), so converters keep
  // ssm_conv1d in F32 like the vectors
  if (shape.length < 2 || dtype === 'f32' || name.includes('ssm_conv1d')) return 'f32';
  if (dtype === 'f16') return 'f16';
  return (shape[0] ?? 0) % QK === 0 ? dtype : 'f16';
}

class TensorFactory {
  readonly tensors: GgufTensorSpec[] = [];
  constructor(private readonly p: CommonParams) {}

  add(name: string, shape: number[], init: Init, post?: (data: Float32Array) => void): void {
    const { seed, perturb } = this.p;
    const type = matrixType(this.p.dtype ?? 'f32', name, shape);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = (): Float32Array => {
      const out = new Float32Array(n);
      if (init.kind === 'const') out.fill(init.value);
      else addGaussian(out, init.std, `${seed}/${name}`);
      if (init.kind === 'negexp') for (let i = 0; i < n; i++) out[i] = -Math.exp(out[i] ?? 0);
      if (perturb && perturb.scale > 0 && init.kind !== 'const') {
        addGaussian(out, perturb.scale * init.std, `perturb/${perturb.seed}/${name}`);
      }
      post?.(out);
      return out;
    };
    this.tensors.push({ name, shape, type, data });
  }
}

/**
 * Zeroes the output rows of non-NORMAL tokens (control, byte, unknown) so their
 * logit is exactly 0, far below the winners: greedy output stays readable text
 * and never ends a turn by itself.
 */
function suppressSpecialRows(tokenTypes: readonly number[], embd: number): (data: Float32Array) => void {
  return (data) => {
    tokenTypes.forEach((type, id) => {
      if (type !== TokenType.NORMAL) data.fill(0, id * embd, (id + 1) * embd);
    });
  };
}

/**
 * A model's vocabulary: our synthetic SentencePiece ones ('default', 'alt': app/models/vocab.ts)
 * or a real tokenizer from llama.cpp's bundle (real-vocab.ts: 'qwen35', gpt2 BPE, 151,936 tokens).
 */
export type VocabName = 'default' | 'alt' | BundledVocabName;

interface VocabSpec {
  size: number;
  tokenTypes: readonly number[];
  /** the `tokenizer.*` metadata */
  entries: GgufEntry[];
}

function vocabSpec(name: VocabName, chatTemplate?: string, namedTokens?: Record<number, string>): VocabSpec {
  let spec: VocabSpec;
  if (name === 'default' || name === 'alt') {
    const vocab = name === 'alt' ? makeAltVocab() : makeVocab();
    spec = { size: vocab.tokens.length, tokenTypes: vocab.tokenTypes, entries: vocabMetadata(vocab) };
  } else {
    const real = bundledVocab(name);
    spec = { size: real.size, tokenTypes: real.tokenTypes, entries: real.entries };
  }
  if (namedTokens !== undefined) {
    const entries = spec.entries.map((e) => {
      if (e.key !== 'tokenizer.ggml.tokens' || e.value.type !== 'array') return e;
      const tokens = [...(e.value.value as string[])];
      for (const [id, text] of Object.entries(namedTokens)) tokens[Number(id)] = text;
      return kv(e.key, gv.strings(tokens));
    });
    spec = { ...spec, entries };
  }
  if (chatTemplate === undefined) return spec;
  const key = 'tokenizer.chat_template';
  return { ...spec, entries: [...spec.entries.filter((e) => e.key !== key), kv(key, gv.str(chatTemplate))] };
}

const isBundled = (name: VocabName | undefined): name is BundledVocabName => name !== undefined && name in BUNDLED_VOCABS;

// llama_ftype of each dtype: ALL_F32, MOSTLY_F16, MOSTLY_Q8_0, MOSTLY_Q4_0
const FILE_TYPES: Record<ModelDtype, number> = { f32: 0, f16: 1, q8_0: 7, q4_0: 2 };

function generalMetadata(arch: string, name: string, dtype: ModelDtype | undefined): GgufEntry[] {
  return [
    kv('general.architecture', gv.str(arch)),
    kv('general.name', gv.str(name)),
    kv('general.file_type', gv.u32(FILE_TYPES[dtype ?? 'f32'])),
    kv('general.alignment', gv.u32(32)),
  ];
}

/** The hyperparameters every transformer target here declares, after the general ones. */
function transformerMetadata(
  arch: string,
  p: { name: string; dtype?: ModelDtype; contextLength: number; embd: number; layers: number; ff: number; heads: number; kvHeads: number },
): GgufEntry[] {
  const pre = `${arch}.`;
  return [
    ...generalMetadata(arch, p.name, p.dtype),
    kv(`${pre}context_length`, gv.u32(p.contextLength)),
    kv(`${pre}embedding_length`, gv.u32(p.embd)),
    kv(`${pre}block_count`, gv.u32(p.layers)),
    kv(`${pre}feed_forward_length`, gv.u32(p.ff)),
    kv(`${pre}attention.head_count`, gv.u32(p.heads)),
    kv(`${pre}attention.head_count_kv`, gv.u32(p.kvHeads)),
  ];
}

/** A block's Q, K, V and output projections (head dim D). */
function attentionTensors(
  t: TensorFactory,
  b: string,
  p: { embd: number; heads: number; kvHeads: number },
  D: number,
  s: WeightScales,
  outputScale = 1,
): void {
  const E = p.embd;
  t.add(`${b}attn_q.weight`, [E, p.heads * D], { kind: 'normal', std: s.attentionQK });
  t.add(`${b}attn_k.weight`, [E, p.kvHeads * D], { kind: 'normal', std: s.attentionQK });
  t.add(`${b}attn_v.weight`, [E, p.kvHeads * D], { kind: 'normal', std: s.attentionVO });
  t.add(`${b}attn_output.weight`, [p.heads * D, E], { kind: 'normal', std: outputScale * s.attentionVO });
}

// ---------------------------------------------------------------- llama

/** The shape of a plain transformer target (llama, gemma3). */
interface TransformerParams extends CommonParams {
  name: string;
  vocab: VocabName;
  embd: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ff: number;
  contextLength: number;
  rmsEps?: number;
}

export interface LlamaModelParams extends TransformerParams {
  arch: 'llama';
  ropeFreqBase?: number;
  /**
   * Blocks from index `fromLayer` on write `scale`× their usual attn_output/ffn_down into the
   * residual stream (their other weights are unchanged, so they cost as much to evaluate).
   * A small scale makes the first `fromLayer` blocks, cut out as a draft, agree with the whole.
   */
  residualScale?: { fromLayer: number; scale: number };
}

export function makeLlamaModelSpec(p: LlamaModelParams): GgufModel {
  const vocab = vocabSpec(p.vocab, p.chatTemplate, p.namedTokens);
  const s = p.scales ?? DEFAULT_SCALES;
  const E = p.embd;
  const V = vocab.size;
  const D = E / p.heads;
  if (!Number.isInteger(D) || p.heads % p.kvHeads !== 0) throw new RangeError(`bad head layout for ${p.name}`);
  const pre = 'llama.';
  const metadata: GgufEntry[] = [
    ...transformerMetadata('llama', p),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(p.rmsEps ?? 1e-5)),
    // llama.cpp rejects a llama model whose rotary dims differ from the head dim.
    kv(`${pre}rope.dimension_count`, gv.u32(D)),
    kv(`${pre}rope.freq_base`, gv.f32(p.ropeFreqBase ?? 10000)),
    kv(`${pre}vocab_size`, gv.u32(V)),
    ...vocab.entries,
  ];
  const t = new TensorFactory(p);
  const one = { kind: 'const', value: 1 } as const;
  t.add('token_embd.weight', [E, V], { kind: 'normal', std: s.embedding });
  for (let i = 0; i < p.layers; i++) {
    const b = `blk.${i}.`;
    const r = p.residualScale && i >= p.residualScale.fromLayer ? p.residualScale.scale : 1;
    t.add(`${b}attn_norm.weight`, [E], one);
    attentionTensors(t, b, p, D, s, r);
    t.add(`${b}ffn_norm.weight`, [E], one);
    t.add(`${b}ffn_gate.weight`, [E, p.ff], { kind: 'normal', std: s.projection });
    t.add(`${b}ffn_up.weight`, [E, p.ff], { kind: 'normal', std: s.projection });
    t.add(`${b}ffn_down.weight`, [p.ff, E], { kind: 'normal', std: r * s.projection });
  }
  t.add('output_norm.weight', [E], one);
  t.add('output.weight', [E, V], { kind: 'normal', std: s.output }, suppressSpecialRows(vocab.tokenTypes, E));
  return { metadata, tensors: t.tensors };
}

// ---------------------------------------------------------------- qwen35 hybrid

export interface Qwen35ModelParams extends CommonParams {
  arch: 'qwen35';
  name: string;
  /** absent: the default synthetic vocabulary */
  vocab?: VocabName;
  embd: number;
  /** Trunk blocks; one NextN (MTP) block follows them. */
  trunkLayers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ff: number;
  contextLength: number;
  fullAttentionInterval: number;
  ropeDims: number;
  ropeSections: [number, number, number, number];
  convKernel: number;
  stateSize: number;
  groupCount: number;
  dtRank: number;
  innerSize: number;
  rmsEps?: number;
  ropeFreqBase?: number;
  /** NextN block weights relative to the trunk's; smaller means a purer pass-through (default 0.1). */
  mtpBlockScale?: number;
  /** the NextN block's own output head (nextn.shared_head_head, a copy of output.weight): a separate draft head */
  mtpOwnHead?: boolean;
  /**
   * An MTP sidecar: the same file without the trunk blocks (embeddings, head and the NextN block
   * only), which llama.cpp's qwen35 loader takes as an MTP-only model.
   */
  mtpOnly?: boolean;
}

export function makeQwen35ModelSpec(p: Qwen35ModelParams): GgufModel {
  const vocab = vocabSpec(p.vocab ?? 'default', p.chatTemplate, p.namedTokens);
  const s = p.scales ?? DEFAULT_SCALES;
  const E = p.embd;
  const V = vocab.size;
  const D = p.headDim;
  const keyDim = p.stateSize * p.groupCount;
  const valueDim = p.stateSize * p.dtRank;
  const convDim = 2 * keyDim + valueDim;
  if (p.innerSize !== valueDim) throw new RangeError(`${p.name}: ssm inner size must equal state·rank (${valueDim})`);
  const pre = 'qwen35.';
  const metadata: GgufEntry[] = [
    ...generalMetadata('qwen35', p.name, p.dtype),
    kv(`${pre}context_length`, gv.u32(p.contextLength)),
    kv(`${pre}embedding_length`, gv.u32(E)),
    kv(`${pre}block_count`, gv.u32(p.trunkLayers + 1)),
    kv(`${pre}nextn_predict_layers`, gv.u32(1)),
    kv(`${pre}feed_forward_length`, gv.u32(p.ff)),
    kv(`${pre}attention.head_count`, gv.u32(p.heads)),
    kv(`${pre}attention.head_count_kv`, gv.u32(p.kvHeads)),
    kv(`${pre}attention.key_length`, gv.u32(D)),
    kv(`${pre}attention.value_length`, gv.u32(D)),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(p.rmsEps ?? 1e-6)),
    kv(`${pre}rope.dimension_count`, gv.u32(p.ropeDims)),
    kv(`${pre}rope.dimension_sections`, gv.i32s(p.ropeSections)),
    kv(`${pre}rope.freq_base`, gv.f32(p.ropeFreqBase ?? 10000000)),
    kv(`${pre}full_attention_interval`, gv.u32(p.fullAttentionInterval)),
    kv(`${pre}ssm.conv_kernel`, gv.u32(p.convKernel)),
    kv(`${pre}ssm.inner_size`, gv.u32(p.innerSize)),
    kv(`${pre}ssm.state_size`, gv.u32(p.stateSize)),
    kv(`${pre}ssm.time_step_rank`, gv.u32(p.dtRank)),
    kv(`${pre}ssm.group_count`, gv.u32(p.groupCount)),
    kv(`${pre}vocab_size`, gv.u32(V)),
    ...vocab.entries,
  ];
  const t = new TensorFactory(p);
  const one = { kind: 'const', value: 1 } as const;
  const normal = (std: number): Init => ({ kind: 'normal', std });
  const attention = (b: string, k = 1): void => {
    t.add(`${b}attn_q.weight`, [E, 2 * p.heads * D], normal(k * s.attentionQK)); // query and output gate
    t.add(`${b}attn_k.weight`, [E, p.kvHeads * D], normal(k * s.attentionQK));
    t.add(`${b}attn_v.weight`, [E, p.kvHeads * D], normal(k * s.attentionVO));
    t.add(`${b}attn_output.weight`, [p.heads * D, E], normal(k * s.attentionVO));
    t.add(`${b}attn_q_norm.weight`, [D], one);
    t.add(`${b}attn_k_norm.weight`, [D], one);
  };
  const ffn = (b: string, k = 1): void => {
    t.add(`${b}ffn_gate.weight`, [E, p.ff], normal(k * s.projection));
    t.add(`${b}ffn_up.weight`, [E, p.ff], normal(k * s.projection));
    t.add(`${b}ffn_down.weight`, [p.ff, E], normal(k * s.projection));
  };

  t.add('token_embd.weight', [E, V], normal(s.embedding));
  for (let i = 0; i < p.trunkLayers; i++) {
    const b = `blk.${i}.`;
    t.add(`${b}attn_norm.weight`, [E], one);
    t.add(`${b}post_attention_norm.weight`, [E], one);
    // Same rule as llama.cpp: every interval-th block is full attention, the rest recurrent.
    if ((i + 1) % p.fullAttentionInterval !== 0) {
      t.add(`${b}attn_qkv.weight`, [E, convDim], normal(s.attentionQK));
      t.add(`${b}attn_gate.weight`, [E, valueDim], normal(s.projection));
      t.add(`${b}ssm_conv1d.weight`, [p.convKernel, convDim], normal(s.attentionQK));
      t.add(`${b}ssm_dt.bias`, [p.dtRank], normal(s.projection));
      t.add(`${b}ssm_a`, [p.dtRank], { kind: 'negexp', std: 0.5 });
      t.add(`${b}ssm_beta.weight`, [E, p.dtRank], normal(s.projection));
      t.add(`${b}ssm_alpha.weight`, [E, p.dtRank], normal(s.projection));
      t.add(`${b}ssm_norm.weight`, [p.stateSize], one);
      t.add(`${b}ssm_out.weight`, [valueDim, E], normal(s.projection));
    } else {
      attention(b);
    }
    ffn(b);
  }
  const m = `blk.${p.trunkLayers}.`;
  t.add(`${m}attn_norm.weight`, [E], one);
  t.add(`${m}post_attention_norm.weight`, [E], one);
  // The NextN block sees [enorm(embedding of token t+1), hnorm(target hidden at t)].
  // eh_proj passes the embedding half through and the block's own weights are small, so
  // the head predicts what the target would say from token t+1 alone: it is right
  // whenever the trunk's context does not change the target's choice.
  const k = p.mtpBlockScale ?? 0.1;
  attention(m, k);
  ffn(m, k);
  t.add(`${m}nextn.eh_proj.weight`, [2 * E, E], normal(k * s.projection), (w) => {
    for (let i = 0; i < E; i++) w[i * 2 * E + i] = (w[i * 2 * E + i] ?? 0) + 1;
  });
  t.add(`${m}nextn.enorm.weight`, [E], one);
  t.add(`${m}nextn.hnorm.weight`, [E], one);
  t.add(`${m}nextn.shared_head_norm.weight`, [E], one);
  t.add('output_norm.weight', [E], one);
  t.add('output.weight', [E, V], normal(s.output), suppressSpecialRows(vocab.tokenTypes, E));
  if (p.mtpOwnHead) {
    const output = t.tensors[t.tensors.length - 1]!;
    t.tensors.push({ ...output, name: `${m}nextn.shared_head_head.weight` });
  }
  const trunk = (name: string) => Number(/^blk\.(\d+)\./.exec(name)?.[1] ?? p.trunkLayers) < p.trunkLayers;
  return { metadata, tensors: p.mtpOnly ? t.tensors.filter((x) => !trunk(x.name)) : t.tensors };
}

// ---------------------------------------------------------------- gemma3 (sliding window)

export interface Gemma3ModelParams extends TransformerParams {
  arch: 'gemma3';
  headDim: number;
  /** cells a sliding-window block attends to; every `slidingWindowPattern`-th block attends to all */
  slidingWindow: number;
  slidingWindowPattern: number;
}

/**
 * Gemma 3's block as llama.cpp builds it: embeddings scaled by sqrt(E), Q/K norms, norms after
 * attention and after the GELU FFN, interleaved sliding-window attention (llama.cpp's iSWA
 * cache).
 */
export function makeGemma3ModelSpec(p: Gemma3ModelParams): GgufModel {
  const vocab = vocabSpec(p.vocab, p.chatTemplate, p.namedTokens);
  const s = p.scales ?? DEFAULT_SCALES;
  const E = p.embd;
  const V = vocab.size;
  const D = p.headDim;
  if (p.heads % p.kvHeads !== 0) throw new RangeError(`bad head layout for ${p.name}`);
  const pre = 'gemma3.';
  const metadata: GgufEntry[] = [
    ...transformerMetadata('gemma3', p),
    kv(`${pre}attention.key_length`, gv.u32(D)),
    kv(`${pre}attention.value_length`, gv.u32(D)),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(p.rmsEps ?? 1e-6)),
    kv(`${pre}attention.sliding_window`, gv.u32(p.slidingWindow)),
    kv(`${pre}attention.sliding_window_pattern`, gv.u32(p.slidingWindowPattern)),
    kv(`${pre}rope.freq_base`, gv.f32(1000000)),
    kv(`${pre}rope.freq_base_swa`, gv.f32(10000)),
    kv(`${pre}vocab_size`, gv.u32(V)),
    ...vocab.entries,
  ];
  const t = new TensorFactory(p);
  const one = { kind: 'const', value: 1 } as const;
  const normal = (std: number): Init => ({ kind: 'normal', std });
  // llama.cpp scales the embeddings by sqrt(E): drawn at std/sqrt(E), the input enters the
  // residual stream at the size of each block's post-normed output, so the context moves the
  // choice. The head is a tensor of its own: tied to these embeddings, the input token would
  // dominate its own logit and every reply would repeat one token
  t.add('token_embd.weight', [E, V], normal(s.embedding / Math.sqrt(E)));
  for (let i = 0; i < p.layers; i++) {
    const b = `blk.${i}.`;
    t.add(`${b}attn_norm.weight`, [E], one);
    attentionTensors(t, b, p, D, s);
    t.add(`${b}attn_q_norm.weight`, [D], one);
    t.add(`${b}attn_k_norm.weight`, [D], one);
    t.add(`${b}post_attention_norm.weight`, [E], one);
    t.add(`${b}ffn_norm.weight`, [E], one);
    t.add(`${b}ffn_gate.weight`, [E, p.ff], normal(s.projection));
    t.add(`${b}ffn_up.weight`, [E, p.ff], normal(s.projection));
    t.add(`${b}ffn_down.weight`, [p.ff, E], normal(s.projection));
    t.add(`${b}post_ffw_norm.weight`, [E], one);
  }
  t.add('output_norm.weight', [E], one);
  t.add('output.weight', [E, V], normal(s.output), suppressSpecialRows(vocab.tokenTypes, E));
  return { metadata, tensors: t.tensors };
}

// ---------------------------------------------------------------- the set

export type ModelParams =
  | LlamaModelParams
  | Qwen35ModelParams
  | Gemma3ModelParams
  | DraftArtifactParams
  | ProjectorParams
  | Gemma4ModelParams
  | Gemma4AssistantParams;

const TARGET: LlamaModelParams = {
  arch: 'llama',
  name: 'power-synthetic-target',
  vocab: 'default',
  seed: 1,
  embd: 128,
  layers: 4,
  heads: 4,
  kvHeads: 2,
  ff: 256,
  contextLength: 2048,
};

// six blocks, five of them with a window of 16 cells: a window far shorter than the context,
// so long replies run with sliding-window cells in and out of the cache under rollback
const SWA_TARGET: Gemma3ModelParams = {
  arch: 'gemma3',
  name: 'power-synthetic-swa-target',
  vocab: 'default',
  seed: 21,
  embd: 128,
  layers: 6,
  heads: 4,
  kvHeads: 1,
  headDim: 32,
  ff: 256,
  contextLength: 4096,
  slidingWindow: 16,
  slidingWindowPattern: 6,
};

// four blocks (three sliding, window 16, then one full), head sizes 16 (sliding) and 32 (full),
// and a head of rank 32: the width of its assistant (synthetic-gemma4.ts has the design).
// Measured (greedy, 3 prompts x 120 tokens): block weight 0.3 / 0.1 / 0.03 gives acceptance at
// K1 20 / 46 / 70 %, at K7 3 / 13 / 30 %, and 75-91 / 69-74 / 27-42 distinct tokens per reply
const GEMMA4_TARGET: Gemma4ModelParams = {
  arch: 'gemma4',
  name: 'power-synthetic-gemma4-target',
  seed: 41,
  embd: 64,
  swaLayers: [true, true, true, false],
  heads: 2,
  kvHeads: 1,
  headDim: 32,
  headDimSwa: 16,
  ff: 128,
  contextLength: 4096,
  slidingWindow: 16,
  headRank: 32,
  blockWeight: 0.1,
};

const HYBRID: Qwen35ModelParams = {
  arch: 'qwen35',
  name: 'power-synthetic-hybrid-mtp',
  seed: 4,
  embd: 128,
  trunkLayers: 4,
  heads: 4,
  kvHeads: 2,
  headDim: 32,
  ff: 256,
  contextLength: 2048,
  fullAttentionInterval: 2,
  ropeDims: 16,
  ropeSections: [3, 3, 2, 0],
  convKernel: 4,
  stateSize: 16,
  groupCount: 2,
  dtRank: 4,
  innerSize: 64,
  // Measured: MTP head agrees with the target ~18% of greedy steps, target output mostly
  // loop-free. Stronger trunk: output varies more but MTP ~2%; weaker: MTP ~50%, 2-cycles.
  scales: { embedding: 1, output: 0.5, attentionQK: 0.1, attentionVO: 0.04, projection: 0.07 },
  mtpBlockScale: 0.1,
};

/**
 * EAGLE-3, DFlash and DSpark artifacts for the llama target (synthetic-drafts.ts has the designs).
 * They read the inputs of target blocks 1, 2 and 3 (llama.cpp aborts on a block the target lacks).
 */
function draftArtifacts() {
  const base = { revision: ARTIFACT_REVISION, target: TARGET, targetLayers: [1, 2, 3], contextLength: TARGET.contextLength };
  return {
    'eagle3-close.gguf': {
      description:
        "eagle3 for target.gguf (hidden 257): an induction head over the target's features (what followed this token before), else the target's next token after [BOS, token]",
      params: { ...base, arch: 'eagle3', name: 'power-synthetic-eagle3-close', seed: 201, design: 'close' },
    },
    'eagle3-far.gguf': {
      description: "eagle3 for target.gguf with random weights, sharing the target's embeddings and head: rarely agrees",
      params: { ...base, arch: 'eagle3', name: 'power-synthetic-eagle3-far', seed: 202, design: 'far' },
    },
    'eagle3-wrong-hidden.gguf': {
      description: 'eagle3-close declaring target hidden size 96 (target.gguf has 128): incompatible',
      params: { ...base, arch: 'eagle3', name: 'power-synthetic-eagle3-wrong-hidden', seed: 203, design: 'close', targetHidden: 96 },
    },
    'eagle3-wrong-vocab.gguf': {
      description: 'eagle3 with another vocabulary (its own embeddings and head): incompatible',
      params: { ...base, arch: 'eagle3', name: 'power-synthetic-eagle3-wrong-vocab', seed: 204, design: 'far', vocab: 'alt' },
    },
    'dflash-close.gguf': {
      description:
        "dflash for target.gguf, block 8: block position j ≤ 4 proposes f^j(anchor), f = the target's next token after [BOS, token]",
      params: { ...base, arch: 'dflash', name: 'power-synthetic-dflash-close', seed: 205, design: 'close', blockSize: 8 },
    },
    'dflash-far.gguf': {
      description: 'dflash for target.gguf with random weights, block 8: rarely agrees',
      params: { ...base, arch: 'dflash', name: 'power-synthetic-dflash-far', seed: 206, design: 'far', blockSize: 8 },
    },
    'hybrid-eagle3-close.gguf': {
      description: 'eagle3-close built for hybrid-mtp.gguf (reads trunk layers 1, 2, 3)',
      params: { ...base, target: HYBRID, arch: 'eagle3', name: 'power-synthetic-hybrid-eagle3-close', seed: 211, design: 'close' },
    },
    'hybrid-dflash-close.gguf': {
      description: 'dflash-close built for hybrid-mtp.gguf (reads trunk layers 1, 2, 3)',
      params: {
        ...base,
        target: HYBRID,
        arch: 'dflash',
        name: 'power-synthetic-hybrid-dflash-close',
        seed: 212,
        design: 'close',
        blockSize: 8,
      },
    },
    'dspark-close.gguf': {
      description: 'dspark (dflash + Markov head) for target.gguf, block 8, anchor-first: the Markov head chains f over the block',
      params: { ...base, arch: 'dflash', name: 'power-synthetic-dspark-close', seed: 207, design: 'close', blockSize: 8, dspark: true },
    },
  } satisfies Record<string, { description: string; params: DraftArtifactParams }>;
}

const TYPED_DESCRIPTIONS: Record<Exclude<ModelDtype, 'f32'>, string> = {
  f16: 'F16 matrices',
  q8_0: 'Q8_0 matrices (ggml blocks of 32: f16 scale + 32 int8)',
  q4_0: 'Q4_0 matrices (ggml blocks of 32: f16 scale + 16 bytes of nibbles)',
};

/**
 * The target, its close draft and the hybrid with every matrix in F16, Q8_0 or Q4_0: the same
 * weights before rounding, run on llama.cpp's kernels of that type (the exactness contract and
 * `power audit` run on them).
 */
function typedSet() {
  const out: Record<string, { description: string; params: ModelParams }> = {};
  for (const dtype of ['f16', 'q8_0', 'q4_0'] as const) {
    const what = TYPED_DESCRIPTIONS[dtype];
    out[`target-${dtype}.gguf`] = {
      description: `the target with ${what}`,
      params: { ...TARGET, name: `power-synthetic-target-${dtype}`, dtype },
    };
    out[`draft-close-${dtype}.gguf`] = {
      description: `draft-close with ${what}: the matching draft of target-${dtype}`,
      params: { ...TARGET, name: `power-synthetic-draft-close-${dtype}`, perturb: { scale: 0.02, seed: 101 }, dtype },
    };
    out[`hybrid-mtp-${dtype}.gguf`] = {
      description: `the hybrid with ${what}, MTP block included`,
      params: { ...HYBRID, name: `power-synthetic-hybrid-mtp-${dtype}`, dtype },
    };
  }
  return out as Record<
    `${'target' | 'draft-close' | 'hybrid-mtp'}-${Exclude<ModelDtype, 'f32'>}.gguf`,
    { description: string; params: ModelParams }
  >;
}

export const SYNTHETIC_MODELS = {
  'target.gguf': {
    description: 'llama target: E=128, 4 blocks, 4/2 heads, F=256, F32',
    params: TARGET,
  },
  'draft-same.gguf': {
    description: 'draft with weights identical to the target: always agrees',
    params: { ...TARGET, name: 'power-synthetic-draft-same' },
  },
  'draft-close.gguf': {
    description: 'target weights plus small noise: agrees with the target most of the time',
    params: { ...TARGET, name: 'power-synthetic-draft-close', perturb: { scale: 0.02, seed: 101 } },
  },
  'draft-far.gguf': {
    description: 'independently seeded 2-block llama: rarely agrees',
    params: { ...TARGET, name: 'power-synthetic-draft-far', seed: 2, layers: 2 },
  },
  'draft-badvocab.gguf': {
    description: 'llama with a different, smaller vocabulary: incompatible draft',
    params: { ...TARGET, name: 'power-synthetic-draft-badvocab', vocab: 'alt', seed: 3, layers: 2 },
  },
  'hybrid-mtp.gguf': {
    description: 'qwen35 hybrid (GatedDeltaNet + gated attention), 4 trunk blocks + 1 NextN/MTP block',
    params: HYBRID,
  },
  'hybrid-mtp-e256.gguf': {
    description:
      "hybrid-mtp at E=256, F=512, with the NextN block's own output head (a copy of output.weight): rows K-quants can hold (power quantize --recipe tbq4)",
    params: {
      ...HYBRID,
      name: 'power-synthetic-hybrid-mtp-e256',
      embd: 256,
      ff: 512,
      mtpOwnHead: true,
      // the trunk's matrices at sqrt(128 / 256) of E=128's scales: a trunk as weak as hybrid-mtp's
      scales: {
        embedding: 1,
        output: 0.5,
        attentionQK: 0.1 * Math.SQRT1_2,
        attentionVO: 0.04 * Math.SQRT1_2,
        projection: 0.07 * Math.SQRT1_2,
      },
    },
  },
  'mtp-hybrid.gguf': {
    description: "hybrid-mtp.gguf's MTP sidecar: its embeddings, head and NextN block, no trunk blocks",
    params: { ...HYBRID, name: 'power-synthetic-mtp-hybrid', mtpOnly: true },
  },
  'swa-target.gguf': {
    description: 'gemma3 target: E=128, 6 blocks (sliding window 16 on five, full attention on the sixth), 4/1 heads, F=256, F32',
    params: SWA_TARGET,
  },
  'swa-draft-close.gguf': {
    description: 'the gemma3 target plus small noise: its agreeing draft',
    params: { ...SWA_TARGET, name: 'power-synthetic-swa-draft-close', perturb: { scale: 0.02, seed: 121 } },
  },
  'swa-target-f16.gguf': {
    description: 'the gemma3 target with F16 matrices',
    params: { ...SWA_TARGET, name: 'power-synthetic-swa-target-f16', dtype: 'f16' },
  },
  'gemma4-target.gguf': {
    description: 'gemma4 target: E=64, 4 blocks (sliding window 16 on three, full attention on the last), 2/1 heads, F=128, F32',
    params: GEMMA4_TARGET,
  },
  'gemma4-assistant.gguf': {
    description: "gemma4-assistant for gemma4-target.gguf: E=32, 2 blocks (sliding, full) over the target's KV, built to agree",
    params: {
      arch: 'gemma4-assistant',
      name: 'power-synthetic-gemma4-assistant',
      seed: 42,
      target: GEMMA4_TARGET,
      swaLayers: [true, false],
      heads: 2,
      ff: 64,
    } satisfies Gemma4AssistantParams,
  },
  ...typedSet(),
  ...draftArtifacts(),
} satisfies Record<string, { description: string; params: ModelParams }>;

export type SyntheticModelName = keyof typeof SYNTHETIC_MODELS;

/**
 * Multimodal projectors (llama.cpp's clip format), each named `mmproj-X.gguf` for its model
 * `X.gguf` as llama.cpp's users know them. Not part of SYNTHETIC_MODELS: a projector is no chat
 * model, and the library does not list it as one.
 */
/** the synthetic projectors' encoder: one gemma3 block of width 32 over 64x64 images in 8x8 patches */
const SMALL_VISION = { arch: 'clip', projector: 'gemma3', embd: 32, layers: 1, heads: 2, ff: 64, imageSize: 64, patchSize: 8 } as const;

export const PROJECTOR_MODELS = {
  'mmproj-swa-target.gguf': {
    description:
      'gemma3 projector for swa-target.gguf: 1-block vision encoder (E=32), 64x64 images in 8x8 patches, 4 tokens per image of width 128',
    params: { ...SMALL_VISION, name: 'power-synthetic-mmproj-swa-target', seed: 41, textEmbd: SWA_TARGET.embd },
  },
  'mmproj-gemma4-target.gguf': {
    description:
      'gemma3 projector for gemma4-target.gguf: as mmproj-swa-target.gguf, with output embeddings of width 64 (images beside the Gemma 4 assistant)',
    params: { ...SMALL_VISION, name: 'power-synthetic-mmproj-gemma4-target', seed: 43, textEmbd: GEMMA4_TARGET.embd },
  },
} satisfies Record<string, { description: string; params: ProjectorParams }>;
export type ModelSet = Record<SyntheticModelName, string>;

export function makeModelSpec(params: ModelParams): GgufModel {
  if (params.arch === 'llama') return makeLlamaModelSpec(params);
  if (params.arch === 'qwen35') return makeQwen35ModelSpec(params);
  if (params.arch === 'gemma3') return makeGemma3ModelSpec(params);
  if (params.arch === 'gemma4') return makeGemma4ModelSpec(params);
  if (params.arch === 'gemma4-assistant') return makeGemma4AssistantSpec(params);
  if (params.arch === 'clip') return makeProjectorSpec(params);
  return makeDraftArtifactSpec(params, makeModelSpec);
}

/**
 * Cache key over the params (defaults resolved) and the full metadata (vocab, chat
 * template). Changes to how tensor values are drawn need a GENERATOR_VERSION bump.
 */
export function specHash(params: ModelParams): string {
  const resolved =
    params.arch === 'llama' || params.arch === 'qwen35' || params.arch === 'gemma3'
      ? { ...params, scales: params.scales ?? DEFAULT_SCALES }
      : params;
  const { metadata } = makeModelSpec(params);
  const text = JSON.stringify({ v: GENERATOR_VERSION, resolved, metadata }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return createHash('sha256').update(text).digest('hex');
}

interface Manifest {
  generator: number;
  files: Record<string, { hash: string; size: number }>;
}

async function readManifest(path: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<Manifest>;
    if (parsed.generator === GENERATOR_VERSION && parsed.files && typeof parsed.files === 'object') {
      return { generator: GENERATOR_VERSION, files: parsed.files };
    }
  } catch {
    // Missing or corrupt: everything is regenerated.
  }
  return { generator: GENERATOR_VERSION, files: {} };
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** Generates (or reuses from the cache in `outDir`) every synthetic model; returns absolute paths. */
export function makeModels(outDir: string, opts: { force?: boolean; onLog?: (line: string) => void } = {}): Promise<ModelSet> {
  return makeModelFiles(outDir, SYNTHETIC_MODELS, opts);
}

/** Generates (or reuses) the projectors beside their models; cached in the same manifest. */
export function makeProjectorModels(
  outDir: string,
  opts: { force?: boolean; onLog?: (line: string) => void } = {},
): Promise<Record<keyof typeof PROJECTOR_MODELS, string>> {
  return makeModelFiles(outDir, PROJECTOR_MODELS, opts);
}

/** The same for any set of model params (the GPU check's larger models); cached alike. */
export async function makeModelFiles<K extends string>(
  outDir: string,
  set: Record<K, { params: ModelParams }>,
  opts: { force?: boolean; onLog?: (line: string) => void } = {},
): Promise<Record<K, string>> {
  const dir = resolve(outDir);
  await mkdir(dir, { recursive: true });
  // the real tokenizers the set carries are read before any spec is built (specs are synchronous)
  for (const { params } of Object.values<{ params: ModelParams }>(set)) {
    if ('vocab' in params && isBundled(params.vocab)) await loadBundledVocab(params.vocab);
  }
  const manifestPath = join(dir, 'manifest.json');
  const manifest = await readManifest(manifestPath);
  const out: Partial<Record<K, string>> = {};
  for (const [file, { params }] of Object.entries(set) as [K, { params: ModelParams }][]) {
    const path = join(dir, file);
    const hash = specHash(params);
    const cached = manifest.files[file];
    if (!opts.force && cached?.hash === hash && (await sizeOf(path)) === cached.size) {
      opts.onLog?.(`cached ${file}`);
    } else {
      const started = performance.now();
      await replaceFileAtomic(path, (tmp) => writeGguf(tmp, makeModelSpec(params)));
      const size = (await sizeOf(path)) ?? 0;
      manifest.files[file] = { hash, size };
      await writeFileAtomic(manifestPath, JSON.stringify(manifest, null, 2) + '\n', 0o644);
      const ms = Math.round(performance.now() - started);
      opts.onLog?.(`generated ${file} (${(size / 1e6).toFixed(1)} MB) in ${ms} ms`);
    }
    out[file] = path;
  }
  return out as Record<K, string>;
}

// ---------------------------------------------------------------- benchmark pair

/**
 * Standard deviations for E = 1024: DEFAULT_SCALES were tuned at E = 128, so every matrix
 * that sums over E (or F) inputs gets sqrt(128 / 1024) of its scale; the output keeps 0.5
 * for wide logit margins.
 */
const BENCH_SCALES: WeightScales = {
  embedding: 1,
  output: 0.5,
  attentionQK: 0.1 * Math.sqrt(128 / 1024),
  attentionVO: 0.05 * Math.sqrt(128 / 1024),
  projection: 0.1 * Math.sqrt(128 / 1024),
};

/**
 * F32, not F16: with F16 matrices llama.cpp's CPU matmul rounds activations to F16, and a
 * batched verify pass then differs from a one-row decode by up to ~0.05 in the logits (measured),
 * enough to flip near-tied greedy choices on 2 of 6 bench prompts; with F32 it is ~0.003 and no
 * prompt flips. F32 also keeps a one-row decode bound by weight reads (~4 bytes per MAC).
 */
const BENCH_BASE: LlamaModelParams = {
  arch: 'llama',
  name: 'power-bench-target',
  vocab: 'default',
  seed: 11,
  dtype: 'f32',
  embd: 1024,
  layers: 12,
  heads: 16,
  kvHeads: 4,
  ff: 2048,
  contextLength: 4096,
  scales: BENCH_SCALES,
};

/**
 * Models big enough that CPU decode is dominated by weight reads, for bench/speculative.ts.
 * Not part of SYNTHETIC_MODELS (the test set): they are large and only the benchmark makes them.
 */
export const BENCH_MODELS = {
  'bench-target.gguf': {
    description: 'llama target: E=1024, 12 blocks, 16/4 heads, F=2048, F32 (~435 MB); blocks 3..11 nearly silent',
    // blocks 3..11 cost a full block each but barely move the residual stream, so the draft
    // (blocks 0..2 of the same weights) agrees with the target's greedy choice ~94% of the time
    // (measured over 8 prompts × 128 tokens, 92-95% per prompt)
    params: { ...BENCH_BASE, residualScale: { fromLayer: 3, scale: 0.02 } },
  },
  'bench-draft.gguf': {
    description: 'draft: the target cut to its first 3 blocks (same weights, ~114 MB)',
    params: { ...BENCH_BASE, name: 'power-bench-draft', layers: 3 },
  },
} satisfies Record<string, { description: string; params: LlamaModelParams }>;

/**
 * The pair on which greedy speculative output first left the control past 256 positions (ggml's
 * CPU Flash Attention split a one-row decode's KV range across threads, docs/exactness.md):
 * bench/flash-attn.ts measures Flash Attention on and off with it, and the long exactness test
 * runs it past 1,024 positions.
 */
export const LONG_MODELS = {
  'long-f16-target.gguf': {
    description: 'llama target: E=1024, 8 blocks, 16/4 heads, F=2048, F16 (~146 MB)',
    params: { ...BENCH_BASE, name: 'power-long-f16-target', dtype: 'f16', layers: 8 },
  },
  'long-f16-draft.gguf': {
    description: 'draft: the target cut to its first 2 blocks, F16 (~39 MB)',
    params: { ...BENCH_BASE, name: 'power-long-f16-draft', dtype: 'f16', layers: 2 },
  },
} satisfies Record<string, { description: string; params: LlamaModelParams }>;

/**
 * The long pair with heads of 128 instead of 64 (8/2 heads over the same width): bench/flash-attn.ts
 * places the head size from which Flash Attention on pays on the CPU (defaultFlashAttn) between
 * this pair's, the long pair's and the real model's (256).
 */
export const LONG_H128_MODELS = {
  'long-h128-f16-target.gguf': {
    description: 'llama target: E=1024, 8 blocks, 8/2 heads of 128, F=2048, F16 (~146 MB)',
    params: { ...BENCH_BASE, name: 'power-long-h128-f16-target', dtype: 'f16', layers: 8, heads: 8, kvHeads: 2 },
  },
  'long-h128-f16-draft.gguf': {
    description: 'draft: the target cut to its first 2 blocks, F16 (~39 MB)',
    params: { ...BENCH_BASE, name: 'power-long-h128-f16-draft', dtype: 'f16', layers: 2, heads: 8, kvHeads: 2 },
  },
} satisfies Record<string, { description: string; params: LlamaModelParams }>;

// ---------------------------------------------------------------- real vocabulary

/**
 * The target and the hybrid again on a real tokenizer: Qwen3.5's gpt2 BPE vocabulary of 151,936
 * tokens with its merges and the qwen35 pre-tokenizer, copied from llama.cpp's bundle
 * (real-vocab.ts), with Q8_0 matrices. The weights are the small synthetic ones (their text is
 * gibberish); the token embedding and the output head over 151,936 rows are most of each file.
 * They exercise the BPE tokenizer, vocabulary-sized heads, logits rows and sampling over V.
 * Not part of SYNTHETIC_MODELS: made on demand into the benchmark cache (`makeModelFiles`).
 */
export const REAL_VOCAB_TARGET: LlamaModelParams = {
  ...TARGET,
  name: 'power-real-vocab-target',
  vocab: 'qwen35',
  seed: 31,
  dtype: 'q8_0',
};

/**
 * The hybrid's trunk writes less into the residual stream than HYBRID's: over 151,936 tokens the
 * top logits lie closer together, and with HYBRID's scales the MTP head (which predicts from the
 * next token's embedding alone) agreed on 2 % of greedy steps. Measured (3 prompts × 300 tokens,
 * greedy, K3): attentionVO/projection 0.04/0.07 → 2 %, 0.02/0.05 → 20 %, 0.015/0.035 → 51 %,
 * 0.01/0.03 → 66 %; output stays loop-free (295–300 distinct tokens of 300) throughout.
 */
const REAL_VOCAB_HYBRID: Qwen35ModelParams = {
  ...HYBRID,
  name: 'power-real-vocab-hybrid-mtp',
  vocab: 'qwen35',
  seed: 34,
  dtype: 'q8_0',
  scales: { embedding: 1, output: 0.5, attentionQK: 0.1, attentionVO: 0.015, projection: 0.035 },
};

export const REAL_VOCAB_MODELS = {
  'real-vocab-target.gguf': {
    description: 'llama target on the qwen35 vocabulary (151,936 tokens): E=128, 4 blocks, 4/2 heads, F=256, Q8_0',
    params: REAL_VOCAB_TARGET,
  },
  'real-vocab-draft.gguf': {
    description: 'the real-vocabulary target plus small noise: its agreeing draft',
    params: { ...REAL_VOCAB_TARGET, name: 'power-real-vocab-draft', perturb: { scale: 0.02, seed: 131 } },
  },
  'real-vocab-hybrid-mtp.gguf': {
    description: 'the qwen35 hybrid (4 trunk blocks + 1 NextN/MTP block) on the qwen35 vocabulary, weaker trunk, Q8_0',
    params: REAL_VOCAB_HYBRID,
  },
} satisfies Record<string, { description: string; params: ModelParams }>;
