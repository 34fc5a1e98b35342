// Starts an engine host on the flavour and device a --device request asks for. Each host
// loads exactly one flavour; `auto` may start the CUDA flavour, find no CUDA device, and then
// start the CPU flavour instead (saying why). `cuda` never falls back: it fails closed.
import type { CudaStatus, DeviceInfo } from '../../contract/engine-types.js';
import { builtFlavours } from '../../engine/build-info.js';
import { EngineClient, type EngineOptions } from './client.js';
import { cpuDevice, describeDevice, flavourPlan, NO_CUDA_FLAVOUR, pickCudaDevice, type DeviceRequest } from './device-select.js';

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
}

type Options = Omit<EngineOptions, 'flavour'>;

async function hello(flavour: string, options: Options) {
  const engine = EngineClient.start({ ...options, flavour });
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
  return {
    engine: started.engine,
    flavour,
    kind: 'cpu' as const,
    device,
    note,
    devices: started.hello.devices,
    cuda: started.hello.cuda,
    llamaCppRelease: started.hello.llamaCppRelease,
  };
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
    return {
      engine: started.engine,
      flavour: plan.cuda,
      kind: 'cuda',
      device: gpu,
      note: request === 'auto' ? `auto: chose ${describeDevice(gpu)}` : null,
      devices: started.hello.devices,
      cuda: started.hello.cuda,
      llamaCppRelease: started.hello.llamaCppRelease,
    };
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
