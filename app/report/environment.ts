// The environment section of a report: the machine, what actually ran the requests, and the
// model files (with their SHA-256, so a reader knows exactly which weights were measured).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import { basename, join } from 'node:path';

import type { NativeModelInfo } from '../engine/protocol.js';
import type { Environment, ModelFile } from '../contract/report/schema.js';
import type { EngineOnDevice } from '../engine/engine-on-device.js';
import { ROOT } from '../paths.js';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function modelFile(role: ModelFile['role'], path: string, info: NativeModelInfo): Promise<ModelFile> {
  return {
    role,
    name: basename(path),
    sizeBytes: (await stat(path)).size,
    sha256: await sha256File(path),
    architecture: info.architecture,
    quantization: info.fileType,
    parameters: info.parameters,
  };
}

/** The NVIDIA driver version, from nvidia-smi when there is one (null otherwise). */
export function nvidiaDriver(): string | null {
  const r = spawnSync('nvidia-smi', ['--query-gpu=driver_version', '--format=csv,noheader'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0 || !r.stdout) return null;
  return r.stdout.split('\n')[0]!.trim() || null;
}

export function powerVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

export function environment(
  placement: Omit<EngineOnDevice, 'engine'>,
  deviceLabel: string,
  models: ModelFile[],
  settings: Environment['settings'],
): Environment {
  const cpuList = cpus();
  const gpus = placement.devices
    .filter((d) => d.backend.toUpperCase() === 'CUDA' || (d.backend === 'Vulkan' && !d.onCpu))
    .map((d) => ({ name: d.name, description: d.description, memoryBytes: d.totalBytes }));
  return {
    os: { platform: platform(), release: release(), arch: arch() },
    cpu: { model: cpuList[0]?.model.trim() ?? 'unknown', logicalCores: cpuList.length },
    memoryBytes: totalmem(),
    gpus,
    gpuDriver: gpus.length > 0 || placement.cuda ? nvidiaDriver() : null,
    backend: { device: deviceLabel, kind: placement.kind, flavour: placement.flavour, note: placement.note },
    llamaCppRelease: placement.llamaCppRelease,
    powerVersion: powerVersion(),
    nodeVersion: process.version,
    models,
    settings,
  };
}
