// One request of a benchmark (or a chat) as a report record: the engine's evidence plus the
// steady-decode figure and the raw per-round samples.
import type { RoundRecord, StopReason } from '../engine-types.js';
import { WARMUP_ROUNDS, type GenerationStats } from '../generation-result.js';
import type { RequestRecord, RoundSample } from './schema.js';
import { steadyDecodeTokensPerSecond } from './stats.js';

/** The evidence fields a record takes from the engine's stats (not its decode median). */
type Evidence = Pick<
  GenerationStats,
  | 'promptTokens'
  | 'ttftMs'
  | 'prefillTokensPerSecond'
  | 'requestTokensPerSecond'
  | 'proposed'
  | 'accepted'
  | 'rounds'
  | 'replays'
  | 'clampedTo'
  | 'acceptanceRate'
  | 'meanAcceptanceLength'
  | 'acceptancePerPosition'
> & {
  /** prompt tokens kept from the session's previous request (a reply's final stats say; null or absent: unknown) */
  reusedPromptTokens?: number | null;
};

export interface RequestOutcome {
  task: string;
  category: string;
  profile: string;
  repeat: number;
  seed: number | null;
  generatedTokens: number;
  stopReason: StopReason;
  digest: string;
  stats: Evidence;
  rounds: readonly RoundRecord[];
}

/** The timing and counts of one round, as the engine reports them and as a saved reply keeps them. */
export type RoundFigures = Pick<
  RoundRecord,
  | 'proposed'
  | 'accepted'
  | 'replay'
  | 'clampedTo'
  | 'endUs'
  | 'proposeUs'
  | 'verifyUs'
  | 'commitUs'
  | 'member'
  | 'draftSource'
  | 'expectedAccepted'
>;

export function roundSample(r: RoundFigures, emitted: number): RoundSample {
  return {
    proposed: r.proposed,
    accepted: r.accepted,
    emitted,
    replay: r.replay,
    clampedTo: r.clampedTo,
    endUs: r.endUs,
    proposeUs: r.proposeUs,
    verifyUs: r.verifyUs,
    commitUs: r.commitUs,
    ...(r.member !== undefined ? { member: r.member } : {}),
    ...(r.draftSource !== undefined ? { draftSource: r.draftSource, expectedAccepted: r.expectedAccepted ?? 0 } : {}),
  };
}

export function roundSamples(rounds: readonly RoundRecord[]): RoundSample[] {
  return rounds.map((r) => roundSample(r, r.tokens.length));
}

/** The record without `matchesControl` (compareWithControl fills it once the control ran). */
export function requestRecord(o: RequestOutcome): Omit<RequestRecord, 'matchesControl'> {
  const { rounds, ...rest } = o;
  return recordFromSamples({ ...rest, samples: roundSamples(rounds) });
}

/** The same from rounds already reduced to samples (a chat reply keeps its rounds in the API's shape). */
export function recordFromSamples(o: Omit<RequestOutcome, 'rounds'> & { samples: RoundSample[] }): Omit<RequestRecord, 'matchesControl'> {
  const samples = o.samples;
  const s = o.stats;
  return {
    task: o.task,
    category: o.category,
    profile: o.profile,
    repeat: o.repeat,
    seed: o.seed,
    promptTokens: s.promptTokens,
    reusedPromptTokens: s.reusedPromptTokens ?? null,
    generatedTokens: o.generatedTokens,
    stopReason: o.stopReason,
    ttftMs: s.ttftMs,
    prefillTokensPerSecond: s.prefillTokensPerSecond,
    steadyDecodeTokensPerSecond: steadyDecodeTokensPerSecond(samples, WARMUP_ROUNDS),
    requestTokensPerSecond: s.requestTokensPerSecond,
    proposed: s.proposed,
    accepted: s.accepted,
    rounds: s.rounds,
    acceptanceRate: s.acceptanceRate,
    meanAcceptanceLength: s.meanAcceptanceLength,
    acceptancePerPosition: s.acceptancePerPosition,
    replays: s.replays,
    clampedTo: s.clampedTo,
    digest: o.digest,
    samples,
  };
}
