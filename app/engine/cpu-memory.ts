// Memory a generation needs on the CPU, checked before the context is created: llama.cpp
// allocates the whole KV cache up front, so `--ctx 16777216` would take gigabytes (or get the
// engine killed) without a word. Weights are memory-mapped (paged in as needed), so only what
// is allocated counts: KV cache, recurrent state, compute buffers and the reserve.
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';

import { describeEstimate, estimateMemory, formatBytes, type MemoryPlan } from './memory-estimate.js';

/** Bytes the system can give without swapping: MemAvailable on Linux, free memory elsewhere. */
export function availableMemoryBytes(): number {
  if (process.platform === 'linux') {
    try {
      const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
      if (m) return Number(m[1]) * 1024;
    } catch {
      // fall through to os.freemem()
    }
  }
  return freemem();
}

/** Allocated (not mapped) bytes of a CPU run. */
export function cpuAllocationBytes(plan: MemoryPlan): number {
  const e = estimateMemory({ ...plan, gpuLayers: -1 });
  return e.kv + e.recurrent + e.compute + e.reserve;
}

/** null when the plan fits in `availableBytes`, else the refusal with numbers. */
export function checkCpuFit(plan: MemoryPlan, availableBytes: number): string | null {
  const need = cpuAllocationBytes(plan);
  if (need <= availableBytes) return null;
  const e = estimateMemory({ ...plan, gpuLayers: -1 });
  // without Flash Attention llama.cpp keeps a batch's attention scores (batch × context × heads)
  const withFlash = plan.flashAttn ? null : cpuAllocationBytes({ ...plan, flashAttn: true });
  const advice =
    withFlash !== null && withFlash <= availableBytes
      ? `lower --ctx, or turn Flash Attention on (--flash-attn on: ${formatBytes(withFlash)}, exact on the default engine too)`
      : 'lower --ctx';
  return (
    `not enough memory: a context of ${plan.contextSize} tokens needs about ${formatBytes(need)} on the CPU ` +
    `(of ${describeEstimate({ ...e, weights: 0, draft: 0, total: need }, plan)}) but ${formatBytes(availableBytes)} is available; ${advice}`
  );
}
