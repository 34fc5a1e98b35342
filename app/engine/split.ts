// Which devices a model is split over, and llama.cpp's parameters for that (pure): the front
// doors' --rpc, --split-mode, --tensor-split, --main-gpu, --cpu-moe and --n-cpu-moe, checked
// against the devices the engine found. The order is llama.cpp's own: remote (RPC) devices
// first (fewer network transfers, llama.cpp's default order), then the local GPUs; the local
// CPU is not in the list: it keeps the token embedding and whatever --gpu-layers leaves out, as
// it does next to a GPU.
import type { DeviceInfo } from '../contract/engine-types.js';
import type { SplitDevice, SplitParams } from './memory-estimate.js';
import type { DeviceKind } from './device-select.js';

export const SPLIT_MODES = ['layer', 'row', 'none'] as const;
export type SplitModeName = (typeof SPLIT_MODES)[number];

/** What a request asks of the split (every field optional: absent is Power's single-device default). */
export interface SplitRequest {
  /** remote machines (`power rpc` or llama.cpp's rpc-server) as host:port */
  rpc?: readonly string[];
  splitMode?: SplitModeName;
  tensorSplit?: readonly number[];
  mainGpu?: number;
  /** every expert tensor in host memory */
  cpuMoe?: boolean;
  /** the expert tensors of the first N blocks in host memory */
  nCpuMoe?: number;
}

export class SplitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SplitError';
  }
}

/** A remote device with the server it is on. */
export interface RemoteDevice extends DeviceInfo {
  endpoint: string;
}

export interface DevicePlan {
  /** the devices llama.cpp is given, in order ([]: everything on the CPU) */
  devices: DeviceInfo[];
  /** what loadModel passes on (only what was asked for) */
  params: { splitMode?: SplitModeName; mainGpu?: number; tensorSplit?: number[]; cpuMoe?: boolean; nCpuMoe?: number };
  /** where the draft goes: the local main GPU, or [] (the CPU); never over the network */
  draftDevices: string[];
  /** the split in the memory estimate's terms */
  memory: { devices: SplitDevice[]; split: SplitParams };
}

/** Whether the request asks for more than Power's default (one local device). */
export function splitRequested(r: SplitRequest | undefined): boolean {
  return (
    r !== undefined &&
    ((r.rpc?.length ?? 0) > 0 ||
      r.splitMode !== undefined ||
      r.tensorSplit !== undefined ||
      r.mainGpu !== undefined ||
      r.cpuMoe === true ||
      (r.nCpuMoe ?? 0) > 0)
  );
}

/**
 * The devices of a load. `kind`/`chosen`: where the engine runs (the CUDA device --device
 * auto/cuda picked, or the CPU); `local`: every device the engine found; `remote`: the RPC
 * servers' devices, in --rpc order. Without split flags a CUDA load uses the chosen device only
 * (Power's default); --split-mode layer|row or --tensor-split use every local CUDA device;
 * --split-mode none uses the chosen one, or the device --main-gpu names.
 */
export function planDevices(
  kind: DeviceKind,
  chosen: DeviceInfo,
  local: readonly DeviceInfo[],
  remote: readonly RemoteDevice[],
  r: SplitRequest = {},
): DevicePlan {
  // the chosen device's peers: the other GPUs of its backend (a CPU-type Vulkan device joins a
  // split only as the chosen one)
  const peers = local.filter((d) => d.backend === chosen.backend && (!d.onCpu || d === chosen));
  let gpus: DeviceInfo[] = [];
  if (kind !== 'cpu') {
    const everyGpu =
      r.splitMode === 'layer' ||
      r.splitMode === 'row' ||
      r.tensorSplit !== undefined ||
      (r.splitMode === 'none' && r.mainGpu !== undefined);
    gpus = everyGpu ? peers : [chosen];
  }
  const devices: DeviceInfo[] = [...remote, ...gpus];
  const names = devices.map((d) => d.name).join(', ');
  if (r.tensorSplit !== undefined) {
    if (devices.length === 0)
      throw new SplitError('--tensor-split needs devices to split over: a GPU (--device cuda or vulkan) or remote machines (--rpc)');
    if (r.tensorSplit.length > devices.length) {
      throw new SplitError(
        `--tensor-split has ${r.tensorSplit.length} entries but the split has ${devices.length} device${devices.length === 1 ? '' : 's'} (${names})`,
      );
    }
    if (!r.tensorSplit.some((x) => x > 0)) throw new SplitError('--tensor-split needs at least one proportion above 0');
  }
  if (r.mainGpu !== undefined) {
    if (devices.length === 0) throw new SplitError('--main-gpu needs a GPU (--device cuda or vulkan) or remote machines (--rpc)');
    if (r.mainGpu >= devices.length)
      throw new SplitError(
        `--main-gpu ${r.mainGpu}: the split has ${devices.length} device${devices.length === 1 ? '' : 's'} (${names}), numbered from 0`,
      );
  }
  if (r.splitMode === 'row' && !devices.some((d) => d.backend === 'CUDA')) {
    throw new SplitError('--split-mode row splits matrices over CUDA devices; use layer for the CPU and remote machines');
  }
  if (r.cpuMoe && r.nCpuMoe !== undefined)
    throw new SplitError('give either --cpu-moe (every block) or --n-cpu-moe N (the first N blocks)');

  // the draft on the main local GPU (where a GPU runs the target): it never waits on the network
  const mainIndex = r.mainGpu ?? 0;
  const main = devices[mainIndex];
  const draftDevice = main && gpus.includes(main) ? main : (gpus[0] ?? null);
  const params: DevicePlan['params'] = {
    ...(r.splitMode ? { splitMode: r.splitMode } : {}),
    ...(r.mainGpu !== undefined ? { mainGpu: r.mainGpu } : {}),
    ...(r.tensorSplit ? { tensorSplit: [...r.tensorSplit] } : {}),
    ...(r.cpuMoe ? { cpuMoe: true } : {}),
    ...(r.nCpuMoe ? { nCpuMoe: r.nCpuMoe } : {}),
  };
  const remoteNames = new Set(remote.map((d) => d.name));
  return {
    devices,
    params,
    draftDevices: draftDevice ? [draftDevice.name] : [],
    memory: {
      devices: devices.map((d) => ({
        name: d.name,
        description: d.description,
        freeBytes: d.freeBytes,
        remote: remoteNames.has(d.name),
        cuda: d.backend === 'CUDA',
      })),
      split: {
        ...(r.splitMode ? { splitMode: r.splitMode } : {}),
        ...(r.tensorSplit ? { tensorSplit: r.tensorSplit } : {}),
        ...(r.mainGpu !== undefined ? { mainGpu: r.mainGpu } : {}),
        draftDevice: draftDevice ? devices.indexOf(draftDevice) : -1,
      },
    },
  };
}

/** `3,1` / `1/1/2`: non-negative proportions, as llama.cpp reads --tensor-split. */
export function parseTensorSplit(raw: string): number[] {
  const parts = raw.split(/[,/]+/).map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => p === '' || !Number.isFinite(Number(p)) || Number(p) < 0)) {
    throw new SplitError(`--tensor-split takes non-negative proportions such as 3,1 (got '${raw}')`);
  }
  if (parts.length > 16) throw new SplitError(`--tensor-split: at most 16 devices (got ${parts.length})`);
  return parts.map(Number);
}
