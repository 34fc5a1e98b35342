// power devices [--json]: what each built flavour of the addon loads (devices with memory),
// why CUDA does not load when it does not (driver, runtime libraries, no device), and what
// --device auto / cuda would do. Always exits 0: it is a report, not a request.
import type { CudaStatus, DeviceInfo } from '../../app/engine-protocol.js';
import { addonDir } from '../engine/build-info.js';
import { EngineClient } from '../engine/client.js';
import { describeDevice, flavourPlan, NO_CUDA_FLAVOUR, pickCudaDevice } from '../engine/device-select.js';
import { builtForSelection, DeviceUnavailableError } from '../engine/engine-on-device.js';
import { parseFlags } from './args.js';
import { UsageError } from './errors.js';

export const DEVICES_USAGE = `power devices [--json]
  Lists the devices each built flavour of the addon loads (name, description, type, memory),
  why CUDA does not load when it does not, and what --device auto and --device cuda would use.`;

interface FlavourReport {
  flavour: string;
  dir: string;
  gpu: string | null;
  devices: DeviceInfo[];
  cuda: CudaStatus | null;
}

async function probeFlavour(flavour: string, gpu: string | null): Promise<FlavourReport> {
  const engine = EngineClient.start({ flavour });
  try {
    const hello = await engine.call('hello', {});
    return { flavour, dir: addonDir(flavour), gpu, devices: hello.devices, cuda: hello.cuda };
  } catch (error) {
    throw new UsageError(`the ${flavour} flavour of the addon does not start: ${(error as Error).message}`);
  } finally {
    await engine.close();
  }
}

const GIB = 1024 ** 3;

function textReport(flavours: FlavourReport[], auto: string, cuda: string): string {
  const lines: string[] = [];
  for (const f of flavours) {
    lines.push(`flavour ${f.flavour} (${f.dir})`);
    for (const d of f.devices) {
      lines.push(`  ${d.name.padEnd(8)}${d.type.padEnd(6)}${d.description.padEnd(32)}${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free`);
    }
    if (f.cuda && f.cuda.reason) {
      lines.push(`  CUDA    not available: ${f.cuda.reason}`);
      for (const l of f.cuda.libraries) {
        lines.push(`    ${l.name.padEnd(20)}${l.role.padEnd(9)}${l.error === null ? 'loads' : `missing (${l.error})`}`);
      }
    }
  }
  lines.push(`--device auto -> ${auto}`, `--device cuda -> ${cuda}`);
  return lines.join('\n') + '\n';
}

export async function devicesCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: 'boolean' } }, 0);
  let built;
  try {
    built = builtForSelection();
  } catch (error) {
    if (error instanceof DeviceUnavailableError) throw new UsageError(error.message);
    throw error;
  }
  const plan = flavourPlan(built);
  if (!plan.cpu) throw new UsageError('the native addon is not built: run npm install');
  const wanted = [...new Set([plan.cuda, plan.cpu].filter((f): f is string => f !== null))];
  const flavours: FlavourReport[] = [];
  for (const f of wanted) flavours.push(await probeFlavour(f, built.find((b) => b.flavour === f)?.gpu ?? null));

  const cudaReport = flavours.find((f) => f.flavour === plan.cuda) ?? null;
  const gpu = cudaReport ? pickCudaDevice(cudaReport.devices) : null;
  const cpuReport = flavours.find((f) => f.flavour === plan.cpu)!;
  const cpu = cpuReport.devices.find((d) => d.type === 'cpu');
  const whyNot = cudaReport ? (cudaReport.cuda?.reason ?? 'no CUDA device') : NO_CUDA_FLAVOUR;
  const auto = gpu
    ? `${describeDevice(gpu)} (flavour ${plan.cuda})`
    : `${cpu ? describeDevice(cpu) : 'cpu'} (flavour ${plan.cpu}): ${whyNot}`;
  const cuda = gpu ? `${describeDevice(gpu)} (flavour ${plan.cuda})` : `error: ${whyNot}`;

  if (values.json) {
    out(JSON.stringify({ flavours, auto, cuda: { usable: gpu !== null, use: gpu ? gpu.name : null, reason: gpu ? null : whyNot } }, null, 2) + '\n');
  } else {
    out(textReport(flavours, auto, cuda));
  }
  return 0;
}
