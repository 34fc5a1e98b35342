// power devices [--json]: what each built flavour of the addon loads (devices with memory),
// why CUDA does not load when it does not (driver, runtime libraries, no device), and what
// --device auto / cuda would do. Always exits 0: it is a report, not a request.
import type { DevicesReport } from '../../contract/api/engine.js';
import { devicesReport } from '../runtime/devices.js';
import { parseFlags } from './args.js';

export const DEVICES_USAGE = `power devices [--json]
  Lists the devices each built flavour of the addon loads (name, description, type, memory),
  why CUDA does not load when it does not, and what --device auto and --device cuda would use.`;

type FlavourReport = DevicesReport['flavours'][number];

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
  const report = await devicesReport();
  if (values.json) {
    out(JSON.stringify(report, null, 2) + '\n');
  } else {
    out(textReport(report.flavours, report.auto, report.cuda.usable ? report.auto : `error: ${report.cuda.reason}`));
  }
  return 0;
}
