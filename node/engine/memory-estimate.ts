// Device memory a generation needs, estimated from the GGUF headers before anything is loaded,
// so a model that does not fit is refused with numbers instead of failing inside CUDA.
// Pure: GgufInfo in, bytes out. Mirrors llama.cpp v0.4.0's placement rules:
//   - with N GPU layers, blocks i >= n_layer + 1 - N and (N >= 1) the output head go to the GPU;
//     NextN/MTP blocks count only when they are loaded;
//     the token embedding always stays on the CPU (a tied output head is a GPU copy of it);
//   - KV cache (F16) per attention block: n_ctx x kv_heads x (key_len + value_len) x 2 bytes;
//   - recurrent state (F32) per recurrent block: (n_embd_r + n_embd_s) x 4 bytes x (1 + S),
//     n_embd_r = (conv_kernel - 1)(inner + 2 groups state), n_embd_s = state x inner.
// Compute buffers are a heuristic (logits rows + activations, plus the attention score matrix
// when Flash Attention is off) and a fixed reserve covers cuBLAS workspaces and fragmentation.
import type { GgufInfo, GgufValue } from '../gguf/types.js';

export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;
/** cuBLAS workspaces, allocator slack: measured estimates are never exact */
export const RESERVE_BYTES = 256 * MIB;

export interface ModelPlacement {
  /** weights on the device */
  weights: number;
  kv: number;
  recurrent: number;
  blocks: number;
  offloadedBlocks: number;
  embd: number;
  vocab: number;
  heads: number;
}

export interface MemoryPlan {
  target: GgufInfo;
  draft?: GgufInfo;
  contextSize: number;
  /** prompt tokens per decode (the ubatch) */
  batchSize: number;
  /** -1: all */
  gpuLayers: number;
  /** spec_mtp_recurrent_snapshots; only recurrent blocks pay for it */
  s: number;
  flashAttn: boolean;
  /** the NextN/MTP blocks are loaded (llama.cpp skips them otherwise) */
  loadMtp?: boolean;
}

export interface MemoryEstimate {
  weights: number;
  kv: number;
  recurrent: number;
  draft: number;
  compute: number;
  reserve: number;
  total: number;
}

function scalar(v: GgufValue | undefined, layer: number): number | undefined {
  if (!v) return undefined;
  if (v.type === 'array') {
    const item = v.value[layer] ?? v.value[0];
    return typeof item === 'number' ? item : typeof item === 'bigint' ? Number(item) : undefined;
  }
  if (typeof v.value === 'number') return v.value;
  if (typeof v.value === 'bigint') return Number(v.value);
  return undefined;
}

/** A per-architecture hyperparameter (per block when the file stores an array). */
function hp(info: GgufInfo, key: string, layer = 0): number | undefined {
  const arch = info.metadata.get('general.architecture');
  if (!arch || arch.type !== 'string') return undefined;
  return scalar(info.metadata.get(`${arch.value}.${key}`), layer);
}

/** Where a model's bytes go with `gpuLayers` on the device, and its per-token caches there. */
export function modelPlacement(
  info: GgufInfo,
  plan: Pick<MemoryPlan, 'contextSize' | 'gpuLayers' | 's' | 'loadMtp'>,
): ModelPlacement {
  const blocks = hp(info, 'block_count') ?? 0;
  // NextN/MTP blocks are the last ones; unused (never allocated) unless loaded
  const firstNextn = plan.loadMtp ? blocks : blocks - (hp(info, 'nextn_predict_layers') ?? 0);
  const embd = hp(info, 'embedding_length') ?? 0;
  const heads = hp(info, 'attention.head_count') ?? 1;
  const n = plan.gpuLayers < 0 ? blocks + 1 : plan.gpuLayers;
  const firstGpu = Math.max(blocks + 1 - n, 0);

  const perBlock = new Map<number, { bytes: number; attention: boolean; recurrent: boolean }>();
  let output = 0;
  let embedding = 0;
  let hasOutput = false;
  let vocab = 0;
  for (const t of info.tensors) {
    const m = /^blk\.(\d+)\.(.*)$/.exec(t.name);
    if (m) {
      const b = perBlock.get(Number(m[1])) ?? { bytes: 0, attention: false, recurrent: false };
      b.bytes += t.byteSize;
      if (m[2]!.startsWith('ssm_')) b.recurrent = true;
      else if (m[2]!.startsWith('attn_k') || m[2]!.startsWith('attn_qkv')) b.attention = true;
      perBlock.set(Number(m[1]), b);
    } else if (t.name === 'token_embd.weight') {
      embedding = t.byteSize;
      vocab = t.shape[1] ?? 0;
    } else if (t.name.startsWith('output')) {
      output += t.byteSize;
      if (t.name === 'output.weight') hasOutput = true;
    }
  }
  // llama.cpp puts a tied output head on the output device as a copy of the embedding
  if (!hasOutput) output += embedding;

  const ctx = plan.contextSize;
  const convKernel = hp(info, 'ssm.conv_kernel') ?? 0;
  const inner = hp(info, 'ssm.inner_size') ?? 0;
  const state = hp(info, 'ssm.state_size') ?? 0;
  const groups = hp(info, 'ssm.group_count') ?? 0;
  const recurrentRow = (Math.max(convKernel - 1, 0) * (inner + 2 * groups * state) + state * inner) * 4;

  let weights = n >= 1 ? output : 0;
  let kv = 0;
  let recurrent = 0;
  let offloadedBlocks = 0;
  for (const [i, b] of perBlock) {
    if (i < firstGpu || i >= firstNextn) continue;
    offloadedBlocks++;
    weights += b.bytes;
    if (b.recurrent) {
      recurrent += recurrentRow * (1 + plan.s);
    } else if (b.attention) {
      const kvHeads = hp(info, 'attention.head_count_kv', i) ?? heads;
      const keyLen = hp(info, 'attention.key_length', i) ?? embd / heads;
      const valueLen = hp(info, 'attention.value_length', i) ?? embd / heads;
      kv += ctx * kvHeads * (keyLen + valueLen) * 2;
    }
  }
  return { weights, kv, recurrent, blocks, offloadedBlocks, embd, vocab, heads };
}

function computeBytes(p: ModelPlacement, plan: MemoryPlan): number {
  if (p.offloadedBlocks === 0) return 0;
  // logits rows and a few activation-sized buffers per ubatch row, F32
  const rows = plan.batchSize * (p.vocab + 16 * p.embd) * 4;
  // without Flash Attention the K·Q score matrix of one block is materialised
  const scores = plan.flashAttn ? 0 : plan.batchSize * plan.contextSize * p.heads * 4;
  return rows + scores;
}

export function estimateMemory(plan: MemoryPlan): MemoryEstimate {
  const target = modelPlacement(plan.target, plan);
  // the draft is fully offloaded with its own context of the same size; it is never recurrent here
  const draftPlacement = plan.draft ? modelPlacement(plan.draft, { ...plan, gpuLayers: -1, s: 0 }) : null;
  const draft = draftPlacement ? draftPlacement.weights + draftPlacement.kv + draftPlacement.recurrent : 0;
  const compute = computeBytes(target, plan) + (draftPlacement ? computeBytes(draftPlacement, plan) : 0);
  const reserve = target.offloadedBlocks > 0 ? RESERVE_BYTES : 0;
  const total = target.weights + target.kv + target.recurrent + draft + compute + reserve;
  return { weights: target.weights, kv: target.kv, recurrent: target.recurrent, draft, compute, reserve, total };
}

export function formatBytes(n: number): string {
  return n >= GIB ? `${(n / GIB).toFixed(2)} GiB` : `${(n / MIB).toFixed(1)} MiB`;
}

/** One line: the total and its parts. */
export function describeEstimate(e: MemoryEstimate, plan: Pick<MemoryPlan, 'contextSize' | 's'>): string {
  const parts = [
    `weights ${formatBytes(e.weights)}`,
    `KV ${formatBytes(e.kv)} at ${plan.contextSize} ctx`,
    ...(e.recurrent > 0 ? [`recurrent state ${formatBytes(e.recurrent)} with S=${plan.s}`] : []),
    ...(e.draft > 0 ? [`draft ${formatBytes(e.draft)}`] : []),
    `compute ${formatBytes(e.compute)}`,
    `reserve ${formatBytes(e.reserve)}`,
  ];
  return `${formatBytes(e.total)} (${parts.join(', ')})`;
}

/** null when it fits in `freeBytes`, else the refusal with numbers. */
export function checkFit(e: MemoryEstimate, plan: Pick<MemoryPlan, 'contextSize' | 's'>, device: { name: string; freeBytes: number }): string | null {
  if (e.total <= device.freeBytes) return null;
  return (
    `not enough memory on ${device.name}: needs about ${describeEstimate(e, plan)} but ${formatBytes(device.freeBytes)} is free; ` +
    'lower --ctx, offload fewer layers with --gpu-layers N, use a smaller model or --device cpu'
  );
}
