// Starts an engine host and loads a checked model file into it, turning every way that can
// fail into a UsageError that says what was wrong with the input.
import type { DeviceInfo, NativeModelInfo } from '../../app/engine-protocol.js';
import { readBuildInfo, type BuildInfo } from '../engine/build-info.js';
import { EngineCallError, EngineClient, EngineCrashedError } from '../engine/client.js';
import type { GgufInfo } from '../gguf/types.js';
import { checkModelFile, ModelFileError } from '../models/check-file.js';
import { UsageError } from './errors.js';

export interface OpenedModel {
  engine: EngineClient;
  modelId: string;
  info: NativeModelInfo;
  gguf: GgufInfo;
  build: BuildInfo;
  devices: DeviceInfo[];
}

export interface OpenOptions {
  gpuLayers: number;
  loadMtp?: boolean;
  verbose?: boolean;
  onProgress?: (progress: number) => void;
}

export async function checkFile(path: string, build: BuildInfo): Promise<GgufInfo> {
  try {
    return await checkModelFile(path, build.architectures);
  } catch (error) {
    if (error instanceof ModelFileError) throw new UsageError(error.message);
    throw error;
  }
}

/** Loads `path` into an engine (a new one unless `engine` is given). */
export async function openModel(path: string, options: OpenOptions, engine?: EngineClient): Promise<OpenedModel> {
  const build = readBuildInfo();
  const gguf = await checkFile(path, build);
  const client = engine ?? EngineClient.start({ verbose: options.verbose ?? false });
  try {
    const hello = await client.call('hello', {});
    const requestId = `load:${path}`;
    const stop = options.onProgress ? client.onProgress(requestId, options.onProgress) : () => {};
    try {
      const loaded = await client.call('loadModel', {
        path,
        requestId,
        gpuLayers: options.gpuLayers,
        loadMtp: options.loadMtp ?? false,
      });
      return { engine: client, modelId: loaded.modelId, info: loaded.info, gguf, build, devices: hello.devices };
    } finally {
      stop();
    }
  } catch (error) {
    if (!engine) await client.close();
    if (error instanceof EngineCrashedError) {
      throw new UsageError(`llama.cpp crashed while loading ${path} (the file is not a usable model): ${error.message}`);
    }
    if (error instanceof EngineCallError) throw new UsageError(error.message);
    throw error;
  }
}
