// The request-wide speedup as the report's tables print it: a request-wide rate includes the
// prefill, which speculation does not speed up, so a (task, repeat) pair counts only where its
// request and the control's prefilled alike. Otherwise a cold control session against a warm
// speculative one (a chat's A/B) reads as a speedup several times the decode one. A record has no
// counts of reused prompt tokens, so the time to first token stands for them: one side that kept
// more of the prompt, or prefilled more slowly, reached its first token later.
import type { ProfileSummary, Report, RequestRecord } from '../contract/report/schema.js';
import { CONTROL } from '../contract/report/aggregate.js';
import { median } from '../contract/report/stats.js';
import { ratio } from './format.js';

/**
 * How far apart (the larger over the smaller) two times to first token, or two prefill rates,
 * may be and still count as alike: the app's A/B uses the same band for its prefill rates.
 */
export const PREFILL_BAND = 1.25;

function within(a: number, b: number): boolean {
  return a > 0 && b > 0 && Math.max(a, b) / Math.min(a, b) <= PREFILL_BAND;
}

/** Whether two requests of the same task prefilled alike: times to first token and prefill rates within PREFILL_BAND. */
export function prefillsAlike(a: RequestRecord, b: RequestRecord): boolean {
  if (a.ttftMs === null || b.ttftMs === null || !within(a.ttftMs, b.ttftMs)) return false;
  const [ap, bp] = [a.prefillTokensPerSecond, b.prefillTokensPerSecond];
  // neither measured a prefill rate: both kept the whole prompt, nothing was evaluated
  if (ap === null && bp === null) return true;
  return ap !== null && bp !== null && within(ap, bp);
}

export interface RequestSpeedup {
  /** median over the alike pairs of profile / control request-wide tok/s (null when none) */
  medianOfTaskRatios: number | null;
  /** pairs whose prefills were alike, and all pairs with a control */
  alike: number;
  pairs: number;
}

const pairKey = (r: Pick<RequestRecord, 'task' | 'repeat'>) => `${r.repeat}\u0000${r.task}`;

export function requestSpeedup(report: Report, profile: string): RequestSpeedup {
  const control = new Map<string, RequestRecord>();
  for (const r of report.requests) if (r.profile === CONTROL) control.set(pairKey(r), r);
  const ratios: number[] = [];
  let pairs = 0;
  for (const r of report.requests) {
    if (r.profile !== profile) continue;
    const base = control.get(pairKey(r));
    if (!base || r.requestTokensPerSecond === null || base.requestTokensPerSecond === null || !(base.requestTokensPerSecond > 0)) continue;
    pairs++;
    if (prefillsAlike(r, base)) ratios.push(r.requestTokensPerSecond / base.requestTokensPerSecond);
  }
  return { medianOfTaskRatios: median(ratios), alike: ratios.length, pairs };
}

/** The profiles table's cell: "1.15x", "1.15x (3 of 4 pairs; 1 prefilled unlike)", "- (prefill differed in 1 of 1 pairs)". */
export function requestSpeedupCell(report: Report, p: ProfileSummary): string {
  if (!p.speedup) return 'control';
  const s = requestSpeedup(report, p.name);
  if (s.pairs === 0) return '-';
  if (s.alike === 0) return `- (prefill differed in ${s.pairs} of ${s.pairs} pairs)`;
  if (s.alike === s.pairs) return ratio(s.medianOfTaskRatios);
  return `${ratio(s.medianOfTaskRatios)} (${s.alike} of ${s.pairs} pairs; ${s.pairs - s.alike} prefilled unlike)`;
}
