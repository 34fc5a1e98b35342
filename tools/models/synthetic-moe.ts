// A tiny synthetic Mixture-of-Experts target (llama.cpp's `qwen3moe`: Q/K-normed attention, a
// router over 8 experts of which each token uses 2) and its agreeing draft, for the MoE offload
// tests (--cpu-moe, --n-cpu-moe: the expert tensors `blk.N.ffn_(up|down|gate)_exps` in host
// memory) and exact speculative decoding on a MoE target. Deterministic like the rest of the
// synthetic set (each tensor drawn from the model seed and its own name); made on demand
// (`moeModels`, `makeMoeModels`), cached by a manifest of its own next to the files, so the
// files of SYNTHETIC_MODELS are never touched. A quantized pair (Q4_0 gate and up experts, Q8_0
// down experts and other matrices) puts the expert products on the CPU's quantized kernels: the
// Q4_0 experts in ggml's repacked buffer where the CPU has a layout for them (x86 AVX2, ARM), the
// Q8_0 ones on vec_dot.
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { gv, kv, type GgufEntry, type GgufModel, type GgufTensorSpec } from '../../app/gguf/types.js';
import { makeVocab, TokenType, vocabMetadata } from '../../app/models/vocab.js';
import { replaceFileAtomic, writeFileAtomic } from '../../app/service/storage/atomic-file.js';
import type { QuantType } from '../gguf/quantize.js';
import { writeGguf } from '../gguf/writer.js';
import { addGaussian, f32Tensor, type F32Init } from './synthetic-random.js';

/** Bump when the way tensors are drawn changes (the spec hash covers the params and metadata). */
export const MOE_GENERATOR_VERSION = 1;

export interface Qwen3MoeParams {
  arch: 'qwen3moe';
  name: string;
  seed: number;
  embd: number;
  layers: number;
  heads: number;
  kvHeads: number;
  /** experts per block, and how many each token is routed to */
  experts: number;
  expertsUsed: number;
  /** hidden size of one expert's FFN */
  expertFf: number;
  contextLength: number;
  /** Gaussian noise of `scale`·(tensor std) added to every random tensor (a draft of the same weights) */
  perturb?: { scale: number; seed: number };
  /**
   * quantized storage (absent: every tensor F32): the gate, up and down expert matrices, and the
   * other matrices (attention, embedding, output); the router and the norms stay F32, as
   * llama.cpp's quantizer leaves them
   */
  quant?: { gateExps: QuantType; upExps: QuantType; downExps: QuantType; matrices: QuantType };
}

// llama_ftype of the expert storage: MOSTLY_Q4_0 or MOSTLY_Q8_0 (ALL_F32 without `quant`)
const FILE_TYPES: Record<QuantType, number> = { q4_0: 2, q8_0: 7 };

// the synthetic set's DEFAULT_SCALES (tools/models/synthetic.ts): clear logit margins at E = 128
const SCALES = { embedding: 1, output: 0.5, attentionQK: 0.1, attentionVO: 0.05, projection: 0.1, router: 1 };

/** The GGUF of a qwen3moe model on the default synthetic vocabulary, F32 or as `p.quant` says. */
export function makeQwen3MoeSpec(p: Qwen3MoeParams): GgufModel {
  const vocab = makeVocab();
  const V = vocab.tokens.length;
  const E = p.embd;
  const D = E / p.heads;
  if (!Number.isInteger(D) || p.heads % p.kvHeads !== 0 || p.expertsUsed > p.experts) throw new RangeError(`bad layout for ${p.name}`);
  const pre = 'qwen3moe.';
  const metadata: GgufEntry[] = [
    kv('general.architecture', gv.str('qwen3moe')),
    kv('general.name', gv.str(p.name)),
    kv('general.file_type', gv.u32(p.quant ? FILE_TYPES[p.quant.gateExps] : 0)),
    kv('general.alignment', gv.u32(32)),
    kv(`${pre}context_length`, gv.u32(p.contextLength)),
    kv(`${pre}embedding_length`, gv.u32(E)),
    kv(`${pre}block_count`, gv.u32(p.layers)),
    kv(`${pre}feed_forward_length`, gv.u32(p.expertFf * p.expertsUsed)),
    kv(`${pre}expert_feed_forward_length`, gv.u32(p.expertFf)),
    kv(`${pre}expert_count`, gv.u32(p.experts)),
    kv(`${pre}expert_used_count`, gv.u32(p.expertsUsed)),
    kv(`${pre}attention.head_count`, gv.u32(p.heads)),
    kv(`${pre}attention.head_count_kv`, gv.u32(p.kvHeads)),
    kv(`${pre}attention.key_length`, gv.u32(D)),
    kv(`${pre}attention.value_length`, gv.u32(D)),
    kv(`${pre}attention.layer_norm_rms_epsilon`, gv.f32(1e-6)),
    kv(`${pre}rope.dimension_count`, gv.u32(D)),
    kv(`${pre}rope.freq_base`, gv.f32(1000000)),
    kv(`${pre}vocab_size`, gv.u32(V)),
    ...vocabMetadata(vocab),
  ];
  const tensors: GgufTensorSpec[] = [];
  const storage = (name: string): GgufTensorSpec['type'] => {
    const q = p.quant;
    if (!q || name.endsWith('_norm.weight') || name.endsWith('ffn_gate_inp.weight')) return 'f32';
    if (name.endsWith('ffn_gate_exps.weight')) return q.gateExps;
    if (name.endsWith('ffn_up_exps.weight')) return q.upExps;
    if (name.endsWith('ffn_down_exps.weight')) return q.downExps;
    return q.matrices;
  };
  const add = (name: string, shape: number[], init: F32Init, post?: (d: Float32Array) => void): void => {
    const tensor = f32Tensor(name, shape, init, p.seed, (out) => {
      if (!('value' in init) && p.perturb && p.perturb.scale > 0) {
        addGaussian(out, p.perturb.scale * init.std, `perturb/${p.perturb.seed}/${name}`);
      }
      post?.(out);
    });
    tensors.push({ ...tensor, type: storage(name) });
  };
  const one = { value: 1 };
  add('token_embd.weight', [E, V], { std: SCALES.embedding });
  for (let i = 0; i < p.layers; i++) {
    const b = `blk.${i}.`;
    add(`${b}attn_norm.weight`, [E], one);
    add(`${b}attn_q.weight`, [E, p.heads * D], { std: SCALES.attentionQK });
    add(`${b}attn_k.weight`, [E, p.kvHeads * D], { std: SCALES.attentionQK });
    add(`${b}attn_v.weight`, [E, p.kvHeads * D], { std: SCALES.attentionVO });
    add(`${b}attn_output.weight`, [p.heads * D, E], { std: SCALES.attentionVO });
    add(`${b}attn_q_norm.weight`, [D], one);
    add(`${b}attn_k_norm.weight`, [D], one);
    add(`${b}ffn_norm.weight`, [E], one);
    add(`${b}ffn_gate_inp.weight`, [E, p.experts], { std: SCALES.router });
    add(`${b}ffn_gate_exps.weight`, [E, p.expertFf, p.experts], { std: SCALES.projection });
    add(`${b}ffn_up_exps.weight`, [E, p.expertFf, p.experts], { std: SCALES.projection });
    add(`${b}ffn_down_exps.weight`, [p.expertFf, E, p.experts], { std: SCALES.projection });
  }
  add('output_norm.weight', [E], one);
  // non-NORMAL tokens (control, byte, unknown) get logit 0, far below the winners: readable
  // greedy text that never ends a turn by itself (as the rest of the synthetic set)
  add('output.weight', [E, V], { std: SCALES.output }, (data) => {
    vocab.tokenTypes.forEach((type, id) => {
      if (type !== TokenType.NORMAL) data.fill(0, id * E, (id + 1) * E);
    });
  });
  return { metadata, tensors };
}

const MOE_TARGET: Qwen3MoeParams = {
  arch: 'qwen3moe',
  name: 'power-synthetic-moe-target',
  seed: 41,
  embd: 128,
  layers: 4,
  heads: 4,
  kvHeads: 2,
  experts: 8,
  expertsUsed: 2,
  expertFf: 64,
  contextLength: 2048,
};

// the storage of a Q4_0 MoE release: the gate and up experts, most of the weights, in four bits;
// the down experts in eight (llama.cpp's mixes give ffn_down more bits too), and the rest
const MOE_QUANT: NonNullable<Qwen3MoeParams['quant']> = { gateExps: 'q4_0', upExps: 'q4_0', downExps: 'q8_0', matrices: 'q8_0' };

export const MOE_MODELS = {
  'moe-target.gguf': {
    description: 'qwen3moe target: E=128, 4 blocks, 4/2 heads, 8 experts (2 per token) of F=64, F32',
    params: MOE_TARGET,
  },
  'moe-draft-close.gguf': {
    description: 'the MoE target plus small noise: its agreeing draft (draft-model)',
    params: { ...MOE_TARGET, name: 'power-synthetic-moe-draft-close', perturb: { scale: 0.02, seed: 141 } },
  },
  'moe-target-q4.gguf': {
    description: 'the MoE target quantized: Q4_0 gate and up experts, Q8_0 down experts, attention, embedding and output',
    params: { ...MOE_TARGET, name: 'power-synthetic-moe-target-q4', quant: MOE_QUANT },
  },
  'moe-draft-close-q4.gguf': {
    description: 'moe-draft-close quantized as moe-target-q4: its agreeing draft',
    params: { ...MOE_TARGET, name: 'power-synthetic-moe-draft-close-q4', perturb: { scale: 0.02, seed: 141 }, quant: MOE_QUANT },
  },
} satisfies Record<string, { description: string; params: Qwen3MoeParams }>;

export type MoeModelSet = Record<keyof typeof MOE_MODELS, string>;

function specHash(params: Qwen3MoeParams): string {
  const { metadata } = makeQwen3MoeSpec(params);
  const text = JSON.stringify({ v: MOE_GENERATOR_VERSION, params, scales: SCALES, metadata }, (_k, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  return createHash('sha256').update(text).digest('hex');
}

const MANIFEST = 'moe-manifest.json';

/** Writes (or reuses from `outDir`) the MoE models; returns their absolute paths. */
export async function makeMoeModels(outDir: string, opts: { force?: boolean; onLog?: (line: string) => void } = {}): Promise<MoeModelSet> {
  const dir = resolve(outDir);
  await mkdir(dir, { recursive: true });
  const manifestPath = join(dir, MANIFEST);
  let manifest: Record<string, { hash: string; size: number }> = {};
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as typeof manifest;
  } catch {
    // missing or corrupt: written again
  }
  const out: Partial<MoeModelSet> = {};
  for (const [file, { params }] of Object.entries(MOE_MODELS) as [keyof typeof MOE_MODELS, { params: Qwen3MoeParams }][]) {
    const path = join(dir, file);
    const hash = specHash(params);
    const size = await stat(path).then(
      (s) => s.size,
      () => undefined,
    );
    if (!opts.force && manifest[file]?.hash === hash && manifest[file]?.size === size) {
      opts.onLog?.(`cached ${file}`);
    } else {
      await replaceFileAtomic(path, (tmp) => writeGguf(tmp, makeQwen3MoeSpec(params)));
      manifest[file] = { hash, size: (await stat(path)).size };
      await writeFileAtomic(manifestPath, JSON.stringify(manifest, null, 2) + '\n', 0o644);
      opts.onLog?.(`generated ${file}`);
    }
    out[file] = path;
  }
  return out as MoeModelSet;
}
