// The flags that say what to load and where, shared by the commands that open a target
// (generate, audit, bench): the model and its draft or strategy, the context, threads, device,
// offload and Flash Attention, and llama.cpp's log.
import { int, str, type Parsed } from './args.js';
import { SPLIT_FLAGS } from './split-flags.js';

export const LOAD_FLAGS = {
  model: { type: 'string' },
  draft: { type: 'string' },
  strategy: { type: 'string' },
  ctx: { type: 'string' },
  threads: { type: 'string' },
  device: { type: 'string' },
  'flash-attn': { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

/** --gpu-layers N|all; -1: all of them, llama.cpp's "as many as fit" */
export const OFFLOAD_FLAGS = { 'gpu-layers': { type: 'string' } } as const;

/** Every flag of a command that opens a target: what to load, the offload and the device split. */
export const TARGET_FLAGS = { ...LOAD_FLAGS, ...OFFLOAD_FLAGS, ...SPLIT_FLAGS } as const;

export function gpuLayers(values: Parsed['values']): number {
  const raw = str(values, 'gpu-layers');
  if (raw === undefined || raw === 'all') return -1;
  return int(values, 'gpu-layers', { min: 0, max: 100000 })!;
}
