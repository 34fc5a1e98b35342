// Pure derivations over request records: the digest comparison with the control and the
// per-profile aggregates (medians with spread, speedups, pooled acceptance per position). The
// request-wide speedup counts only the pairs that prefilled alike (prefill.ts).
import { prefillsAlike } from './prefill.js';
import type { CategorySummary, ProfileRun, ProfileSummary, RequestRecord, RequestSpeedup, Speedup } from './schema.js';
import { median, memberStats, sourceStats, spread, type SourceStats } from './stats.js';

export const CONTROL = 'control';

/** (task, repeat): the requests that ran the same prompt with the same seed. */
function pairKey(r: Pick<RequestRecord, 'task' | 'repeat'>): string {
  return `${r.repeat}\u0000${r.task}`;
}

/** Fills `matchesControl`: whether each non-control digest equals the control's for the same task and repeat. */
export function compareWithControl<T extends Omit<RequestRecord, 'matchesControl'>>(
  requests: readonly T[],
): (T & { matchesControl: boolean | null })[] {
  const control = new Map<string, string>();
  for (const r of requests) if (r.profile === CONTROL) control.set(pairKey(r), r.digest);
  return requests.map((r) => {
    if (r.profile === CONTROL) return { ...r, matchesControl: null };
    const digest = control.get(pairKey(r));
    return { ...r, matchesControl: digest === undefined ? null : digest === r.digest };
  });
}

type Figure = 'steadyDecodeTokensPerSecond' | 'requestTokensPerSecond';

/** The profile's requests with their control's, where both had the figure (the control's above 0). */
function paired(
  own: readonly RequestRecord[],
  control: ReadonlyMap<string, RequestRecord>,
  figure: Figure,
): [RequestRecord, RequestRecord][] {
  return own.flatMap((r): [RequestRecord, RequestRecord][] => {
    const base = control.get(pairKey(r));
    const [value, of] = [r[figure], base?.[figure]];
    return base && value !== null && of !== null && of !== undefined && of > 0 ? [[r, base]] : [];
  });
}

const ratioOf =
  (figure: Figure) =>
  ([r, base]: [RequestRecord, RequestRecord]) =>
    r[figure]! / base[figure]!;

function speedup(own: readonly RequestRecord[], control: ReadonlyMap<string, RequestRecord>, figure: Figure): Speedup {
  const pairs = paired(own, control, figure);
  const mine = median(own.map((r) => r[figure]).filter((v): v is number => v !== null));
  const theirs = median([...control.values()].map((r) => r[figure]).filter((v): v is number => v !== null));
  return {
    ratioOfMedians: mine !== null && theirs !== null && theirs > 0 ? mine / theirs : null,
    medianOfTaskRatios: median(pairs.map(ratioOf(figure))),
    pairs: pairs.length,
  };
}

/** The request-wide speedup over the pairs that prefilled alike, both medians included; the others counted. */
function requestSpeedup(own: readonly RequestRecord[], control: ReadonlyMap<string, RequestRecord>): RequestSpeedup {
  const figure = 'requestTokensPerSecond';
  const all = paired(own, control, figure);
  const alike = all.filter(([r, base]) => prefillsAlike(r, base));
  const mine = median(alike.map(([r]) => r[figure]!));
  const theirs = median(alike.map(([, base]) => base[figure]!));
  return {
    ratioOfMedians: mine !== null && theirs !== null && theirs > 0 ? mine / theirs : null,
    medianOfTaskRatios: median(alike.map(ratioOf(figure))),
    pairs: alike.length,
    prefilledUnlike: all.length - alike.length,
  };
}

/** Accepted at position i / verify rounds that proposed at least i+1 tokens, over all rounds given. */
export function pooledAcceptancePerPosition(requests: readonly RequestRecord[]): number[] {
  const reached: number[] = [];
  const accepted: number[] = [];
  for (const r of requests) {
    for (const round of r.samples) {
      for (let i = 0; i < round.proposed; i++) {
        reached[i] = (reached[i] ?? 0) + 1;
        if (round.accepted > i) accepted[i] = (accepted[i] ?? 0) + 1;
      }
    }
  }
  return reached.map((n, i) => (accepted[i] ?? 0) / n);
}

function acceptanceRate(requests: readonly RequestRecord[]): number | null {
  const proposed = requests.reduce((n, r) => n + r.proposed, 0);
  return proposed > 0 ? requests.reduce((n, r) => n + r.accepted, 0) / proposed : null;
}

function categories(own: readonly RequestRecord[], control: ReadonlyMap<string, RequestRecord>, isControl: boolean): CategorySummary[] {
  const names = [...new Set(own.map((r) => r.category))];
  return names.map((category) => {
    const inCategory = own.filter((r) => r.category === category);
    return {
      category,
      requests: inCategory.length,
      steadyDecodeTokensPerSecond: spread(inCategory.map((r) => r.steadyDecodeTokensPerSecond)),
      speedup: isControl ? null : speedup(inCategory, control, 'steadyDecodeTokensPerSecond').medianOfTaskRatios,
      acceptanceRate: acceptanceRate(inCategory),
    };
  });
}

/** One summary per profile, in the order given (the control's first when it ran). */
export function summarizeProfiles(profiles: readonly ProfileRun[], requests: readonly RequestRecord[]): ProfileSummary[] {
  const control = new Map<string, RequestRecord>();
  for (const r of requests) if (r.profile === CONTROL) control.set(pairKey(r), r);
  return profiles.map((profile) => {
    const own = requests.filter((r) => r.profile === profile.name);
    const isControl = profile.name === CONTROL;
    return {
      ...profile,
      requests: own.length,
      generatedTokens: own.reduce((n, r) => n + r.generatedTokens, 0),
      ttftMs: spread(own.map((r) => r.ttftMs)),
      prefillTokensPerSecond: spread(own.map((r) => r.prefillTokensPerSecond)),
      steadyDecodeTokensPerSecond: spread(own.map((r) => r.steadyDecodeTokensPerSecond)),
      requestTokensPerSecond: spread(own.map((r) => r.requestTokensPerSecond)),
      acceptanceRate: spread(own.map((r) => r.acceptanceRate)),
      meanAcceptanceLength: spread(own.map((r) => r.meanAcceptanceLength)),
      acceptancePerPosition: pooledAcceptancePerPosition(own),
      proposed: own.reduce((n, r) => n + r.proposed, 0),
      accepted: own.reduce((n, r) => n + r.accepted, 0),
      replays: own.reduce((n, r) => n + r.replays, 0),
      clampedRequests: own.filter((r) => r.clampedTo !== null).length,
      speedup: isControl
        ? null
        : { steadyDecode: speedup(own, control, 'steadyDecodeTokensPerSecond'), request: requestSpeedup(own, control) },
      digestMatches: isControl ? null : own.filter((r) => r.matchesControl === true).length,
      categories: categories(own, control, isControl),
      ...(profile.fallbacks
        ? {
            members: memberStats(
              [profile.strategy, ...profile.fallbacks],
              own.flatMap((r) => r.samples),
            ),
          }
        : {}),
      ...sourcesOf(own),
    };
  });
}

/** `sources` of a profile whose drafter told where its drafts came from (`suffix`); nothing otherwise. */
function sourcesOf(own: readonly RequestRecord[]): { sources?: SourceStats[] } {
  const sources = sourceStats(own.flatMap((r) => r.samples));
  return sources.length > 0 ? { sources } : {};
}
