// Order statistics and the per-request figures that come from round records.
import type { Spread } from './schema.js';

/** The q-quantile (0..1) by linear interpolation between order statistics (numpy's default). */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function median(values: readonly number[]): number | null {
  return quantile(values, 0.5);
}

/** Median, p10 and p90 of the non-null values; null when there are none. */
export function spread(values: readonly (number | null)[]): Spread | null {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (present.length === 0) return null;
  return { median: quantile(present, 0.5)!, p10: quantile(present, 0.1)!, p90: quantile(present, 0.9)!, n: present.length };
}

/** What the steady-decode figure needs of a round. */
export interface TimedRound {
  emitted: number;
  /** microseconds since the request started */
  endUs: number;
}

/**
 * Steady decode rate: the tokens emitted after the first `warmupRounds` rounds divided by the
 * time they took (from the end of the last warm-up round to the end of the last round). Null
 * when no round follows the warm-up. Unlike a median of per-round rates it weighs a
 * speculative round by the tokens it emitted, so spec and control compare like for like.
 */
export function steadyDecodeTokensPerSecond(rounds: readonly TimedRound[], warmupRounds: number): number | null {
  const skip = Math.max(1, warmupRounds);
  if (rounds.length <= skip) return null;
  const from = rounds[skip - 1]!.endUs;
  const to = rounds[rounds.length - 1]!.endUs;
  let tokens = 0;
  for (let i = skip; i < rounds.length; i++) tokens += rounds[i]!.emitted;
  return to > from ? (tokens * 1e6) / (to - from) : null;
}
