// What the RESULTS files say about the machine a run had: the CPU, its cores and memory, the load.
import { cpus, loadavg, totalmem } from 'node:os';

export function cpuModel(): string {
  return cpus()[0]?.model.trim() ?? 'unknown CPU';
}

/** "AMD EPYC, 2 logical cores, 24 GiB" */
export function machineLine(): string {
  return `${cpuModel()}, ${cpus().length} logical cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

/** The 1-minute load average. */
export function load1(): number {
  return loadavg()[0] ?? 0;
}

/** A moment to the second, as the RESULTS files date their sections: 2026-12-01T05:38:19Z. */
export function isoSeconds(date: Date = new Date()): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
