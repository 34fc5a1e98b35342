// The device-split flags of the commands that load a model (generate, audit, bench): remote
// machines (--rpc), llama.cpp's --split-mode, --tensor-split and --main-gpu, and the MoE
// offload (--cpu-moe, --n-cpu-moe). One parser, so every command reads them alike.
import { parseEndpointList, RpcEndpointError } from '../engine/rpc.js';
import { parseTensorSplit, SPLIT_MODES, SplitError, type SplitRequest } from '../engine/split.js';
import { choice, int, str, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const SPLIT_FLAGS = {
  rpc: { type: 'string' },
  'split-mode': { type: 'string' },
  'tensor-split': { type: 'string' },
  'main-gpu': { type: 'string' },
  'cpu-moe': { type: 'boolean' },
  'n-cpu-moe': { type: 'string' },
} as const;

/** The usage lines of these flags (two lines, the second indented as a usage line). */
export const SPLIT_USAGE = `[--rpc HOST:PORT,...] [--split-mode layer|row|none] [--tensor-split A,B,...]
  [--main-gpu N] [--cpu-moe | --n-cpu-moe N]`;

/** What the flags ask of the split; undefined when none was given. */
export function splitFromFlags(values: Parsed['values']): SplitRequest | undefined {
  const out: SplitRequest = {};
  const rpc = str(values, 'rpc');
  if (rpc !== undefined) {
    try {
      out.rpc = parseEndpointList(rpc);
    } catch (error) {
      if (error instanceof RpcEndpointError) throw new UsageError(`--rpc: ${error.message}`);
      throw error;
    }
  }
  const mode = choice(values, 'split-mode', SPLIT_MODES);
  if (mode) out.splitMode = mode;
  const ts = str(values, 'tensor-split');
  if (ts !== undefined) {
    try {
      out.tensorSplit = parseTensorSplit(ts);
    } catch (error) {
      if (error instanceof SplitError) throw new UsageError(error.message);
      throw error;
    }
  }
  const main = int(values, 'main-gpu', { min: 0, max: 15 });
  if (main !== undefined) out.mainGpu = main;
  if (values['cpu-moe'] === true) out.cpuMoe = true;
  const n = int(values, 'n-cpu-moe', { min: 0, max: 100000 });
  if (n !== undefined) out.nCpuMoe = n;
  if (out.cpuMoe && n !== undefined) throw new UsageError('give either --cpu-moe (every block) or --n-cpu-moe N (the first N blocks)');
  return Object.keys(out).length > 0 ? out : undefined;
}
