// Device selection rules (pure): which built flavour serves a --device request, and which of
// its devices runs the model. `cuda` fails closed: it never ends up on the CPU.
import type { DeviceInfo } from '../../contract/engine-types.js';
import type { BuildInfo } from '../../engine/build-info.js';

export const DEVICE_REQUESTS = ['auto', 'cuda', 'cpu'] as const;
export type DeviceRequest = (typeof DEVICE_REQUESTS)[number];

export interface FlavourPlan {
  /** the flavour that can run CUDA: one built from source wins (the user built it for a reason) */
  cuda: string | null;
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
  return { cuda, cpu };
}

/** The CUDA device to use: the one with the most free memory (one device; no split yet). */
export function pickCudaDevice(devices: readonly DeviceInfo[]): DeviceInfo | null {
  const cuda = devices.filter((d) => d.backend === 'CUDA');
  if (cuda.length === 0) return null;
  return cuda.reduce((best, d) => (d.freeBytes > best.freeBytes ? d : best));
}

export function cpuDevice(devices: readonly DeviceInfo[]): DeviceInfo | null {
  return devices.find((d) => d.type === 'cpu') ?? null;
}

const GIB = 1024 ** 3;

/** "CUDA0 (NVIDIA H200, 139.4 of 140.0 GiB free)" / "cpu (AMD EPYC)" */
export function describeDevice(d: DeviceInfo): string {
  if (d.type === 'cpu') return `cpu (${d.description})`;
  return `${d.name} (${d.description}, ${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free)`;
}

export const NO_CUDA_FLAVOUR =
  'no CUDA flavour of the addon is built (npm install builds it when @node-llama-cpp/<platform>-cuda ' +
  'is installed; or run npm run build:native -- --from-source --cuda)';
