// Starts an engine host on the requested device and loads a checked model file into it,
// turning every way that can fail into a PowerError that says what was wrong with the input.
// On CUDA the model's memory needs are estimated from the GGUF first and compared with the
// device's free memory, so a model that does not fit is refused with numbers.
import { PowerError } from '../contract/api/errors.js';
import type { DeviceInfo } from '../contract/engine-types.js';
import type { NativeModelInfo } from '../engine/protocol.js';
import { readBuildInfo, type BuildInfo } from '../engine/build-info.js';
import { abortable, CancelledError } from '../engine/cancellation.js';
import { availableMemoryBytes, checkCpuFit } from '../engine/cpu-memory.js';
import { EngineCallError, EngineCrashedError, type EngineClient, type EngineOptions } from '../engine/client.js';
import { defaultFlashAttn, type DeviceRequest } from '../engine/device-select.js';
import { DeviceUnavailableError, startEngineOn, type EngineOnDevice } from '../engine/engine-on-device.js';
import {
  checkFit,
  checkSplitFit,
  estimateMemory,
  estimateSplit,
  hasExpertTensors,
  type DeviceShare,
  type MemoryEstimate,
  type MemoryPlan,
} from '../engine/memory-estimate.js';
import { planDevices, SplitError, type DevicePlan, type SplitRequest } from '../engine/split.js';
import type { GgufInfo } from '../gguf/types.js';
import { checkModelFile, ModelFileError } from '../models/check-file.js';

export interface OpenedModel {
  engine: EngineClient;
  modelId: string;
  info: NativeModelInfo;
  gguf: GgufInfo;
  /** a Mixture-of-Experts model (its batch invariance is claimed apart: app/engine/build-info.ts) */
  experts: boolean;
  build: BuildInfo;
  devices: DeviceInfo[];
  /** where it runs and how that was decided */
  placement: Omit<EngineOnDevice, 'engine'>;
  /** device names the model was loaded on ([] = CPU) */
  loadDevices: string[];
  /** where a draft model goes: the local main GPU, or [] (the CPU); never a remote device */
  draftDevices: string[];
  /** what llama.cpp was given besides the devices (split mode, tensor split, main GPU, MoE offload) */
  split: DevicePlan['params'];
  /**
   * CUDA or a split: the estimate (summed over the devices) and, when it does not fit, why;
   * for a split also each device's share (and the host's: `device` null)
   */
  memory: { estimate: MemoryEstimate; plan: MemoryPlan; refusal: string | null; shares?: DeviceShare[] } | null;
}

export interface OpenOptions {
  device: DeviceRequest;
  /** -1: all */
  gpuLayers: number;
  loadMtp?: boolean;
  verbose?: boolean;
  /** the engine host's other options (test hooks) */
  engine?: Omit<EngineOptions, 'flavour' | 'verbose'>;
  onProgress?: (progress: number) => void;
  /** what the session will need, for the memory estimate */
  plan?: { contextSize?: number; batchSize?: number; draft?: GgufInfo; projector?: GgufInfo; s?: number; flashAttn?: boolean };
  /** refuse to load when the estimate does not fit (generate); info only reports it */
  enforceFit?: boolean;
  /** load on the CPU whatever the device: `info` only reads the model's metadata */
  metadataOnly?: boolean;
  /** cancels the load (Ctrl-C): the engine is stopped and a ModelLoadCancelled thrown */
  signal?: AbortSignal;
  /** remote machines, split mode, tensor split, main GPU, MoE offload (absent: one device) */
  split?: SplitRequest;
}

/** Cancelled after the engine started: says where it would have run. */
export class ModelLoadCancelled extends CancelledError {
  constructor(
    stage: string,
    readonly placement: Omit<EngineOnDevice, 'engine'>,
  ) {
    super(stage);
  }
}

export async function checkFile(path: string, build: BuildInfo): Promise<GgufInfo> {
  try {
    return await checkModelFile(path, build.architectures);
  } catch (error) {
    if (error instanceof ModelFileError) throw new PowerError('bad-input', error.message);
    if (error instanceof Error && 'code' in error) throw new PowerError('bad-input', `cannot read ${path}: ${error.message}`);
    throw error;
  }
}

/** The context a session gets without --ctx: the model's trained length, at most 4096. */
export function defaultContextSize(trainedLength: number): number {
  return Math.min(trainedLength > 0 ? trainedLength : 4096, 4096);
}

function trainedContext(gguf: GgufInfo): number {
  const arch = gguf.metadata.get('general.architecture');
  const v = arch?.type === 'string' ? gguf.metadata.get(`${arch.value}.context_length`) : undefined;
  return v && typeof v.value === 'number' ? v.value : 0;
}

export async function startOnDevice(
  device: DeviceRequest,
  verbose: boolean,
  engine: OpenOptions['engine'] = {},
  rpc: readonly string[] = [],
): Promise<EngineOnDevice> {
  try {
    return await startEngineOn(device, { ...engine, verbose, ...(rpc.length > 0 ? { rpc } : {}) });
  } catch (error) {
    if (error instanceof DeviceUnavailableError) throw new PowerError('device', error.message);
    if (error instanceof EngineCrashedError) throw new PowerError('engine-crashed', `the engine could not start: ${error.message}`);
    throw error;
  }
}

/** Loads `path` into a new engine on the requested device. */
export async function openModel(path: string, options: OpenOptions): Promise<OpenedModel> {
  const build = readBuildInfo();
  const gguf = await checkFile(path, build);
  const started = await startOnDevice(options.device, options.verbose ?? false, options.engine, options.split?.rpc ?? []);
  const { engine: client, ...placement } = started;
  try {
    let devicePlan: DevicePlan;
    try {
      devicePlan = planDevices(placement.kind, placement.device, placement.devices, placement.remote, options.split);
    } catch (error) {
      if (error instanceof SplitError) throw new PowerError('bad-input', error.message);
      throw error;
    }
    const moe = {
      ...(options.split?.cpuMoe ? { cpuMoe: true } : {}),
      ...(options.split?.nCpuMoe ? { nCpuMoe: options.split.nCpuMoe } : {}),
    };
    let memory: OpenedModel['memory'] = null;
    // what the memory check sizes: the request's plan over the defaults of where it runs
    const planFor = (gpuLayers: number, flashAttn: boolean): MemoryPlan => ({
      target: gguf,
      ...(options.plan?.draft ? { draft: options.plan.draft } : {}),
      ...(options.plan?.projector ? { projector: options.plan.projector } : {}),
      contextSize: options.plan?.contextSize ?? defaultContextSize(trainedContext(gguf)),
      batchSize: options.plan?.batchSize ?? 512,
      gpuLayers,
      s: options.plan?.s ?? 0,
      flashAttn: options.plan?.flashAttn ?? flashAttn,
      loadMtp: options.loadMtp ?? false,
      ...moe,
    });
    if (devicePlan.devices.length > 1 || placement.remote.length > 0) {
      // a split: each device's share, and the host's, against what each has free
      const plan = planFor(options.gpuLayers, defaultFlashAttn(placement.kind) === 'on');
      const shares = estimateSplit(plan, devicePlan.memory.devices, devicePlan.memory.split);
      const on = shares.filter((x) => x.device !== null);
      const sum = (f: (x: DeviceShare) => number) => on.reduce((a, x) => a + f(x), 0);
      const estimate: MemoryEstimate = {
        weights: sum((x) => x.weights),
        kv: sum((x) => x.kv),
        recurrent: sum((x) => x.recurrent),
        draft: sum((x) => x.draft),
        projector: sum((x) => x.projector),
        compute: sum((x) => x.compute),
        reserve: sum((x) => x.reserve),
        total: sum((x) => x.total),
      };
      memory = { estimate, plan, refusal: checkSplitFit(shares, plan, availableMemoryBytes()), shares };
      if (memory.refusal && options.enforceFit) throw new PowerError('device', memory.refusal);
    } else if (placement.kind !== 'cpu') {
      const plan = planFor(options.gpuLayers, defaultFlashAttn(placement.kind) === 'on');
      const estimate = estimateMemory(plan);
      memory = { estimate, plan, refusal: checkFit(estimate, plan, placement.device) };
      if (memory.refusal && options.enforceFit) throw new PowerError('device', memory.refusal);
    } else if (options.enforceFit) {
      const refusal = checkCpuFit(planFor(-1, false), availableMemoryBytes());
      if (refusal) throw new PowerError('device', refusal);
    }
    if (options.signal?.aborted) throw new CancelledError('starting the engine');
    const loadDevices = options.metadataOnly ? [] : devicePlan.devices.map((d) => d.name);
    const requestId = `load:${path}`;
    const stop = options.onProgress ? client.onProgress(requestId, options.onProgress) : () => {};
    try {
      const loaded = await abortable(
        client.call('loadModel', {
          path,
          requestId,
          gpuLayers: options.gpuLayers,
          loadMtp: options.loadMtp ?? false,
          devices: loadDevices,
          ...(options.metadataOnly ? {} : devicePlan.params),
        }),
        options.signal,
        'loading the model',
      );
      return {
        engine: client,
        modelId: loaded.modelId,
        info: loaded.info,
        gguf,
        experts: hasExpertTensors(gguf),
        build,
        devices: placement.devices,
        placement,
        loadDevices,
        draftDevices: options.metadataOnly ? [] : devicePlan.draftDevices,
        split: devicePlan.params,
        memory,
      };
    } finally {
      stop();
    }
  } catch (error) {
    await client.close();
    if (error instanceof CancelledError) throw new ModelLoadCancelled(error.stage, placement);
    // killed from outside (the OOM killer, a user, a supervisor): the engine died, not the file
    if (error instanceof EngineCrashedError && error.exit.signal === 'SIGKILL') {
      throw new PowerError('engine-crashed', `the engine was killed while loading ${path}: ${error.message}`);
    }
    // an instruction the CPU does not execute is the build's fault, never the file's
    if (error instanceof EngineCrashedError && error.exit.signal === 'SIGILL') {
      throw new PowerError('engine-crashed', `the engine crashed while loading ${path}: ${error.message}`);
    }
    if (error instanceof EngineCrashedError) {
      throw new PowerError('bad-input', `llama.cpp crashed while loading ${path} (the file is not a usable model): ${error.message}`);
    }
    if (error instanceof EngineCallError) throw new PowerError('bad-input', error.message);
    throw error;
  }
}
