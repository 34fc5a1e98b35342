// The Device picker and the status badge, from engine.devices (what `power devices` reports) and
// the engine's state. The contract's device request is auto, cpu, cuda or vulkan: with CUDA or
// Vulkan the engine takes the device with the most free memory (for Vulkan a real GPU before a
// CPU-type device such as lavapipe), so the backend's other devices are listed, disabled, with
// that reason.
import type { DeviceInfo, DevicesReport, EngineState } from '../api-types.js';
import type { PickerOption } from './draft-options.js';

export type DeviceChoice = 'auto' | 'cpu' | 'cuda' | 'vulkan';

const GIB = 1024 ** 3;

/** "21.3 / 24.0 GiB free" */
export function freeOfTotal(d: Pick<DeviceInfo, 'freeBytes' | 'totalBytes'>): string {
  return `${(d.freeBytes / GIB).toFixed(1)} / ${(d.totalBytes / GIB).toFixed(1)} GiB free`;
}

/** Every device the engine's flavours registered, once each (by backend and name). */
export function allDevices(report: DevicesReport | null): DeviceInfo[] {
  const seen = new Map<string, DeviceInfo>();
  for (const f of report?.flavours ?? [])
    for (const d of f.devices) if (!seen.has(`${d.backend}/${d.name}`)) seen.set(`${d.backend}/${d.name}`, d);
  return [...seen.values()];
}

/** The CUDA device a `cuda` request runs on: the one with the most free memory. */
export function cudaPick(devices: readonly DeviceInfo[]): DeviceInfo | null {
  const cuda = devices.filter((d) => d.backend === 'CUDA');
  return cuda.reduce<DeviceInfo | null>((best, d) => (!best || d.freeBytes > best.freeBytes ? d : best), null);
}

/** The Vulkan device a `vulkan` request runs on: the real GPU with the most free memory, else a CPU-type one. */
export function vulkanPick(devices: readonly DeviceInfo[]): DeviceInfo | null {
  const vulkan = devices.filter((d) => d.backend === 'Vulkan');
  const real = vulkan.filter((d) => !d.onCpu);
  return (real.length > 0 ? real : vulkan).reduce<DeviceInfo | null>((best, d) => (!best || d.freeBytes > best.freeBytes ? d : best), null);
}

/** A backend's devices: the one its request runs on is the option, the others are listed disabled with `rule`. */
function backendOptions(value: 'cuda' | 'vulkan', devices: readonly DeviceInfo[], pick: DeviceInfo | null, rule: string): PickerOption[] {
  const name = value === 'cuda' ? 'CUDA' : 'Vulkan';
  return devices.map((d) => {
    const label = `${d.name} · ${d.description}${d.onCpu ? ' · runs on the CPU' : ''} · ${freeOfTotal(d)}`;
    if (d === pick) return { value, label, disabled: false };
    return { value: `${value}:${d.name}`, label, disabled: true, reason: `with ${name} the engine uses ${rule} (${pick!.name})` };
  });
}

export function deviceOptions(report: DevicesReport | null): PickerOption[] {
  const devices = allDevices(report);
  const cpu = devices.find((d) => d.type === 'cpu');
  const options: PickerOption[] = [
    { value: 'auto', label: report ? `Auto (${report.auto.split(':')[0]!.trim()})` : 'Auto', disabled: false },
    { value: 'cpu', label: cpu ? `CPU · ${cpu.description} · ${freeOfTotal(cpu)}` : 'CPU', disabled: false },
  ];
  const cuda = devices.filter((d) => d.backend === 'CUDA');
  options.push(...backendOptions('cuda', cuda, cudaPick(devices), 'the device with the most free memory'));
  if (cuda.length === 0) {
    const reason = report?.cuda.reason ?? 'no CUDA device';
    options.push({ value: 'cuda', label: `CUDA (unavailable: ${reason})`, disabled: true, reason });
  }
  const vulkan = devices.filter((d) => d.backend === 'Vulkan');
  options.push(
    ...backendOptions('vulkan', vulkan, vulkanPick(devices), 'a real GPU before one that runs on the CPU, then the most free memory'),
  );
  return options;
}

/**
 * The loaded engine's device in one short badge: `CPU`, or `CUDA0 · RTX 4090 · 21.3 / 24.0 GiB
 * free` (free memory from the devices report when it knows the device).
 */
export function deviceBadge(engine: EngineState | null, report: DevicesReport | null): string | null {
  const backend = engine?.backend;
  if (!engine?.model || !backend) return null;
  if (backend.kind === 'cpu') return 'CPU';
  // "CUDA0 (NVIDIA H200, 139.4 of 140.0 GiB free)"
  const m = /^(\S+) \((.*?)(?:, ([\d.]+) of ([\d.]+) GiB free)?\)$/.exec(backend.device);
  const name = m?.[1] ?? backend.device;
  const known = allDevices(report).find((d) => d.backend !== 'CPU' && d.name === name);
  if (known) return `${known.name} · ${known.description} · ${freeOfTotal(known)}`;
  if (m?.[3] && m[4]) return `${name} · ${m[2]} · ${m[3]} / ${m[4]} GiB free`;
  return m ? `${name} · ${m[2]}` : backend.device;
}
