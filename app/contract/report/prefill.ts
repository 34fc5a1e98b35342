// When two requests of a pair prefilled alike. A request-wide rate includes the prefill, which
// speculation does not speed up, so a request-wide ratio is a speculation figure only where both
// sides evaluated and kept the same prompt tokens at about the same prefill rate: otherwise a
// cold control session against a warm speculative one (a chat's A/B) reads as a speedup several
// times the decode one. The JSON's speedup.request and the report's tables both count pairs by
// this rule.
import type { RequestRecord } from './schema.js';

/**
 * How far apart (the larger over the smaller) two prefill rates, or two times to first token, may
 * be and still count as alike: run-to-run spread on a busy machine stays inside it, a cold session
 * against a warm one (about 4x in issue 55) does not. The app's A/B uses the same band.
 */
export const PREFILL_BAND = 1.25;

function within(a: number, b: number): boolean {
  return a > 0 && b > 0 && Math.max(a, b) / Math.min(a, b) <= PREFILL_BAND;
}

/** What the rule reads of a request. */
export type PrefillFigures = Pick<RequestRecord, 'promptTokens' | 'reusedPromptTokens' | 'ttftMs' | 'prefillTokensPerSecond'>;

/**
 * Whether two requests of the same task prefilled alike, and where not, what differs: the same
 * prompt tokens evaluated and kept from the previous request, at prefill rates within
 * PREFILL_BAND (nothing evaluated on either side is alike). A request that does not record its
 * kept tokens (a report written before they were) falls back on its time to first token, which a
 * side that evaluated more, or more slowly, reached later: times to first token and prefill rates
 * within PREFILL_BAND. The report, the JSON export and the app's A/B all read this one rule.
 */
export type PrefillComparison =
  | { alike: true }
  /** each side's prompt tokens evaluated and kept, `a` first */
  | { alike: false; differ: 'tokens'; evaluated: [number, number]; kept: [number, number] }
  /** the same tokens evaluated (`evaluated`, each side), at these prefill rates */
  | { alike: false; differ: 'rates'; rates: [number, number]; evaluated: number }
  | { alike: false; differ: 'rates-unknown' }
  /** the kept tokens unrecorded, and the times to first token or the prefill rates outside the band (or unknown) */
  | { alike: false; differ: 'unrecorded' };

export function comparePrefills(a: PrefillFigures, b: PrefillFigures): PrefillComparison {
  const [ar, br] = [a.reusedPromptTokens, b.reusedPromptTokens];
  const [ap, bp] = [a.prefillTokensPerSecond, b.prefillTokensPerSecond];
  if (ar !== undefined && ar !== null && br !== undefined && br !== null) {
    if (a.promptTokens !== b.promptTokens || ar !== br) {
      return { alike: false, differ: 'tokens', evaluated: [a.promptTokens - ar, b.promptTokens - br], kept: [ar, br] };
    }
    const evaluated = a.promptTokens - ar;
    if (evaluated === 0) return { alike: true };
    if (ap === null || bp === null || !(ap > 0) || !(bp > 0)) return { alike: false, differ: 'rates-unknown' };
    return within(ap, bp) ? { alike: true } : { alike: false, differ: 'rates', rates: [ap, bp], evaluated };
  }
  const unrecorded = { alike: false, differ: 'unrecorded' } as const;
  if (a.ttftMs === null || b.ttftMs === null || !within(a.ttftMs, b.ttftMs)) return unrecorded;
  // neither measured a prefill rate: both kept the whole prompt, nothing was evaluated
  if (ap === null && bp === null) return { alike: true };
  return ap !== null && bp !== null && within(ap, bp) ? { alike: true } : unrecorded;
}

/** comparePrefills' verdict alone. */
export function prefillsAlike(a: PrefillFigures, b: PrefillFigures): boolean {
  return comparePrefills(a, b).alike;
}
