// Starts an engine host on the flavour and device a --device request asks for. Each host
// loads exactly one flavour; `auto` may start the CUDA flavour, find no CUDA device, and then
// start the CPU flavour instead (saying why). `cuda` never falls back: it fails closed.
import type { CudaStatus, DeviceInfo } from '../../contract/engine-types.js';
import { builtFlavours } from '../../engine/build-info.js';
import { EngineClient, type EngineOptions } from './client.js';
import { cpuDevice, describeDevice, flavourPlan, NO_CUDA_FLAVOUR, pickCudaDevice, type DeviceRequest } from './device-select.js';
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
  kind: 'cuda' | 'cpu';
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
  return withRemote(
    {
      engine: started.engine,
      flavour,
      kind: 'cpu' as const,
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

/** POWER_FLAVOUR=<name> pins every request to one built flavour (e.g. cpu-prebuilt, to compare with the prebuilt libraries). */
export function builtForSelection() {
  const built = builtFlavours();
  const pinned = process.env.POWER_FLAVOUR;
  if (!pinned) return built;
  const only = built.filter((b) => b.flavour === pinned);
  if (only.length === 0) throw new DeviceUnavailableError(`POWER_FLAVOUR=${pinned}: that flavour of the addon is not built`);
  return only;
}

export async function startEngineOn(request: DeviceRequest, options: Options = {}): Promise<EngineOnDevice> {
  const plan = flavourPlan(builtForSelection());
  if (!plan.cpu) throw new DeviceUnavailableError('the native addon is not built: run npm install');
  if (request === 'cpu') return onCpu(plan.cpu, options, null);

  if (!plan.cuda) {
    if (request === 'cuda') throw new DeviceUnavailableError(`--device cuda: ${NO_CUDA_FLAVOUR}`);
    return onCpu(plan.cpu, options, 'auto: no CUDA flavour is built; using the CPU');
  }
  const started = await hello(plan.cuda, options);
  const gpu = pickCudaDevice(started.hello.devices);
  if (gpu) {
    return withRemote(
      {
        engine: started.engine,
        flavour: plan.cuda,
        kind: 'cuda',
        device: gpu,
        note: request === 'auto' ? `auto: chose ${describeDevice(gpu)}` : null,
        devices: started.hello.devices,
        cuda: started.hello.cuda,
        llamaCppRelease: started.hello.llamaCppRelease,
      },
      started.hello.rpc,
      options,
    );
  }
  const reason = started.hello.cuda?.reason ?? 'the CUDA flavour registered no CUDA device';
  if (request === 'cuda') {
    await started.engine.close();
    throw new DeviceUnavailableError(`--device cuda: ${reason}`);
  }
  const note = `auto: no CUDA device (${reason}); using the CPU`;
  if (plan.cpu === plan.cuda) return onCpu(plan.cpu, options, note, started);
  await started.engine.close();
  return onCpu(plan.cpu, options, note);
}
