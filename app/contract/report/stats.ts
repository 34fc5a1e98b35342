// Order statistics and the per-request figures that come from round records.
import { DraftSource } from '../engine-types.js';
import type { Strategy } from '../strategies.js';
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

/** What a chain member's figures need of a round (an engine round, an API round, a report sample). */
export interface MemberRound {
  /** which chain member drafted the round (0-based); absent: none did, or not a chain */
  member?: number | undefined;
  proposed: number;
  accepted: number;
}

/** One chain member's share of the verify rounds. */
export interface MemberStats {
  strategy: Strategy;
  /** verify rounds this member drafted */
  rounds: number;
  proposed: number;
  accepted: number;
  /** accepted / proposed; null when it proposed nothing */
  acceptanceRate: number | null;
}

/**
 * Each member's rounds, proposed and accepted tokens, in the chain's order (every member listed,
 * one that never drafted with zeros). Only a round that drafted names its member, so the
 * members' counts add up to the request's verify rounds, proposed and accepted tokens.
 */
export function memberStats(members: readonly Strategy[], rounds: readonly MemberRound[]): MemberStats[] {
  const out = members.map((strategy) => ({ strategy, rounds: 0, proposed: 0, accepted: 0 }));
  for (const r of rounds) {
    const m = r.member === undefined ? undefined : out[r.member];
    if (!m) continue;
    m.rounds++;
    m.proposed += r.proposed;
    m.accepted += r.accepted;
  }
  return out.map((m) => ({ ...m, acceptanceRate: m.proposed > 0 ? m.accepted / m.proposed : null }));
}

/** What the per-source figures need of a round (an engine round, an API round, a report sample). */
export interface SourceRound {
  draftSource?: DraftSource | undefined;
  expectedAccepted?: number | undefined;
  proposed: number;
  accepted: number;
}

/** The rounds whose draft came from one source: how many, what they drafted and kept, expected against actual. */
export interface SourceStats {
  source: DraftSource;
  rounds: number;
  drafted: number;
  accepted: number;
  /** per round: the proposals the drafter expected accepted (null: no rounds) */
  meanExpected: number | null;
  /** per round: the proposals accepted (null: no rounds) */
  meanAccepted: number | null;
}

/**
 * The rounds by where their draft came from (`suffix`: this request, or the store of earlier
 * replies), in DraftSource's order, only the sources some round names: the drafter's expected
 * acceptance beside the actual one says whether it drafted too long or too short.
 */
export function sourceStats(rounds: readonly SourceRound[]): SourceStats[] {
  return DraftSource.options.flatMap((source) => {
    const own = rounds.filter((r) => r.draftSource === source);
    if (own.length === 0) return [];
    const sum = (f: (r: SourceRound) => number) => own.reduce((n, r) => n + f(r), 0);
    return [
      {
        source,
        rounds: own.length,
        drafted: sum((r) => r.proposed),
        accepted: sum((r) => r.accepted),
        meanExpected: sum((r) => r.expectedAccepted ?? 0) / own.length,
        meanAccepted: sum((r) => r.accepted) / own.length,
      },
    ];
  });
}
