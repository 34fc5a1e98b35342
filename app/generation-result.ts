// What one generation request reports (`power generate --json`, the UI's report): emitted
// tokens, their digest, the strategy and its K/S, why it stopped, and the evidence.
import { z } from 'zod';

import { StopReason, type NativeGenerateResult, type RoundRecord } from './engine-protocol.js';
import { STRATEGIES } from './strategies.js';

export const GenerationStats = z.object({
  promptTokens: z.number().int(),
  ttftMs: z.number().nullable(),
  prefillTokensPerSecond: z.number().nullable(),
  /** tokens emitted after the warm-up rounds / the time they took (see computeStats) */
  steadyDecodeTokensPerSecond: z.number().nullable(),
  requestTokensPerSecond: z.number().nullable(),
  proposed: z.number().int(),
  accepted: z.number().int(),
  rounds: z.number().int(),
  replays: z.number().int(),
  clampedTo: z.number().int().nullable(),
  acceptanceRate: z.number().nullable(),
  meanAcceptanceLength: z.number().nullable(),
  acceptancePerPosition: z.array(z.number()),
});
export type GenerationStats = z.infer<typeof GenerationStats>;

/** What actually ran the request (not what was asked for). */
export const GenerationBackend = z.object({
  /** "cpu (AMD EPYC)" or "CUDA0 (NVIDIA H200, 139.4 of 140.0 GiB free)" */
  device: z.string(),
  kind: z.enum(['cpu', 'cuda']),
  /** the addon flavour the engine host loaded: cpu, cpu-prebuilt, cuda, cuda-src */
  flavour: z.string(),
  /**
   * the flavour's verify pass computes each row exactly as a one-row decode does (measured for
   * the CPU flavours: true for cpu, false for cpu-prebuilt; false for CUDA until measured)
   */
  batchInvariant: z.boolean(),
  llamaCppRelease: z.string(),
  /** layers offloaded to the GPU ("all" or a count); null on the CPU */
  gpuLayers: z.union([z.literal('all'), z.number().int().min(0)]).nullable(),
  /** what llama.cpp settled on for the target's context */
  flashAttn: z.enum(['on', 'off', 'unknown']),
  /** where tokens are sampled: llama.cpp's backend (GPU) samplers are not used yet */
  sampling: z.literal('cpu'),
  /** how --device auto decided (null for an explicit --device) */
  choice: z.string().nullable(),
  /** the device-memory estimate checked before loading (CUDA only) */
  memoryEstimateBytes: z.number().nullable(),
});
export type GenerationBackend = z.infer<typeof GenerationBackend>;

export const GenerationResult = z.object({
  tokens: z.array(z.number().int()),
  text: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  strategy: z.enum(STRATEGIES),
  k: z.number().int().nullable(),
  s: z.number().int().nullable(),
  stopReason: StopReason,
  /** the sampler seed of a stochastic run (null when greedy) */
  seed: z.number().int().nullable(),
  stats: GenerationStats,
  backend: GenerationBackend,
});
export type GenerationResult = z.infer<typeof GenerationResult>;

/**
 * Rounds before the steady part of a request: round 0 carries the first token (its time is the
 * TTFT), round 1 pays for warm-up (a draft model catches up on the prompt there).
 */
export const WARMUP_ROUNDS = 2;

/**
 * The steady decode rate: tokens emitted by the rounds after the warm-up ones, divided by the time
 * from the end of the last warm-up round to the end of the last round. A rate over the whole
 * steady part (llama.cpp's "decoded N tokens in T s" is the same kind of figure), not a median of
 * per-round rates, which overstates speculative runs (most rounds emit K + 1 tokens, the slower
 * rejecting rounds fewer). Null when no round follows the warm-up.
 */
export function steadyDecodeRate(rounds: readonly RoundRecord[]): number | null {
  if (rounds.length <= WARMUP_ROUNDS) return null;
  let tokens = 0;
  for (let i = WARMUP_ROUNDS; i < rounds.length; i++) tokens += rounds[i]!.tokens.length;
  const us = rounds[rounds.length - 1]!.endUs - rounds[WARMUP_ROUNDS - 1]!.endUs;
  return us > 0 ? (tokens * 1e6) / us : null;
}

/**
 * The evidence of one request, from its rounds and the engine's totals; the first round's end is
 * the TTFT.
 */
export function computeStats(native: NativeGenerateResult, rounds: readonly RoundRecord[]): GenerationStats {
  const emitted = rounds.reduce((n, r) => n + r.tokens.length, 0);
  const first = rounds[0];
  const proposed = rounds.reduce((n, r) => n + r.proposed, 0);
  const accepted = rounds.reduce((n, r) => n + r.accepted, 0);
  const verifyRounds = rounds.filter((r) => r.proposed > 0);
  const prefilled = native.promptTokens - native.reusedTokens;

  const maxWidth = verifyRounds.reduce((w, r) => Math.max(w, r.proposed), 0);
  const perPosition: number[] = [];
  for (let i = 0; i < maxWidth; i++) {
    const reached = verifyRounds.filter((r) => r.proposed > i);
    perPosition.push(reached.filter((r) => r.accepted > i).length / reached.length);
  }

  return {
    promptTokens: native.promptTokens,
    ttftMs: first ? first.endUs / 1000 : null,
    prefillTokensPerSecond: prefilled > 0 && native.prefillUs > 0 ? (prefilled * 1e6) / native.prefillUs : null,
    steadyDecodeTokensPerSecond: steadyDecodeRate(rounds),
    requestTokensPerSecond: emitted > 0 && native.totalUs > 0 ? (emitted * 1e6) / native.totalUs : null,
    proposed,
    accepted,
    rounds: verifyRounds.length,
    replays: native.replays,
    clampedTo: native.clampedTo,
    acceptanceRate: proposed > 0 ? accepted / proposed : null,
    meanAcceptanceLength: verifyRounds.length > 0 ? 1 + accepted / verifyRounds.length : null,
    acceptancePerPosition: perPosition,
  };
}

/** "sha256:<hex>" over the token ids as little-endian int32 (WebCrypto: runs in Node and browsers). */
export async function tokenDigest(tokens: readonly number[]): Promise<string> {
  const bytes = new Uint8Array(tokens.length * 4);
  const view = new DataView(bytes.buffer);
  tokens.forEach((t, i) => view.setInt32(i * 4, t, true));
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return `sha256:${Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
