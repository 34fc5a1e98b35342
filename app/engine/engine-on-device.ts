// Starts an engine host on the flavour and device a --device request asks for. Each host
// loads exactly one flavour; `auto` may start the CUDA flavour, find no CUDA device, try the
// Vulkan flavour, and then start the CPU flavour instead (saying why). `cuda` and `vulkan`
// never fall back: they fail closed.
import type { CudaStatus, DeviceInfo } from '../contract/engine-types.js';
import { builtFlavours } from './build-info.js';
import { EngineClient, type EngineOptions } from './client.js';
import {
  cpuDevice,
  describeDevice,
  flavourPlan,
  NO_CUDA_FLAVOUR,
  NO_VULKAN_FLAVOUR,
  pickCudaDevice,
  pickVulkanDevice,
  type DeviceKind,
  type DeviceRequest,
  type FlavourPlan,
} from './device-select.js';
import { probeRpcServer, RpcUnavailableError } from './rpc.js';
import type { RemoteDevice } from './split.js';

/** The device asked for cannot be used; the message says why. */
export class DeviceUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeviceUnavailableError';
  }
}

export interface EngineOnDevice {
  engine: EngineClient;
  flavour: string;
  kind: DeviceKind;
  device: DeviceInfo;
  /** how `auto` decided, for the user (null for an explicit request) */
  note: string | null;
  devices: DeviceInfo[];
  cuda: CudaStatus | null;
  llamaCppRelease: string;
  /** the remote machines' devices (--rpc), in order; also in `devices` */
  remote: RemoteDevice[];
}

type Options = Omit<EngineOptions, 'flavour'> & {
  /** remote machines to add as devices (host:port, `power rpc`) */
  rpc?: readonly string[];
};

/**
 * Adds the remote machines to a started engine: each one probed first (an unreachable or busy
 * server would otherwise abort the engine host or keep it waiting), then registered as devices.
 */
export async function attachRemote(
  engine: EngineClient,
  endpoints: readonly string[],
  hello: { flavour: string; rpc?: boolean | undefined },
): Promise<RemoteDevice[]> {
  if (endpoints.length === 0) return [];
  if (!hello.rpc) {
    throw new DeviceUnavailableError(
      `--rpc: the ${hello.flavour} flavour of the addon has no RPC backend (the llama.cpp builds from source have it: ` +
        'the default cpu flavour, or cuda-src: npm run build:native -- --from-source --cuda)',
    );
  }
  for (const endpoint of endpoints) {
    try {
      await probeRpcServer(endpoint);
    } catch (error) {
      if (error instanceof RpcUnavailableError) throw new DeviceUnavailableError(`--rpc: ${error.message}`);
      throw error;
    }
  }
  const added = await engine.call('addRpcServers', { endpoints: [...endpoints] });
  return added.flatMap((a) => a.devices.map((d) => ({ ...d, endpoint: a.endpoint })));
}

async function withRemote(started: Omit<EngineOnDevice, 'remote'>, rpc: boolean | undefined, options: Options): Promise<EngineOnDevice> {
  try {
    const remote = await attachRemote(started.engine, options.rpc ?? [], { flavour: started.flavour, rpc });
    return { ...started, remote, devices: [...started.devices, ...remote.filter((r) => !started.devices.some((d) => d.name === r.name))] };
  } catch (error) {
    await started.engine.close();
    throw error;
  }
}

async function hello(flavour: string, options: Options) {
  const engineOptions: Options = { ...options };
  delete engineOptions.rpc;
  const engine = EngineClient.start({ ...engineOptions, flavour });
  try {
    return { engine, hello: await engine.call('hello', {}) };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

async function onCpu(flavour: string, options: Options, note: string | null, reuse?: Awaited<ReturnType<typeof hello>>) {
  const started = reuse ?? (await hello(flavour, options));
  const device = cpuDevice(started.hello.devices);
  if (!device) {
    await started.engine.close();
    throw new DeviceUnavailableError(`the ${flavour} flavour of the addon has no CPU device`);
  }
  return placed(started, flavour, 'cpu', device, note, options);
}

/** POWER_FLAVOUR=<name> pins every request to one built flavour (e.g. cpu-prebuilt, to compare with the prebuilt libraries). */
function builtForSelection() {
  const built = builtFlavours();
  const pinned = process.env.POWER_FLAVOUR;
  if (!pinned) return built;
  const only = built.filter((b) => b.flavour === pinned);
  if (only.length === 0) throw new DeviceUnavailableError(`POWER_FLAVOUR=${pinned}: that flavour of the addon is not built`);
  return only;
}

/** The flavours selection may start (builtForSelection) and the order it tries them in. */
export function selectionPlan(): { built: ReturnType<typeof builtForSelection>; plan: FlavourPlan } {
  const built = builtForSelection();
  return { built, plan: flavourPlan(built) };
}

/** A started engine placed on one of its devices, with the remote machines added. */
function placed(
  started: Awaited<ReturnType<typeof hello>>,
  flavour: string,
  kind: DeviceKind,
  device: DeviceInfo,
  note: string | null,
  options: Options,
) {
  return withRemote(
    {
      engine: started.engine,
      flavour,
      kind,
      device,
      note,
      devices: started.hello.devices,
      cuda: started.hello.cuda,
      llamaCppRelease: started.hello.llamaCppRelease,
    },
    started.hello.rpc,
    options,
  );
}

/**
 * `vulkan`: the Vulkan flavour on its best real GPU, else on a CPU-type Vulkan device (lavapipe:
 * asked for by name, so it may run there); `cuda`: the CUDA flavour's device; `auto`: CUDA, else
 * a real Vulkan GPU, else the CPU, saying why; `cpu`: the CPU flavour.
 */
export async function startEngineOn(request: DeviceRequest, options: Options = {}): Promise<EngineOnDevice> {
  const { plan } = selectionPlan();
  if (!plan.cpu) throw new DeviceUnavailableError('the native addon is not built: run npm install');
  if (request === 'cpu') return onCpu(plan.cpu, options, null);
  if (request === 'vulkan') {
    if (!plan.vulkan) throw new DeviceUnavailableError(`--device vulkan: ${NO_VULKAN_FLAVOUR}`);
    const started = await hello(plan.vulkan, options);
    const gpu = pickVulkanDevice(started.hello.devices, true);
    if (gpu) return placed(started, plan.vulkan, 'vulkan', gpu, null, options);
    await started.engine.close();
    throw new DeviceUnavailableError(
      "--device vulkan: the Vulkan loader found no usable device (a GPU driver with Vulkan support, or Mesa's lavapipe: mesa-vulkan-drivers)",
    );
  }

  // cuda or auto: CUDA first
  const why: string[] = [];
  if (!plan.cuda) {
    if (request === 'cuda') throw new DeviceUnavailableError(`--device cuda: ${NO_CUDA_FLAVOUR}`);
    why.push('no CUDA flavour is built');
  } else {
    const started = await hello(plan.cuda, options);
    const gpu = pickCudaDevice(started.hello.devices);
    if (gpu) return placed(started, plan.cuda, 'cuda', gpu, request === 'auto' ? `auto: chose ${describeDevice(gpu)}` : null, options);
    const reason = started.hello.cuda?.reason ?? 'the CUDA flavour registered no CUDA device';
    if (request === 'cuda') {
      await started.engine.close();
      throw new DeviceUnavailableError(`--device cuda: ${reason}`);
    }
    why.push(`no CUDA device (${reason})`);
    if (plan.cpu === plan.cuda && !plan.vulkan) return onCpu(plan.cpu, options, `auto: ${why.join('; ')}; using the CPU`, started);
    await started.engine.close();
  }
  // auto without CUDA: a real Vulkan GPU (never a CPU-type device: the CPU flavour is faster there)
  if (plan.vulkan) {
    const started = await hello(plan.vulkan, options);
    const gpu = pickVulkanDevice(started.hello.devices, false);
    if (gpu) return placed(started, plan.vulkan, 'vulkan', gpu, `auto: ${why.join('; ')}; chose ${describeDevice(gpu)}`, options);
    await started.engine.close();
    const onCpuOnly = started.hello.devices.find((d) => d.onCpu);
    why.push(onCpuOnly ? `no Vulkan GPU (${onCpuOnly.name} runs on the CPU: --device vulkan uses it)` : 'no Vulkan device');
  }
  return onCpu(plan.cpu, options, `auto: ${why.join('; ')}; using the CPU`);
}
