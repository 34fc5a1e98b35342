// Where a request's tokens are sampled: on the CPU from rows of logits, or by llama.cpp's
// backend samplers inside the target's graph (native/src/sampling.h). One rule, used by the
// engine host for every request and by the service to describe a load before any request.
import type { SamplingOptions, SamplingPath } from '../contract/engine-types.js';

export interface SamplingPlace {
  /** the target's output layer is on a GPU */
  onGpu: boolean;
  /** proposals per round of the session (0: autoregressive) */
  k: number;
  /** why the target's GPU backend cannot sample in its graph (null or absent: it can) */
  noBackend?: string | null;
}

/**
 * ggml-vulkan's sampling ops read each output row of a verify pass from an offset of the logits
 * buffer that the device's storage alignment must divide; with a vocabulary whose rows are not a
 * multiple of it (the synthetic models' 1,056 bytes against lavapipe's 64) llama.cpp aborts. Until
 * that is fixed and covered, the Vulkan flavour samples on the CPU.
 */
export const VULKAN_NO_BACKEND_SAMPLING = "llama.cpp's Vulkan backend cannot sample verify rows in its graph for every vocabulary size";

export type ResolvedSampling = { path: 'cpu' | 'backend'; reason: string | null; problem?: undefined } | { problem: string };

/** what keeps the chain from running whole on the backend, or null */
export function backendChainProblem(sampling: SamplingOptions, k: number): string | null {
  // the rows of logits stay on the device on the backend path (native/src/sampling.cpp says the same)
  if (sampling.logprobs !== undefined) return 'log-probabilities are read from rows of logits on the CPU only';
  // llama.cpp's grammar sampler walks the grammar's stacks on the host
  if (sampling.grammar !== undefined || sampling.jsonSchema !== undefined) return 'a grammar (or JSON schema) is applied on the CPU only';
  // llama.cpp's reasoning-budget sampler has no backend implementation (native/src/sampling.cpp says the same)
  if (sampling.reasoningBudget !== undefined) return 'a reasoning budget is applied on the CPU only';
  const penalties =
    sampling.repeatLastN !== 0 && (sampling.repeatPenalty !== 1 || sampling.presencePenalty !== 0 || sampling.frequencyPenalty !== 0);
  // llama.cpp's penalties keep one history per sequence: with K + 1 rows of a sequence in one
  // pass, a row would not see the rows before it (native/src/sampling.cpp says the same)
  return penalties && k > 0 ? 'repeat, presence and frequency penalties run on the backend only without proposals (K = 0)' : null;
}

/**
 * auto: the backend on a GPU when the whole chain runs there, else the CPU (with why); backend:
 * refused with the reason when the chain cannot run there; cpu: the CPU.
 */
export function resolveSamplingPath(requested: SamplingPath, sampling: SamplingOptions, place: SamplingPlace): ResolvedSampling {
  if (requested === 'cpu') return { path: 'cpu', reason: null };
  if (place.noBackend) {
    return requested === 'backend'
      ? { problem: `backend sampling is not available here: ${place.noBackend} (use --sampling cpu)` }
      : { path: 'cpu', reason: `auto: ${place.noBackend}` };
  }
  const problem = backendChainProblem(sampling, place.k);
  if (requested === 'backend')
    return problem
      ? { problem: `backend sampling cannot run this chain: ${problem} (use --sampling cpu)` }
      : { path: 'backend', reason: null };
  if (!place.onGpu) return { path: 'cpu', reason: 'auto: the target runs on the CPU, where its own sampling is as fast' };
  if (problem) return { path: 'cpu', reason: `auto: ${problem}` };
  return { path: 'backend', reason: null };
}

/** how the proposer drafts (greedy): on the backend where the target's output is on a GPU that samples in its graph */
export function proposerSamplingPath(requested: SamplingPath, onGpu: boolean, noBackend: string | null = null): 'cpu' | 'backend' {
  if (noBackend) return 'cpu';
  return requested === 'auto' ? (onGpu ? 'backend' : 'cpu') : requested;
}
