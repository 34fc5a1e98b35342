// What one generation request reports (`power generate --json`, the UI's report): emitted
// tokens, their digest, the strategy and its K/S, why it stopped, and the evidence.
import { z } from 'zod';

import { StopReason, type NativeGenerateResult, type RoundRecord } from './engine-types.js';
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
export const EngineEvidence = z.object({
  /** "cpu (AMD EPYC)" or "CUDA0 (NVIDIA H200, 139.4 of 140.0 GiB free)" */
  device: z.string(),
  kind: z.enum(['cpu', 'cuda', 'vulkan']),
  /** the addon flavour the engine host loaded: cpu, cpu-prebuilt, cuda, cuda-src */
  flavour: z.string(),
  /**
   * the flavour's verify pass computes each row exactly as a one-row decode does (measured for
   * the CPU flavours: true for cpu, false for cpu-prebuilt; false for CUDA until measured)
   */
  batchInvariant: z.boolean(),
  /**
   * why batchInvariant is false (the flavour, the Flash Attention setting, K, the CUDA device's
   * architecture and the model's attention: docs/exactness.md); null when it is true; absent in
   * what was recorded before it was reported
   */
  batchInvariantWhy: z.string().nullable().optional(),
  llamaCppRelease: z.string(),
  /** layers offloaded to the GPU ("all" or a count); null on the CPU */
  gpuLayers: z.union([z.literal('all'), z.number().int().min(0)]).nullable(),
  /** what llama.cpp settled on for the target's context */
  flashAttn: z.enum(['on', 'off', 'unknown']),
  /** where tokens were sampled: cpu, or backend (llama.cpp's samplers in the target's graph) */
  sampling: z.enum(['cpu', 'backend']),
  /** why sampling "auto" chose the CPU (null when it did not, or the path was asked for) */
  samplingReason: z.string().nullable(),
  /** how --device auto decided (null for an explicit --device) */
  choice: z.string().nullable(),
  /** the device-memory estimate checked before loading (CUDA only) */
  memoryEstimateBytes: z.number().nullable(),
});
export type EngineEvidence = z.infer<typeof EngineEvidence>;

export const GenerationResult = z.object({
  tokens: z.array(z.number().int()),
  text: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  strategy: z.enum(STRATEGIES),
  /** a chain's members after `strategy`, asked in order when it drafts nothing (absent: one strategy) */
  fallbacks: z.array(z.enum(STRATEGIES)).optional(),
  /** p-min, when set: greedy drafters stopped under this top-1 probability */
  pMin: z.number().min(0).max(1).optional(),
  /** present when adaptive K shortened drafts after rejections */
  adaptiveK: z.literal(true).optional(),
  k: z.number().int().nullable(),
  s: z.number().int().nullable(),
  /** FR: the MTP head drafted among the first frVocab tokens (null: the whole vocabulary) */
  frVocab: z.number().int().positive().nullable().default(null),
  stopReason: StopReason,
  /** the sampler seed of a stochastic run (null when greedy) */
  seed: z.number().int().nullable(),
  stats: GenerationStats,
  backend: EngineEvidence,
});
export type GenerationResult = z.infer<typeof GenerationResult>;

/**
 * Rounds before the steady part of a request: round 0 carries the first token (its time is the
 * TTFT), round 1 pays for warm-up (a draft model catches up on the prompt there).
 */
export const WARMUP_ROUNDS = 2;

/**
 * The evidence of a request kept up to date round by round: constant work per round, so a
 * snapshot at token 4,000 costs what one at token 4 does (a reply streams one per round).
 */
export class RunningStats {
  private emitted = 0;
  private proposed = 0;
  private accepted = 0;
  private verifyRounds = 0;
  private replays = 0;
  private clampedTo: number | null = null;
  private count = 0;
  private firstEndUs: number | null = null;
  private lastEndUs = 0;
  /** the end of the last warm-up round, and the tokens emitted after it */
  private warmEndUs: number | null = null;
  private steadyTokens = 0;
  /** per proposal position: verify rounds that reached it, and those that accepted it */
  private readonly reached: number[] = [];
  private readonly acceptedAt: number[] = [];

  add(round: RoundRecord): void {
    this.count++;
    this.emitted += round.tokens.length;
    this.proposed += round.proposed;
    this.accepted += round.accepted;
    if (round.replay) this.replays++;
    if (round.clampedTo !== null) this.clampedTo = round.clampedTo;
    if (this.firstEndUs === null) this.firstEndUs = round.endUs;
    this.lastEndUs = round.endUs;
    if (this.count === WARMUP_ROUNDS) this.warmEndUs = round.endUs;
    else if (this.count > WARMUP_ROUNDS) this.steadyTokens += round.tokens.length;
    if (round.proposed > 0) {
      this.verifyRounds++;
      for (let i = 0; i < round.proposed; i++) {
        this.reached[i] = (this.reached[i] ?? 0) + 1;
        if (round.accepted > i) this.acceptedAt[i] = (this.acceptedAt[i] ?? 0) + 1;
      }
    }
  }

  /** rounds so far, the first token's included */
  roundCount(): number {
    return this.count;
  }

  /** per proposal position: how many rounds accepted it (the counts behind acceptancePerPosition) */
  acceptedPerPosition(): number[] {
    return this.reached.map((_, i) => this.acceptedAt[i] ?? 0);
  }

  /** The engine's totals as far as the rounds so far tell them (a snapshot while a reply streams). */
  partialNative(promptTokens: number): NativeGenerateResult {
    return {
      stopReason: 'max-tokens',
      replays: this.replays,
      clampedTo: this.clampedTo,
      promptTokens,
      reusedTokens: 0,
      prefillUs: 0,
      totalUs: this.lastEndUs,
      generated: this.emitted,
      grammarCut: 0,
    };
  }

  /**
   * The stats with the engine's totals (`native`) and the rounds added so far. The steady decode
   * rate is the tokens of the rounds after the warm-up ones over the time from the end of the
   * last warm-up round to the end of the last round: a rate over the whole steady part (as
   * llama.cpp's "decoded N tokens in T s"), not a median of per-round rates, which overstates
   * speculative runs (most rounds emit K + 1 tokens, the slower rejecting rounds fewer).
   */
  stats(native: NativeGenerateResult): GenerationStats {
    const prefilled = native.promptTokens - native.reusedTokens;
    const steadyUs = this.warmEndUs === null ? 0 : this.lastEndUs - this.warmEndUs;
    return {
      promptTokens: native.promptTokens,
      ttftMs: this.firstEndUs === null ? null : this.firstEndUs / 1000,
      prefillTokensPerSecond: prefilled > 0 && native.prefillUs > 0 ? (prefilled * 1e6) / native.prefillUs : null,
      steadyDecodeTokensPerSecond: this.count > WARMUP_ROUNDS && steadyUs > 0 ? (this.steadyTokens * 1e6) / steadyUs : null,
      requestTokensPerSecond: this.emitted > 0 && native.totalUs > 0 ? (this.emitted * 1e6) / native.totalUs : null,
      proposed: this.proposed,
      accepted: this.accepted,
      rounds: this.verifyRounds,
      replays: native.replays,
      clampedTo: native.clampedTo,
      acceptanceRate: this.proposed > 0 ? this.accepted / this.proposed : null,
      meanAcceptanceLength: this.verifyRounds > 0 ? 1 + this.accepted / this.verifyRounds : null,
      acceptancePerPosition: this.reached.map((n, i) => (this.acceptedAt[i] ?? 0) / n),
    };
  }
}

/**
 * The evidence of one request, from its rounds and the engine's totals; the first round's end is
 * the TTFT.
 */
export function computeStats(native: NativeGenerateResult, rounds: readonly RoundRecord[]): GenerationStats {
  const running = new RunningStats();
  for (const round of rounds) running.add(round);
  return running.stats(native);
}

/** "sha256:<hex>" over the token ids as little-endian int32 (WebCrypto: runs in Node and browsers). */
export async function tokenDigest(tokens: readonly number[]): Promise<string> {
  const bytes = new Uint8Array(tokens.length * 4);
  const view = new DataView(bytes.buffer);
  tokens.forEach((t, i) => view.setInt32(i * 4, t, true));
  const hash = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return `sha256:${Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
