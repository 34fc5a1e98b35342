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
 * Whether two requests of the same task prefilled alike: the same prompt tokens evaluated and
 * kept from the previous request, at prefill rates within PREFILL_BAND (nothing evaluated on
 * either side is alike). A request that does not record its kept tokens (a report written before
 * they were) falls back on its time to first token, which a side that evaluated more, or more
 * slowly, reached later: times to first token and prefill rates within PREFILL_BAND.
 */
export function prefillsAlike(a: PrefillFigures, b: PrefillFigures): boolean {
  const [ar, br] = [a.reusedPromptTokens, b.reusedPromptTokens];
  const [ap, bp] = [a.prefillTokensPerSecond, b.prefillTokensPerSecond];
  if (ar !== undefined && ar !== null && br !== undefined && br !== null) {
    if (a.promptTokens !== b.promptTokens || ar !== br) return false;
    if (a.promptTokens - ar === 0) return true;
    return ap !== null && bp !== null && within(ap, bp);
  }
  if (a.ttftMs === null || b.ttftMs === null || !within(a.ttftMs, b.ttftMs)) return false;
  // neither measured a prefill rate: both kept the whole prompt, nothing was evaluated
  if (ap === null && bp === null) return true;
  return ap !== null && bp !== null && within(ap, bp);
}
