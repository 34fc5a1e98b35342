// Device selection rules (pure): which built flavour serves a --device request, and which of
// its devices runs the model. `cuda` and `vulkan` fail closed: they never end up on the CPU
// backend (a CPU-type Vulkan device, lavapipe, is a Vulkan device: `vulkan` may run on it).
import type { DeviceInfo } from '../contract/engine-types.js';
import type { BuildInfo } from './build-info.js';

export const DEVICE_REQUESTS = ['auto', 'cuda', 'vulkan', 'cpu'] as const;
export type DeviceRequest = (typeof DEVICE_REQUESTS)[number];
/** where an engine runs the model */
export type DeviceKind = 'cpu' | 'cuda' | 'vulkan';

export interface FlavourPlan {
  /** the flavour that can run CUDA: one built from source wins (the user built it for a reason) */
  cuda: string | null;
  /** the flavour that can run Vulkan */
  vulkan: string | null;
  /**
   * the flavour for CPU work: the batch-invariant cpu build when there is one, else another
   * CPU-only build (cpu-prebuilt), else the CUDA flavour's CPU backend
   */
  cpu: string | null;
}

export function flavourPlan(built: readonly Pick<BuildInfo, 'flavour' | 'gpu'>[]): FlavourPlan {
  const names = built.map((b) => b.flavour);
  const gpu = built.filter((b) => b.gpu === 'cuda').map((b) => b.flavour);
  const cuda = gpu.includes('cuda-src') ? 'cuda-src' : (gpu[0] ?? null);
  const cpuOnly = built.filter((b) => !b.gpu).map((b) => b.flavour);
  const cpu = cpuOnly.includes('cpu') ? 'cpu' : (cpuOnly[0] ?? cuda ?? names[0] ?? null);
  const vulkan = built.find((b) => b.gpu === 'vulkan')?.flavour ?? null;
  return { cuda, vulkan, cpu };
}

/** The CUDA device to use: the one with the most free memory (one device; no split yet). */
export function pickCudaDevice(devices: readonly DeviceInfo[]): DeviceInfo | null {
  const cuda = devices.filter((d) => d.backend === 'CUDA');
  if (cuda.length === 0) return null;
  return cuda.reduce((best, d) => (d.freeBytes > best.freeBytes ? d : best));
}

/**
 * The Vulkan device to use: the real GPU with the most free memory; a CPU-type device (lavapipe)
 * only when `allowOnCpu` (an explicit --device vulkan on a machine without a Vulkan GPU).
 */
export function pickVulkanDevice(devices: readonly DeviceInfo[], allowOnCpu: boolean): DeviceInfo | null {
  const vulkan = devices.filter((d) => d.backend === 'Vulkan');
  const real = vulkan.filter((d) => !d.onCpu);
  const pool = real.length > 0 ? real : allowOnCpu ? vulkan : [];
  if (pool.length === 0) return null;
  return pool.reduce((best, d) => (d.freeBytes > best.freeBytes ? d : best));
}

export function cpuDevice(devices: readonly DeviceInfo[]): DeviceInfo | null {
  return devices.find((d) => d.type === 'cpu') ?? null;
}

const GIB = 1024 ** 3;

/** "CUDA0 (NVIDIA H200, 139.4 of 140.0 GiB free)" / "cpu (AMD EPYC)" / "Vulkan0 (llvmpipe (…), runs on the CPU, …)" */
export function describeDevice(d: DeviceInfo): string {
  if (d.type === 'cpu') return `cpu (${d.description})`;
  const onCpu = d.onCpu ? ', runs on the CPU' : '';
  return `${d.name} (${d.description}${onCpu}, ${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free)`;
}

/** What decides Flash Attention's cost on the CPU: a model's attention heads and window. */
export interface AttentionShape {
  /** the key length of a head (n_embd_head_k) */
  headSize: number;
  /** whether the model has sliding-window blocks (Gemma 2/3/4, gpt-oss, ...) */
  slidingWindow: boolean;
}

/**
 * Flash Attention when the request leaves it open. CUDA: on (its kernels are not
 * batch-invariant either way, and on is much faster). Vulkan: off, the configuration our patch
 * makes batch-invariant (docs/exactness.md); on crashed Mesa 22.3's lavapipe. CPU: both are
 * exact on the default engine, and which is faster depends on the model (bench/RESULTS-cpu.md,
 * docs/exactness.md): the invariant kernel walks a row's cells one by one, which short heads
 * pay dearly for (heads of 64: 0.11-0.57× prefill, 0.36-0.90× decode) and long full-attention
 * contexts too (heads of 128 at 4,096 positions: 0.68× prefill), while a model whose blocks
 * mostly attend over a window with heads of 256 (Gemma 3) decodes 1.03-1.07× faster with it on
 * at every length. So on only for heads of 128 or more with sliding-window blocks; off without
 * the shape (a model not read yet).
 */
export function defaultFlashAttn(kind: DeviceKind, shape?: AttentionShape): 'on' | 'off' {
  if (kind === 'cuda') return 'on';
  if (kind === 'cpu' && shape && shape.headSize >= 128 && shape.slidingWindow) return 'on';
  return 'off';
}

export const NO_CUDA_FLAVOUR =
  'no CUDA flavour of the addon is built (npm install builds it when @node-llama-cpp/<platform>-cuda ' +
  'is installed; or run npm run build:native -- --from-source --cuda)';

export const NO_VULKAN_FLAVOUR =
  'no Vulkan flavour of the addon is built (npm install builds it where glslc and the Vulkan headers are installed: ' +
  'apt-get install glslc libvulkan-dev, then npm run build:native -- --from-source --vulkan)';
