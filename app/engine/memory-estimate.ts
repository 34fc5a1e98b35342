// Device memory a generation needs, estimated from the GGUF headers before anything is loaded,
// so a model that does not fit is refused with numbers instead of failing inside CUDA.
// Pure: GgufInfo in, bytes out. Mirrors llama.cpp v0.4.0's placement rules:
//   - with N GPU layers, blocks i >= n_layer + 1 - N and (N >= 1) the output head go to the GPU;
//     NextN/MTP blocks count only when they are loaded;
//     the token embedding always stays on the CPU (a tied output head is a GPU copy of it);
//   - KV cache (F16) per attention block: n_ctx x kv_heads x (key_len + value_len) x 2 bytes;
//   - recurrent state (F32) per recurrent block: (n_embd_r + n_embd_s) x 4 bytes x (1 + S),
//     n_embd_r = (conv_kernel - 1)(inner + 2 groups state), n_embd_s = state x inner.
// A paired multimodal projector (mtmd's clip model) puts all its weights on the first device.
// Compute buffers are a heuristic (logits rows + activations, plus the attention score matrix
// when Flash Attention is off) and a fixed reserve covers cuBLAS workspaces and fragmentation.
import type { GgufInfo, GgufValue } from '../gguf/types.js';
import type { AttentionShape } from './device-select.js';

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
  /** the paired multimodal projector (`mmproj-*.gguf`): its weights are counted whole */
  projector?: GgufInfo;
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
  /** --cpu-moe: every expert tensor stays in host memory */
  cpuMoe?: boolean;
  /** --n-cpu-moe N: the expert tensors of blocks 0..N-1 stay in host memory */
  nCpuMoe?: number;
}

/** llama.cpp's LLM_FFN_EXPS_REGEX (common.h): the expert tensors that --cpu-moe keeps in host memory. */
const EXPERT_TENSOR = /\.ffn_(up|down|gate|gate_up)_(ch|)exps/;

/** A Mixture-of-Experts model: its expert products take ggml's mul_mat_id, which not every flavour makes batch-invariant. */
export function hasExpertTensors(info: Pick<GgufInfo, 'tensors'>): boolean {
  return info.tensors.some((t) => t.name.startsWith('blk.') && EXPERT_TENSOR.test(t.name));
}

/** Whether tensor `rest` (its name after `blk.N.`) of block `block` stays in host memory by --cpu-moe / --n-cpu-moe. */
export function expertOnHost(block: number, rest: string, plan: Pick<MemoryPlan, 'cpuMoe' | 'nCpuMoe'>): boolean {
  if (!plan.cpuMoe && !(plan.nCpuMoe && block < plan.nCpuMoe)) return false;
  return EXPERT_TENSOR.test(`.${rest}`);
}

/** One sequence's recurrent state (conv and SSM state, F32) of a recurrent or hybrid model's block. */
function recurrentRowBytes(info: GgufInfo): number {
  const convKernel = hp(info, 'ssm.conv_kernel') ?? 0;
  const inner = hp(info, 'ssm.inner_size') ?? 0;
  const state = hp(info, 'ssm.state_size') ?? 0;
  const groups = hp(info, 'ssm.group_count') ?? 0;
  return (Math.max(convKernel - 1, 0) * (inner + 2 * groups * state) + state * inner) * 4;
}

export interface MemoryEstimate {
  weights: number;
  kv: number;
  recurrent: number;
  draft: number;
  projector: number;
  compute: number;
  reserve: number;
  total: number;
}

/** Bytes of a projector's weights (the clip model keeps every tensor on its device). */
export function projectorBytes(info: GgufInfo | undefined): number {
  return info ? info.tensors.reduce((a, t) => a + t.byteSize, 0) : 0;
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
export function hp(info: GgufInfo, key: string, layer = 0): number | undefined {
  const arch = info.metadata.get('general.architecture');
  if (!arch || arch.type !== 'string') return undefined;
  return scalar(info.metadata.get(`${arch.value}.${key}`), layer);
}

/** The attention shape that picks the CPU's Flash Attention default (defaultFlashAttn). */
export function attentionShape(info: GgufInfo): AttentionShape {
  const embd = hp(info, 'embedding_length') ?? 0;
  const heads = hp(info, 'attention.head_count') ?? 1;
  return {
    headSize: hp(info, 'attention.key_length') ?? (heads > 0 ? embd / heads : 0),
    slidingWindow: (hp(info, 'attention.sliding_window') ?? 0) > 0,
  };
}

/** Where a model's bytes go with `gpuLayers` on the device, and its per-token caches there. */
export function modelPlacement(
  info: GgufInfo,
  plan: Pick<MemoryPlan, 'contextSize' | 'gpuLayers' | 's' | 'loadMtp' | 'cpuMoe' | 'nCpuMoe'>,
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
      if (!expertOnHost(Number(m[1]), m[2]!, plan)) b.bytes += t.byteSize;
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
  const recurrentRow = recurrentRowBytes(info);

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
  const projector = projectorBytes(plan.projector);
  const total = target.weights + target.kv + target.recurrent + draft + projector + compute + reserve;
  return { weights: target.weights, kv: target.kv, recurrent: target.recurrent, draft, projector, compute, reserve, total };
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
    ...(e.projector > 0 ? [`projector ${formatBytes(e.projector)}`] : []),
    `compute ${formatBytes(e.compute)}`,
    `reserve ${formatBytes(e.reserve)}`,
  ];
  return `${formatBytes(e.total)} (${parts.join(', ')})`;
}

/** null when it fits in `freeBytes`, else the refusal with numbers. */
export function checkFit(
  e: MemoryEstimate,
  plan: Pick<MemoryPlan, 'contextSize' | 's'>,
  device: { name: string; freeBytes: number },
): string | null {
  if (e.total <= device.freeBytes) return null;
  return (
    `not enough memory on ${device.name}: needs about ${describeEstimate(e, plan)} but ${formatBytes(device.freeBytes)} is free; ` +
    'lower --ctx, offload fewer layers with --gpu-layers N, use a smaller model or --device cpu'
  );
}

// ---------------------------------------------------------------- a split over several devices

/** One device of a split, in the order llama.cpp is given them. */
export interface SplitDevice {
  name: string;
  description: string;
  freeBytes: number;
  /** a remote (RPC) device */
  remote: boolean;
  /** a CUDA device: the only kind with a row-split buffer (the others fall back to layers) */
  cuda?: boolean;
}

export interface SplitParams {
  splitMode?: 'layer' | 'row' | 'none';
  /** proportions per device; absent or all zero: by free memory (llama.cpp's default) */
  tensorSplit?: readonly number[];
  mainGpu?: number;
  /** index of the device the draft goes to; -1 (or absent): the host */
  draftDevice?: number;
}

/** What one device (or the host, `device: null`) holds of a split, and the memory that takes. */
export interface DeviceShare extends MemoryEstimate {
  /** null: this machine's host memory (the CPU) */
  device: SplitDevice | null;
  /** the model's blocks it holds */
  blocks: number[];
  /** it holds the output head */
  output: boolean;
}

/**
 * llama.cpp's split points (llama-model.cpp, load_tensors): the proportions per device (the
 * tensor split, else the free memory), cumulated and normalised; layer `il` of the
 * `active` offloaded ones from `firstGpu` on goes to the first device whose point lies above
 * (il - firstGpu) / active. -1: the host.
 */
export function layerDevices(blocks: number, gpuLayers: number, devices: readonly SplitDevice[], split: SplitParams): number[] {
  const n = gpuLayers < 0 ? blocks + 1 : gpuLayers;
  const firstGpu = Math.max(blocks + 1 - n, 0);
  const active = devices.length === 0 ? 0 : Math.min(n, blocks + 1);
  const given = split.tensorSplit && split.tensorSplit.some((x) => x > 0) ? devices.map((_, i) => split.tensorSplit![i] ?? 0) : null;
  const weights = given ?? devices.map((d) => d.freeBytes);
  const sum = weights.reduce((a, b) => a + b, 0);
  const points: number[] = [];
  let acc = 0;
  for (const w of weights) points.push(sum > 0 ? (acc += w) / sum : 1);
  const out: number[] = [];
  for (let il = 0; il <= blocks; il++) {
    if (il < firstGpu || il - firstGpu >= active) {
      out.push(-1);
      continue;
    }
    const x = (il - firstGpu) / active;
    const i = points.findIndex((p) => p > x);
    out.push(i < 0 ? devices.length - 1 : i);
  }
  return out;
}

/**
 * Each device's share of a split (and the host's), from the GGUF headers, by llama.cpp's
 * placement rules: the token embedding on the host; blocks and the output head by
 * layerDevices; the KV cache and recurrent state of a block on the block's device; expert
 * tensors kept on the host by --cpu-moe / --n-cpu-moe; a row split (CUDA only) spreads each
 * offloaded matrix over the CUDA devices by the same proportions; a compute buffer and the
 * reserve on each device that holds anything; the draft, whole, where `draftDevice` says.
 * With split mode none only the main device (mainGpu) is used.
 */
export function estimateSplit(plan: MemoryPlan, devicesIn: readonly SplitDevice[], split: SplitParams): DeviceShare[] {
  const devices = split.splitMode === 'none' && devicesIn.length > 0 ? [devicesIn[split.mainGpu ?? 0] ?? devicesIn[0]!] : [...devicesIn];
  const info = plan.target;
  const blocks = hp(info, 'block_count') ?? 0;
  const firstNextn = plan.loadMtp ? blocks : blocks - (hp(info, 'nextn_predict_layers') ?? 0);
  const embd = hp(info, 'embedding_length') ?? 0;
  const heads = hp(info, 'attention.head_count') ?? 1;
  const slotOf = layerDevices(blocks, plan.gpuLayers, devices, split);
  const shares: DeviceShare[] = [null, ...devices].map((device) => ({
    device,
    blocks: [],
    output: false,
    weights: 0,
    kv: 0,
    recurrent: 0,
    draft: 0,
    projector: 0,
    compute: 0,
    reserve: 0,
    total: 0,
  }));
  const share = (slot: number): DeviceShare => shares[slot + 1]!;
  // row split: proportions over the CUDA devices (as layerDevices weighs them)
  const rowDevices = split.splitMode === 'row' ? devices.map((d, i) => (d.cuda ? i : -1)).filter((i) => i >= 0) : [];
  const rowWeights = rowDevices.map((i) =>
    split.tensorSplit && split.tensorSplit.some((x) => x > 0) ? (split.tensorSplit[i] ?? 0) : devices[i]!.freeBytes,
  );
  const rowSum = rowWeights.reduce((a, b) => a + b, 0);
  const place = (slot: number, bytes: number, matrix: boolean): void => {
    if (slot >= 0 && matrix && rowDevices.length > 1 && rowSum > 0 && devices[slot]!.cuda) {
      rowDevices.forEach((i, k) => (share(i).weights += (bytes * rowWeights[k]!) / rowSum));
    } else {
      share(slot).weights += bytes;
    }
  };

  let embedding = 0;
  let hasOutput = false;
  const kinds = new Map<number, { attention: boolean; recurrent: boolean }>();
  for (const t of info.tensors) {
    const m = /^blk\.(\d+)\.(.*)$/.exec(t.name);
    if (m) {
      const block = Number(m[1]);
      if (block >= firstNextn) continue;
      const k = kinds.get(block) ?? { attention: false, recurrent: false };
      if (m[2]!.startsWith('ssm_')) k.recurrent = true;
      else if (m[2]!.startsWith('attn_k') || m[2]!.startsWith('attn_qkv')) k.attention = true;
      kinds.set(block, k);
      place(expertOnHost(block, m[2]!, plan) ? -1 : (slotOf[block] ?? -1), t.byteSize, t.shape.length >= 2);
    } else if (t.name === 'token_embd.weight') {
      embedding = t.byteSize;
      share(-1).weights += t.byteSize;
    } else if (t.name.startsWith('output')) {
      if (t.name === 'output.weight') hasOutput = true;
      place(slotOf[blocks] ?? -1, t.byteSize, t.shape.length >= 2);
    }
  }
  // a tied head: a copy of the embedding where the output head goes (on the host it is the same tensor)
  if (!hasOutput && (slotOf[blocks] ?? -1) >= 0) place(slotOf[blocks]!, embedding, true);
  share(slotOf[blocks] ?? -1).output = true;

  const ctx = plan.contextSize;
  const recurrentRow = recurrentRowBytes(info);
  for (const [block, k] of [...kinds].sort((a, b) => a[0] - b[0])) {
    const s = share(slotOf[block] ?? -1);
    s.blocks.push(block);
    if (k.recurrent) s.recurrent += recurrentRow * (1 + plan.s);
    else if (k.attention) {
      const kvHeads = hp(info, 'attention.head_count_kv', block) ?? heads;
      const keyLen = hp(info, 'attention.key_length', block) ?? embd / heads;
      const valueLen = hp(info, 'attention.value_length', block) ?? embd / heads;
      s.kv += ctx * kvHeads * (keyLen + valueLen) * 2;
    }
  }
  const vocab = info.tensors.find((t) => t.name === 'token_embd.weight')?.shape[1] ?? 0;
  for (const s of shares) {
    if (s.blocks.length === 0 && !s.output) {
      // the host always looks up the input embeddings; a device without a layer holds nothing
      if (!s.device) s.compute = plan.batchSize * embd * 4;
      continue;
    }
    s.compute =
      plan.batchSize * 16 * embd * 4 +
      (s.output ? plan.batchSize * vocab * 4 : 0) +
      (plan.flashAttn ? 0 : plan.batchSize * ctx * heads * 4);
    if (s.device) s.reserve = RESERVE_BYTES;
  }
  if (plan.draft) {
    const d = modelPlacement(plan.draft, { contextSize: ctx, gpuLayers: -1, s: 0 });
    const target = share(
      split.draftDevice !== undefined && split.draftDevice >= 0 && split.draftDevice < devices.length ? split.draftDevice : -1,
    );
    target.draft = d.weights + d.kv + d.recurrent;
  }
  // the projector goes to the first device (the host when there is none)
  share(devices.length > 0 ? 0 : -1).projector = projectorBytes(plan.projector);
  for (const s of shares) {
    // the host's weights are memory-mapped (paged in, not allocated), as on the CPU alone
    s.total = (s.device ? s.weights : 0) + s.kv + s.recurrent + s.draft + s.projector + s.compute + s.reserve;
  }
  return shares;
}

function blockList(blocks: readonly number[]): string {
  if (blocks.length === 0) return 'no block';
  const first = blocks[0]!;
  const last = blocks.at(-1)!;
  if (blocks.length === 1) return `block ${first}`;
  return last - first + 1 === blocks.length ? `blocks ${first}–${last}` : `blocks ${blocks.join(', ')}`;
}

/** "blocks 1–2 and the output head" */
export function describeShare(s: DeviceShare): string {
  return `${blockList(s.blocks)}${s.output ? ' and the output head' : ''}`;
}

/** The name a refusal uses: "RPC1 (127.0.0.1:50053)", "CUDA0 (NVIDIA …)", "the CPU (this machine)". */
export function shareName(s: DeviceShare): string {
  return s.device ? `${s.device.name} (${s.device.description})` : 'the CPU (this machine)';
}

/**
 * null when every share fits (each device's free memory; the host's available memory), else
 * the refusal naming each device that does not, with its share and the numbers.
 */
export function checkSplitFit(
  shares: readonly DeviceShare[],
  plan: Pick<MemoryPlan, 'contextSize'>,
  hostAvailableBytes: number | null,
): string | null {
  const over = shares.filter((s) => {
    const free = s.device ? s.device.freeBytes : hostAvailableBytes;
    return free !== null && s.total > free;
  });
  if (over.length === 0) return null;
  const lines = over.map((s) => {
    const free = s.device ? s.device.freeBytes : hostAvailableBytes!;
    const parts = [
      // the host's weights are memory-mapped: not counted
      ...(s.device ? [`weights ${formatBytes(s.weights)}`] : []),
      `KV ${formatBytes(s.kv)} at ${plan.contextSize} ctx`,
      ...(s.recurrent > 0 ? [`recurrent state ${formatBytes(s.recurrent)}`] : []),
      ...(s.draft > 0 ? [`draft ${formatBytes(s.draft)}`] : []),
      ...(s.projector > 0 ? [`projector ${formatBytes(s.projector)}`] : []),
      `compute ${formatBytes(s.compute)}`,
      ...(s.reserve > 0 ? [`reserve ${formatBytes(s.reserve)}`] : []),
    ];
    return `not enough memory on ${shareName(s)}: its share (${describeShare(s)}) needs about ${formatBytes(s.total)} (${parts.join(', ')}) but ${formatBytes(free)} is free`;
  });
  return `${lines.join('; ')}; lower --ctx, move layers with --tensor-split or --gpu-layers, or add a device`;
}
