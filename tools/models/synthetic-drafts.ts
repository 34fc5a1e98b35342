// Synthetic draft artifacts that read a target's hidden states: EAGLE-3, DFlash and DSpark GGUFs
// in the tensor and key layouts llama.cpp's loader expects (its eagle3 and dflash
// model graphs and its architecture table), written for one of the synthetic targets.
//
// "Close" artifacts are built, not trained, from what the synthetic target does. Two facts carry
// them: f(t), the target's greedy next token after [BOS, t] (computed with the target's own
// weights, synthetic-forward.ts), agrees with the target in context ~30% of the time; and the
// target's greedy output tends to settle into loops, where "what followed this token before" is
// what it says next.
//   - eagle3: an induction head over the target's block-1 features, f(t) as its fallback
//     (see eagle3Induction).
//   - dflash (hidden must equal the target's): its own token_embd row t holds codes of f(t),
//     f²(t), f³(t), f⁴(t) (30 dimensions each) and a constant; head h peaks, through RoPE, at
//     distance h+1, so the mask at block position j (non-causal) copies the anchor's code of
//     f^j(anchor); a per-head attention sink absorbs a head whose peak position is not in the
//     block. Its own output scores codes, so position j proposes f^j(anchor) for j ≤ 4.
//   - dspark: the same backbone in the anchor-first layout (position j proposes f^{j+1}) plus the
//     Markov head, a first-order transition table markov_w2·markov_w1[prev] = codes of f(prev),
//     chained in-graph over the argmax of the previous position.
// For the qwen35 hybrid, f is the embedding-only prediction argmax_v output_v · rmsnorm(e_t) (no
// forward pass of the hybrid here).
// Measured with llama-speculative-simple (128 tokens, prompt "the quick brown fox jumps over the
// lazy dog and then", which loops after ~30 tokens), acceptance at K 1/3/7: eagle3-close
// 79/62/42%, dflash-close and dspark-close 33/12/5%, the far ones 0%; hybrid-eagle3-close and
// hybrid-dflash-close on hybrid-mtp.gguf 18/7% at K 1/3 (96 tokens).
// The close dflash/dspark carry the fusion layer (fc) and receive the target's features as real
// ones do, but their weights give the features no say. "Far" artifacts are random weights of the same
// layouts and read the target's token_embd/output through llama.cpp's ctx_other sharing.
import { gv, kv } from '../../app/gguf/types.js';
import type { GgufEntry, GgufModel, GgufTensorSpec } from '../../app/gguf/types.js';
import { TokenType, makeAltVocab, makeVocab, vocabMetadata } from '../../app/models/vocab.js';
import type { Vocab } from '../../app/models/vocab.js';
import { nextAfterPair } from './synthetic-forward.js';
import { addGaussian, f32Tensor } from './synthetic-random.js';
import type { LlamaModelParams, Qwen35ModelParams } from './synthetic.js';

export type DraftTargetParams = LlamaModelParams | Qwen35ModelParams;
/** Writes a target's spec (synthetic.ts passes makeModelSpec: no import cycle). */
export type TargetSpecOf = (target: DraftTargetParams) => GgufModel;

/**
 * Bump when a design below changes the bytes it writes: it is part of every artifact's params,
 * so cached artifacts (and only they) are regenerated.
 */
export const ARTIFACT_REVISION = 2;

interface ArtifactCommon {
  /** ARTIFACT_REVISION when the params were made. */
  revision: number;
  name: string;
  seed: number;
  /** The target the artifact is built for: its weights give the close designs their predictions. */
  target: DraftTargetParams;
  /** Layers of the target whose inputs the artifact reads (`<arch>.target_layers`). */
  targetLayers: number[];
  /** 'close': built to agree with the target; 'far': random weights. */
  design: 'close' | 'far';
  contextLength: number;
}

export interface Eagle3Params extends ArtifactCommon {
  arch: 'eagle3';
  /** Declared `eagle3.target_hidden_size`; defaults to the target's (another value makes a wrong artifact). */
  targetHidden?: number;
  /** A vocabulary other than the target's (a wrong artifact). */
  vocab?: 'default' | 'alt';
}

export interface DflashParams extends ArtifactCommon {
  arch: 'dflash';
  /** `dflash.block_size`: the anchor plus the positions drafted in one pass. */
  blockSize: number;
  /** Adds DSpark's Markov head (markov_w1/markov_w2) and confidence head (conf_proj). */
  dspark?: boolean;
}

export type DraftArtifactParams = Eagle3Params | DflashParams;

// ---------------------------------------------------------------- the target's predictions

const RMS_EPS = 1e-5;
/** Inputs of the close designs' RoPE: a low base keeps every rotary pair fast, so a distance's score stands out. */
const ROPE_BASE = 10;
/** Logit gap (nats) between the attended position and any other: softmax weight e^-40 elsewhere. */
const ATTENTION_GAP = 40;

function tensorOf(spec: GgufModel, name: string): Float32Array {
  const t = spec.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`synthetic target has no ${name}`);
  return t.data();
}

interface TargetWeights {
  /** rmsnorm(token_embd_t), row-major [V][E]. */
  normEmbd: Float32Array;
  /** The target's output matrix, row-major [V][E]. */
  output: Float32Array;
  /**
   * f(t): what the target says next after [BOS, t] (llama targets, from synthetic-forward.ts);
   * for other targets the embedding-only prediction argmax_v output_v · rmsnorm(e_t).
   */
  next: Int32Array;
}

interface TargetView {
  vocab: Vocab;
  embd: number;
  /** Drawn on first use: a spec (and its cache key) is cheap, only writing the file pays. */
  weights: () => TargetWeights;
}

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

const views = new Map<string, TargetView>();

function targetView(target: DraftTargetParams, specOf: TargetSpecOf): TargetView {
  const key = JSON.stringify(target);
  const cached = views.get(key);
  if (cached) return cached;
  // the designs read our synthetic vocabulary (its token types, its BOS): not a bundled tokenizer
  if (target.vocab !== undefined && target.vocab !== 'default' && target.vocab !== 'alt') {
    throw new RangeError(`draft artifacts are built for targets on the synthetic vocabulary, not '${target.vocab}'`);
  }
  const vocab = target.arch === 'llama' && target.vocab === 'alt' ? makeAltVocab() : makeVocab();
  const E = target.embd;
  const V = vocab.tokens.length;
  const weights = lazy((): TargetWeights => {
    const spec = specOf(target);
    const embd = tensorOf(spec, 'token_embd.weight');
    const output = tensorOf(spec, 'output.weight');
    const normEmbd = new Float32Array(V * E);
    for (let t = 0; t < V; t++) {
      let ss = 0;
      for (let i = 0; i < E; i++) ss += (embd[t * E + i] ?? 0) ** 2;
      const inv = 1 / Math.sqrt(ss / E + RMS_EPS);
      for (let i = 0; i < E; i++) normEmbd[t * E + i] = (embd[t * E + i] ?? 0) * inv;
    }
    if (target.arch === 'llama') {
      const tensors = new Map<string, Float32Array>();
      const w = (name: string) => tensors.get(name) ?? tensors.set(name, tensorOf(spec, name)).get(name)!;
      const shape = { ...target, ropeFreqBase: target.ropeFreqBase ?? 10000, rmsEps: target.rmsEps ?? 1e-5 };
      return { normEmbd, output, next: nextAfterPair(shape, w, V, vocab.bos) };
    }
    const next = new Int32Array(V);
    for (let t = 0; t < V; t++) {
      let best = -Infinity;
      for (let v = 0; v < V; v++) {
        let dot = 0;
        for (let i = 0; i < E; i++) dot += (output[v * E + i] ?? 0) * (normEmbd[t * E + i] ?? 0);
        if (dot > best) {
          best = dot;
          next[t] = v;
        }
      }
    }
    return { normEmbd, output, next };
  });
  const view = { vocab, embd: E, weights };
  views.set(key, view);
  return view;
}

/** f^k(t). */
function rollout(view: TargetView, t: number, k: number): number {
  let x = t;
  const { next } = view.weights();
  for (let i = 0; i < k; i++) x = next[x] ?? 0;
  return x;
}

// ---------------------------------------------------------------- RoPE attention that finds a distance

type RopeLayout = 'norm' | 'neox';

/** Indexes of rotary pair p's two dimensions in a head of `dims`. */
function pairDims(layout: RopeLayout, dims: number, p: number): [number, number] {
  return layout === 'norm' ? [2 * p, 2 * p + 1] : [p, p + dims / 2];
}

function theta(dims: number, p: number): number {
  return ROPE_BASE ** ((-2 * p) / dims);
}

/**
 * Σ_p cos(d·θ_p) is the RoPE score of two equal unit-pair vectors at distance d: `dims/2` at d = 0,
 * less anywhere else. Returns the smallest drop over 1 ≤ |d| ≤ `span`.
 */
function ropeGap(dims: number, span: number): number {
  let worst = -Infinity;
  for (let d = 1; d <= span; d++) {
    let s = 0;
    for (let p = 0; p < dims / 2; p++) s += Math.cos(d * theta(dims, p));
    worst = Math.max(worst, s);
  }
  return dims / 2 - worst;
}

/**
 * The query (before RoPE) whose pairs are all (1, 0), and the key that makes the score peak when
 * the query sits `distance` positions after the key: ggml rotates q by pos_q·θ and k by pos_k·θ,
 * so q·k' = q·R(−distance·θ)k, largest for k = R(distance·θ)q.
 */
function peakQK(layout: RopeLayout, dims: number, distance: number): { q: Float32Array; k: Float32Array } {
  const q = new Float32Array(dims);
  const k = new Float32Array(dims);
  for (let p = 0; p < dims / 2; p++) {
    const [a, b] = pairDims(layout, dims, p);
    const phi = distance * theta(dims, p);
    q[a] = 1;
    k[a] = Math.cos(phi);
    k[b] = Math.sin(phi);
  }
  return { q, k };
}

// ---------------------------------------------------------------- codes

/** Deterministic unit-RMS codes, one per token: nearly orthogonal, so code(v)·code(u) peaks at v = u. */
function makeCodes(count: number, dims: number, seedText: string): Float32Array {
  const out = new Float32Array(count * dims);
  addGaussian(out, 1, seedText);
  for (let t = 0; t < count; t++) {
    let ss = 0;
    for (let i = 0; i < dims; i++) ss += (out[t * dims + i] ?? 0) ** 2;
    const inv = 1 / Math.sqrt(ss / dims);
    for (let i = 0; i < dims; i++) out[t * dims + i] = (out[t * dims + i] ?? 0) * inv;
  }
  return out;
}

/**
 * Every token a close design may have to name must win its own code's argmax among the NORMAL
 * tokens (the only ones the target emits); generation fails loudly otherwise.
 */
function checkCodes(codes: Float32Array, dims: number, vocab: Vocab, needed: Iterable<number>): void {
  const normal = vocab.tokenTypes.flatMap((type, id) => (type === TokenType.NORMAL ? [id] : []));
  for (const t of new Set(needed)) {
    let best = -Infinity;
    let arg = -1;
    for (const v of normal) {
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += (codes[v * dims + i] ?? 0) * (codes[t * dims + i] ?? 0);
      if (dot > best) [best, arg] = [dot, v];
    }
    if (arg !== t) throw new Error(`synthetic draft codes collide: token ${t} reads as ${arg}`);
  }
}

// ---------------------------------------------------------------- writing helpers

class Tensors {
  readonly list: GgufTensorSpec[] = [];
  constructor(private readonly seed: number) {}

  exact(name: string, shape: number[], fill: (out: Float32Array) => void): void {
    this.list.push(f32Tensor(name, shape, { value: 0 }, this.seed, fill));
  }

  normal(name: string, shape: number[], std: number): void {
    this.exact(name, shape, (out) => addGaussian(out, std, `${this.seed}/${name}`));
  }

  constant(name: string, shape: number[], value: number): void {
    this.exact(name, shape, (out) => out.fill(value));
  }
}

function headerMetadata(
  arch: string,
  p: ArtifactCommon,
  h: { embd: number; heads: number; headDim: number; ff: number; ropeBase: number; ropeDims?: number; layers?: number },
): GgufEntry[] {
  const pre = `${arch}.`;
  return [
    kv('general.architecture', gv.str(arch)),
    kv('general.name', gv.str(p.name)),
    kv('general.file_type', gv.u32(0)), // ALL_F32
    kv('general.alignment', gv.u32(32)),
    kv(`${pre}context_length`, gv.u32(p.contextLength)),
    kv(`${pre}embedding_length`, gv.u32(h.embd)),
    kv(`${pre}block_count`, gv.u32(h.layers ?? 1)),
    kv(`${pre}feed_forward_length`, gv.u32(h.ff)),
    kv(`${pre}attention.head_count`, gv.u32(h.heads)),
    kv(`${pre}attention.head_count_kv`, gv.u32(h.heads)),
    kv(`${pre}attention.key_length`, gv.u32(h.headDim)),
    kv(`${pre}attention.value_length`, gv.u32(h.headDim)),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(RMS_EPS)),
    kv(`${pre}rope.dimension_count`, gv.u32(h.ropeDims ?? h.headDim)),
    kv(`${pre}rope.freq_base`, gv.f32(h.ropeBase)),
    kv(`${pre}target_layers`, gv.i32s(p.targetLayers)),
  ];
}

// ---------------------------------------------------------------- EAGLE-3

const FF = 256;
const EAGLE3_FAR_HEADS = 4;
const EAGLE3_FAR_HEAD_DIM = 32;
/** Close design: rotary dimensions at the front of each head, the token content after them, unrotated. */
const EAGLE3_ROPE_DIMS = 32;

export function makeEagle3Spec(p: Eagle3Params, specOf: TargetSpecOf): GgufModel {
  const view = targetView(p.target, specOf);
  const vocab = p.vocab === 'alt' ? makeAltVocab() : makeVocab();
  const V = vocab.tokens.length;
  const E = view.embd;
  const targetHidden = p.targetHidden ?? E;
  const close = p.design === 'close';
  // the close design copies the target's embeddings: it needs the target's vocabulary
  if (close && V !== view.vocab.tokens.length) throw new RangeError(`${p.name}: a close eagle3 shares the target's vocabulary`);
  const shape = close
    ? { embd: 2 * E + 1, heads: 3, headDim: EAGLE3_ROPE_DIMS + E, ropeDims: EAGLE3_ROPE_DIMS, ropeBase: ROPE_BASE }
    : { embd: E, heads: EAGLE3_FAR_HEADS, headDim: EAGLE3_FAR_HEAD_DIM, ropeBase: 10000 };
  const metadata: GgufEntry[] = [
    ...headerMetadata('eagle3', p, { ...shape, ff: FF }),
    kv('eagle3.target_hidden_size', gv.u32(targetHidden)),
    kv('eagle3.norm_before_residual', gv.bool(close)),
    ...vocabMetadata(vocab),
  ];
  const t = new Tensors(p.seed);
  if (close) eagle3Induction(t, view, p, targetHidden);
  else eagle3Random(t, p, targetHidden, V !== view.vocab.tokens.length ? V : undefined);
  return { metadata, tensors: t.list };
}

/**
 * The close EAGLE-3: an induction head over the draft's KV cache, with the target's short-context
 * prediction as the fallback. llama.cpp writes position Q of that cache from the pair (token
 * t_{Q+1}, g_Q = fc(target features at Q)); fc passes the input of target block 1, which is mostly
 * the embedding of t_Q. So every cached position holds a bigram (t_Q → t_{Q+1}) of the text so
 * far, and the draft proposes what followed the current token before: what the target does once
 * its greedy output repeats. Where the current token has not occurred, it proposes f(token), the
 * target's next token after [BOS, token].
 *
 * Hidden (2E+1): PRED (what the output reads) | CUR (the current token, which becomes the next
 * step's g, so drafted positions cache the same bigram as verified ones) | a constant 1.
 * Own token_embd row t: [ê_t | ê_f(t) | 1] (ê = rmsnorm of the target's embedding).
 *   head 0: q = k from the constant, RoPE peaks at distance 0 → copies ê_t to CUR;
 *   head 1: q = ê_t, k = g's CUR (t_Q) in unrotated dimensions, v = cached ê_{t_{Q+1}} → PRED;
 *           scores have σ ≈ 1.2 between unrelated tokens and ≈ 12 for the same token, so a
 *           real match takes the head and no match spreads it thin;
 *   head 2: like head 0, copies ê_f(t) to PRED at half weight: it wins only when head 1 is thin.
 * hidden_norm is zero on PRED, so the previous step's proposal stays out of keys and residual;
 * the FFN writes nothing. The output scores PRED against the normalised token embeddings.
 */
function eagle3Induction(t: Tensors, view: TargetView, p: Eagle3Params, targetHidden: number): void {
  const E = view.embd;
  const V = view.vocab.tokens.length;
  const D = 2 * E + 1;
  const PRED = 0;
  const CUR = E;
  const CONST = 2 * E;
  const R = EAGLE3_ROPE_DIMS;
  const Dh = R + E;
  const heads = 3;
  const nIn = 2 * D; // attention reads [attn_norm(token embedding), hidden_norm(g)]
  const G = D; // offset of g in that input
  const nFeat = p.targetLayers.length * targetHidden;
  // fc: the first target layer's input into CUR; tiny, as hidden_norm rescales it anyway
  t.exact('fc.weight', [nFeat, D], (w) => {
    for (let i = 0; i < Math.min(E, targetHidden); i++) w[(CUR + i) * nFeat + i] = 1e-3;
  });
  // every row has norm² = E + E + 1 = D: attn_norm leaves it as it is
  t.exact('token_embd.weight', [D, V], (w) => {
    const { normEmbd } = view.weights();
    for (let v = 0; v < V; v++) {
      const f = rollout(view, v, 1);
      w.set(normEmbd.subarray(v * E, (v + 1) * E), v * D + PRED);
      w.set(normEmbd.subarray(f * E, (f + 1) * E), v * D + CUR);
      w[v * D + CONST] = 1;
    }
  });
  const b = 'blk.0.';
  t.constant(`${b}attn_norm.weight`, [D], 1);
  t.exact(`${b}attn_norm_2.weight`, [D], (w) => w.fill(1, CUR, CUR + E));
  // heads 0 and 2: distance-0 position heads on the constant
  const { q: unit } = peakQK('norm', R, 0);
  const a = Math.sqrt((ATTENTION_GAP * Math.sqrt(Dh)) / ropeGap(R, p.contextLength));
  // head 1: g's CUR arrives as rmsnorm over D dims of a vector living in E of them (× sqrt(D/E)),
  // so unrelated tokens score N(0, β·sqrt(D)/sqrt(Dh)) and the same token ≈ β·0.9·E·sqrt(D/E)/sqrt(Dh)
  const beta = 1.2 * Math.sqrt(Dh / D);
  const off = (h: number) => h * Dh;
  t.exact(`${b}attn_q.weight`, [nIn, heads * Dh], (w) => {
    for (const h of [0, 2]) for (let i = 0; i < R; i++) w[(off(h) + i) * nIn + CONST] = a * (unit[i] ?? 0);
    for (let i = 0; i < E; i++) w[(off(1) + R + i) * nIn + PRED + i] = beta;
  });
  t.exact(`${b}attn_k.weight`, [nIn, heads * Dh], (w) => {
    for (const h of [0, 2]) for (let i = 0; i < R; i++) w[(off(h) + i) * nIn + CONST] = a * (unit[i] ?? 0);
    for (let i = 0; i < E; i++) w[(off(1) + R + i) * nIn + G + CUR + i] = 1;
  });
  // heads 0 and 1 carry the token's embedding, head 2 the embedding of f(token)
  t.exact(`${b}attn_v.weight`, [nIn, heads * Dh], (w) => {
    for (let i = 0; i < E; i++) {
      w[(off(0) + R + i) * nIn + PRED + i] = 1;
      w[(off(1) + R + i) * nIn + PRED + i] = 1;
      w[(off(2) + R + i) * nIn + CUR + i] = 1;
    }
  });
  // head 0 → CUR (×4: the current token outweighs what hidden_norm adds there), head 1 → PRED,
  // head 2 → PRED at half weight
  const nOut = heads * Dh;
  t.exact(`${b}attn_output.weight`, [nOut, D], (w) => {
    for (let i = 0; i < E; i++) {
      w[(CUR + i) * nOut + off(0) + R + i] = 4;
      w[(PRED + i) * nOut + off(1) + R + i] = 1;
      w[(PRED + i) * nOut + off(2) + R + i] = 0.5;
    }
  });
  t.constant(`${b}ffn_norm.weight`, [D], 1);
  t.normal(`${b}ffn_gate.weight`, [D, FF], 0.1);
  t.normal(`${b}ffn_up.weight`, [D, FF], 0.1);
  t.constant(`${b}ffn_down.weight`, [FF, D], 0);
  t.constant('output_norm.weight', [D], 1);
  // logits: PRED · ê_v, scaled for clear margins (ê_v·ê_v = E, others ~N(0, E))
  t.exact('output.weight', [D, V], (w) => {
    const { normEmbd } = view.weights();
    view.vocab.tokenTypes.forEach((type, v) => {
      if (type !== TokenType.NORMAL) return;
      for (let i = 0; i < E; i++) w[v * D + PRED + i] = 0.5 * (normEmbd[v * E + i] ?? 0);
    });
  });
}

/** Random EAGLE-3 weights; with `ownVocab` it brings its own embeddings and head (another vocabulary). */
function eagle3Random(t: Tensors, p: Eagle3Params, targetHidden: number, ownVocab: number | undefined): void {
  const E = p.target.embd;
  const attnOut = EAGLE3_FAR_HEADS * EAGLE3_FAR_HEAD_DIM;
  const nIn = 2 * E;
  const nFeat = p.targetLayers.length * targetHidden;
  t.normal('fc.weight', [nFeat, E], 1 / Math.sqrt(nFeat));
  const b = 'blk.0.';
  t.constant(`${b}attn_norm.weight`, [E], 1);
  t.constant(`${b}attn_norm_2.weight`, [E], 1);
  t.normal(`${b}attn_q.weight`, [nIn, attnOut], 0.1);
  t.normal(`${b}attn_k.weight`, [nIn, attnOut], 0.1);
  t.normal(`${b}attn_v.weight`, [nIn, attnOut], 0.1);
  t.normal(`${b}attn_output.weight`, [attnOut, E], 0.1);
  t.constant(`${b}ffn_norm.weight`, [E], 1);
  t.normal(`${b}ffn_gate.weight`, [E, FF], 0.1);
  t.normal(`${b}ffn_up.weight`, [E, FF], 0.1);
  t.normal(`${b}ffn_down.weight`, [FF, E], 0.1);
  t.constant('output_norm.weight', [E], 1);
  if (ownVocab !== undefined) {
    t.normal('token_embd.weight', [E, ownVocab], 1);
    t.normal('output.weight', [E, ownVocab], 0.5);
  }
}

// ---------------------------------------------------------------- DFlash / DSpark

const DFLASH_CODE_DIM = 30;
const DFLASH_CODED = 4; // code blocks in the embedding: f¹…f⁴
const DFLASH_FAR_HEADS = 4;
const DFLASH_FAR_HEAD_DIM = 32;
/** The mask token of the block: `<unk>`, never emitted by the synthetic targets. */
const MASK_TOKEN = 0;

export function makeDflashSpec(p: DflashParams, specOf: TargetSpecOf): GgufModel {
  const view = targetView(p.target, specOf);
  const vocab = view.vocab;
  const V = vocab.tokens.length;
  const E = view.embd; // DFlash fuses target features into its own hidden: the sizes are equal
  const close = p.design === 'close';
  // the anchor-first layout (DSpark without `sample_from_anchor` = false) drafts at the anchor itself
  const anchorFirst = p.dspark === true;
  const C = DFLASH_CODE_DIM;
  const heads = close ? (anchorFirst ? DFLASH_CODED - 1 : DFLASH_CODED) : DFLASH_FAR_HEADS;
  const headDim = close ? C : DFLASH_FAR_HEAD_DIM;
  const attnOut = heads * headDim;
  const metadata: GgufEntry[] = [
    ...headerMetadata('dflash', p, { embd: E, heads, headDim, ff: FF, ropeBase: close ? ROPE_BASE : 10000 }),
    kv('dflash.block_size', gv.u32(p.blockSize)),
    kv('dflash.vocab_size', gv.u32(V)),
    ...vocabMetadata(vocab),
    kv('tokenizer.ggml.mask_token_id', gv.u32(MASK_TOKEN)),
  ];
  if (p.dspark) metadata.push(kv('dflash.has_confidence_head', gv.bool(true)));
  const t = new Tensors(p.seed);
  const nEnc = p.targetLayers.length * E;
  t.normal('fc.weight', [nEnc, E], 1 / Math.sqrt(nEnc));
  const b = 'blk.0.';
  t.constant(`${b}attn_norm.weight`, [E], 1);
  t.constant(`${b}ffn_norm.weight`, [E], 1);
  t.normal(`${b}ffn_gate.weight`, [E, FF], 0.1);
  t.normal(`${b}ffn_up.weight`, [E, FF], 0.1);
  t.constant('output_norm.weight', [E], 1);
  const codeTable = lazy(() => {
    const codes = makeCodes(V, C, `${p.seed}/codes`);
    const needed = [];
    for (let tok = 0; tok < V; tok++) for (let k = 1; k <= DFLASH_CODED; k++) needed.push(rollout(view, tok, k));
    checkCodes(codes, C, vocab, needed);
    return codes;
  });
  if (close) {
    const CONST = E - 1;
    // the target's features reach the cache as zero keys and values: output_norm_enc = 0
    t.constant('enc.output_norm.weight', [E], 0);
    // own token_embd row t: [code f¹(t) | code f²(t) | code f³(t) | code f⁴(t) | 0… | 1]; the mask: [0… | 1]
    t.exact('token_embd.weight', [E, V], (w) => {
      for (let tok = 0; tok < V; tok++) {
        w[tok * E + CONST] = 1;
        if (tok === MASK_TOKEN) continue;
        for (let k = 1; k <= DFLASH_CODED; k++)
          w.set(codeTable().subarray(rollout(view, tok, k) * C, (rollout(view, tok, k) + 1) * C), tok * E + (k - 1) * C);
      }
    });
    // head h finds the position h+1 before the query (h+1 … in the anchor-first layout, reading
    // code block h+1, since the anchor's own residual already proposes f¹ at position 0)
    const distance = (h: number) => h + 1;
    const codeBlock = (h: number) => (anchorFirst ? h + 1 : h);
    // q/k are RMS-normed per head, then scaled by attn_{q,k}_norm: s² · Σ_p cos(…) · 2 / sqrt(C)
    const gap = ropeGap(C, p.contextLength + p.blockSize);
    const s = Math.sqrt((ATTENTION_GAP * Math.sqrt(C)) / (2 * gap));
    t.exact(`${b}attn_q.weight`, [E, attnOut], (w) => {
      const { q } = peakQK('neox', C, 0);
      for (let h = 0; h < heads; h++) for (let i = 0; i < C; i++) w[(h * C + i) * E + CONST] = q[i] ?? 0;
    });
    t.exact(`${b}attn_k.weight`, [E, attnOut], (w) => {
      for (let h = 0; h < heads; h++) {
        const { k } = peakQK('neox', C, distance(h));
        for (let i = 0; i < C; i++) w[(h * C + i) * E + CONST] = k[i] ?? 0;
      }
    });
    t.constant(`${b}attn_q_norm.weight`, [C], s);
    t.constant(`${b}attn_k_norm.weight`, [C], s);
    t.exact(`${b}attn_v.weight`, [E, attnOut], (w) => {
      for (let h = 0; h < heads; h++) for (let i = 0; i < C; i++) w[(h * C + i) * E + codeBlock(h) * C + i] = 1;
    });
    // every head writes into code block 0, which the output reads
    t.exact(`${b}attn_output.weight`, [attnOut, E], (w) => {
      for (let h = 0; h < heads; h++) for (let i = 0; i < C; i++) w[i * attnOut + h * C + i] = 1;
    });
    // a sink between the peak score and the best other score: a head whose peak position is
    // not in the block (or is a mask) attends to nothing
    const peak = (s * s * (C / 2) * 2) / Math.sqrt(C);
    t.constant(`${b}attn_sinks.weight`, [heads], peak - ATTENTION_GAP / 2);
    t.constant(`${b}ffn_down.weight`, [FF, E], 0);
    t.exact('output.weight', [E, V], (w) => {
      vocab.tokenTypes.forEach((type, v) => {
        if (type === TokenType.NORMAL) w.set(codeTable().subarray(v * C, (v + 1) * C), v * E);
      });
    });
  } else {
    t.constant('enc.output_norm.weight', [E], 1);
    t.normal(`${b}attn_q.weight`, [E, attnOut], 0.1);
    t.normal(`${b}attn_k.weight`, [E, attnOut], 0.1);
    t.normal(`${b}attn_v.weight`, [E, attnOut], 0.1);
    t.normal(`${b}attn_output.weight`, [attnOut, E], 0.1);
    t.constant(`${b}attn_q_norm.weight`, [headDim], 1);
    t.constant(`${b}attn_k_norm.weight`, [headDim], 1);
    t.normal(`${b}ffn_down.weight`, [FF, E], 0.1);
  }
  if (p.dspark) {
    // Markov head: bias_v = markov_w2_v · markov_w1[prev] = code(v) · code(f(prev))
    t.exact('markov_w1.weight', [C, V], (w) => {
      for (let tok = 0; tok < V; tok++) w.set(codeTable().subarray(rollout(view, tok, 1) * C, (rollout(view, tok, 1) + 1) * C), tok * C);
    });
    t.exact('markov_w2.weight', [C, V], (w) => {
      vocab.tokenTypes.forEach((type, v) => {
        if (type === TokenType.NORMAL) w.set(codeTable().subarray(v * C, (v + 1) * C), v * C);
      });
    });
    // confidence sigmoid(2) ≈ 0.88 everywhere: present, as in real DSpark exports, but neutral
    t.constant('conf_proj.weight', [E + C, 1], 0);
    t.constant('conf_proj.bias', [1], 2);
  }
  return { metadata, tensors: t.list };
}

export function makeDraftArtifactSpec(p: DraftArtifactParams, specOf: TargetSpecOf): GgufModel {
  return p.arch === 'eagle3' ? makeEagle3Spec(p, specOf) : makeDflashSpec(p, specOf);
}
