// power devices [--json]: what each built flavour of the addon loads (devices with memory),
// why CUDA does not load when it does not (driver, runtime libraries, no device), and what
// --device auto / cuda / vulkan would do. Always exits 0: it is a report, not a request.
import type { DevicesReport } from '../contract/api/engine.js';
import { parseEndpointList, RpcEndpointError } from '../engine/rpc.js';
import { devicesReport, remoteDevicesReport, type RemoteReport } from '../runtime/devices.js';
import { parseFlags, str } from './args.js';
import { UsageError } from './errors.js';

export const DEVICES_USAGE = `power devices [--rpc HOST:PORT,...] [--json]
  Lists the devices each built flavour of the addon loads (name, description, type, memory;
  for the CPU the extensions its llama.cpp was compiled for and the weight buffers it uses; for a
  CUDA GPU its compute capability and, on cuda-src, whether verify rows are batch-invariant there),
  why CUDA does not load when it does not, and what --device auto, cuda and vulkan would use
  (a Vulkan device that runs on the CPU, such as Mesa's lavapipe, is marked: only --device vulkan uses it).
  --rpc: also the devices of those remote machines (power rpc), with their memory.`;

type FlavourReport = DevicesReport['flavours'][number];

const GIB = 1024 ** 3;

/** A CPU weight buffer, and what it means for the kernels that multiply the weights in it. */
function weightBufferText(name: string): string {
  if (name === 'CPU_REPACK') return 'CPU_REPACK (interleaved Q4_0, Q4_K, IQ4_NL and MXFP4 weights on AVX2)';
  return `${name} (kernels of their own for these weights)`;
}

function textReport(flavours: FlavourReport[], auto: string, cuda: string, vulkan: string): string {
  const lines: string[] = [];
  for (const f of flavours) {
    lines.push(`flavour ${f.flavour} (${f.dir})`);
    for (const d of f.devices) {
      lines.push(
        `  ${d.name.padEnd(8)}${d.type.padEnd(6)}${d.description.padEnd(32)}${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free`,
      );
      if (d.onCpu) lines.push('          runs on the CPU (a software Vulkan device): only --device vulkan uses it');
      if (d.computeCapability) lines.push(`          compute capability ${d.computeCapability}`);
      const claim = f.batchInvariance?.find((c) => c.device === d.name);
      if (claim) lines.push(`          ${claim.claim}`);
      if (d.type === 'cpu' && d.features) {
        lines.push(`          compiled for: ${d.features.length ? d.features.join(' ') : 'no optional extensions'}`);
        const extra = d.extraBufferTypes ?? [];
        lines.push(
          `          weight buffers: ${extra.length ? extra.map(weightBufferText).join(', ') : 'plain (every matrix in one kernel family)'}`,
        );
      }
    }
    if (f.cuda && f.cuda.reason) {
      lines.push(`  CUDA    not available: ${f.cuda.reason}`);
      for (const l of f.cuda.libraries) {
        lines.push(`    ${l.name.padEnd(20)}${l.role.padEnd(9)}${l.error === null ? 'loads' : `missing (${l.error})`}`);
      }
    }
  }
  lines.push(`--device auto -> ${auto}`, `--device cuda -> ${cuda}`, `--device vulkan -> ${vulkan}`);
  return lines.join('\n') + '\n';
}

function remoteText(flavour: string, remote: RemoteReport[]): string {
  const lines = [`remote machines (--rpc, through flavour ${flavour}; the device names as a load with this --rpc list numbers them)`];
  for (const r of remote) {
    if (r.error) {
      lines.push(`  ${r.endpoint}: ${r.error}`);
      continue;
    }
    for (const d of r.devices) {
      lines.push(
        `  ${d.name.padEnd(8)}${r.endpoint.padEnd(32)}${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

export async function devicesCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: 'boolean' }, rpc: { type: 'string' } }, 0);
  const rpcRaw = str(values, 'rpc');
  let endpoints: string[] = [];
  if (rpcRaw !== undefined) {
    try {
      endpoints = parseEndpointList(rpcRaw);
    } catch (error) {
      if (error instanceof RpcEndpointError) throw new UsageError(`--rpc: ${error.message}`);
      throw error;
    }
  }
  const report = await devicesReport();
  const remote = endpoints.length > 0 ? await remoteDevicesReport(endpoints) : null;
  if (values.json) {
    out(JSON.stringify(remote ? { ...report, remote: remote.remote } : report, null, 2) + '\n');
  } else {
    const vulkan = report.vulkan.usable ? (report.vulkan.use ?? '') : `error: ${report.vulkan.reason}`;
    out(textReport(report.flavours, report.auto, report.cuda.usable ? report.auto : `error: ${report.cuda.reason}`, vulkan));
    if (remote) out(remoteText(remote.flavour, remote.remote));
  }
  return 0;
}
