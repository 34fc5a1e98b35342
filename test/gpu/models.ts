// Synthetic models for the GPU check, large enough that a GPU matters ('full': a ~1.45 GB F16
// llama target, a 2-block draft that shares its first blocks, embedding and head, and a
// ~0.47 GB qwen35 hybrid with a NextN block) or small for the CPU-side run ('small'), plus the
// target and its draft in Q8_0 and Q4_0 for the audit (does a CUDA verify row equal a one-row
// decode on each weight type's kernels?). The borrowed-machine check (native/checker,
// gpu_models) writes the same three F16 models without Node: test/model/gpu-check-models.test.ts
// holds its specs equal to these and its small files byte-identical to what this writes.
// Weight scales shrink with sqrt(128 / E), so activations and logits keep the spread the
// tuned 128-wide test models have (clear greedy margins, no F16 overflow). The llama target's
// and the hybrid's value paths and projections are 4x weaker still (contextLight), so the 2-block
// draft that shares the target's first blocks, and the hybrid's MTP head, agree with them most of
// the time (measured on CPU at small scale: 78-100% acceptance; with the plain scales a 2-block
// draft agreed 2%, the MTP head on 4 of 2,037 proposals).
import {
  DEFAULT_SCALES,
  type LlamaModelParams,
  type ModelParams,
  type Qwen35ModelParams,
  type WeightScales,
} from '../../tools/models/synthetic.js';

export type Scale = 'full' | 'small';

function scaled(embd: number): WeightScales {
  const k = Math.sqrt(128 / embd);
  return {
    embedding: DEFAULT_SCALES.embedding,
    output: DEFAULT_SCALES.output * k,
    attentionQK: DEFAULT_SCALES.attentionQK * k,
    attentionVO: DEFAULT_SCALES.attentionVO * k,
    projection: DEFAULT_SCALES.projection * k,
  };
}

function contextLight(embd: number): WeightScales {
  const s = scaled(embd);
  return { ...s, attentionVO: s.attentionVO / 4, projection: s.projection / 4 };
}

export const AUDIT_TYPES = ['f16', 'q8_0', 'q4_0'] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];
type GpuModelName = 'gpu-target.gguf' | 'gpu-draft.gguf' | 'gpu-hybrid.gguf' | `gpu-${'target' | 'draft'}-${'q8_0' | 'q4_0'}.gguf`;

/** the audit's target and draft of each weight type (F16: the contract's own pair) */
export function auditPair(type: AuditType): { target: GpuModelName; draft: GpuModelName } {
  return type === 'f16'
    ? { target: 'gpu-target.gguf', draft: 'gpu-draft.gguf' }
    : { target: `gpu-target-${type}.gguf`, draft: `gpu-draft-${type}.gguf` };
}

export function gpuModels(scale: Scale): Record<GpuModelName, { params: ModelParams }> {
  const full = scale === 'full';
  const suffix = full ? '-full' : '';
  const E = full ? 2048 : 256;
  const target: LlamaModelParams = {
    arch: 'llama',
    name: `power-gpu-target${suffix}`,
    vocab: 'default',
    seed: 11,
    dtype: 'f16',
    embd: E,
    layers: full ? 16 : 6,
    heads: full ? 16 : 4,
    kvHeads: full ? 4 : 2,
    ff: full ? 5632 : 704,
    contextLength: 4096,
    scales: contextLight(E),
  };
  const HE = full ? 1024 : 256;
  const hybrid: Qwen35ModelParams = {
    arch: 'qwen35',
    name: `power-gpu-hybrid${suffix}`,
    seed: 12,
    dtype: 'f16',
    embd: HE,
    trunkLayers: full ? 16 : 8,
    heads: full ? 8 : 4,
    kvHeads: 2,
    headDim: full ? 128 : 64,
    ff: full ? 3072 : 768,
    contextLength: 4096,
    fullAttentionInterval: 4, // 3 GatedDeltaNet blocks per attention block, as Qwen3.5
    ropeDims: full ? 64 : 32,
    ropeSections: full ? [11, 11, 10, 0] : [6, 5, 5, 0],
    convKernel: 4,
    stateSize: full ? 128 : 32,
    groupCount: full ? 4 : 2,
    dtRank: full ? 8 : 4,
    innerSize: full ? 1024 : 128,
    mtpBlockScale: 0.1,
    scales: contextLight(HE),
  };
  const draft: LlamaModelParams = { ...target, name: `power-gpu-draft${suffix}`, layers: 2 };
  return {
    'gpu-target.gguf': { params: target },
    // same seed: blocks 0-1, the embedding and the head are the target's own, so it agrees often
    'gpu-draft.gguf': { params: draft },
    'gpu-hybrid.gguf': { params: hybrid },
    'gpu-target-q8_0.gguf': { params: { ...target, name: `${target.name}-q8_0`, dtype: 'q8_0' } },
    'gpu-draft-q8_0.gguf': { params: { ...draft, name: `${draft.name}-q8_0`, dtype: 'q8_0' } },
    'gpu-target-q4_0.gguf': { params: { ...target, name: `${target.name}-q4_0`, dtype: 'q4_0' } },
    'gpu-draft-q4_0.gguf': { params: { ...draft, name: `${draft.name}-q4_0`, dtype: 'q4_0' } },
  };
}
