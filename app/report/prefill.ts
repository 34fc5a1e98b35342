// The request-wide speedup as the report's tables print it: the JSON's speedup.request, which
// counts a (task, repeat) pair only where its request and the control's prefilled alike
// (app/contract/report/prefill.ts), with how many pairs it left out.
import type { ProfileSummary, Report } from '../contract/report/schema.js';
import { ratio } from './format.js';

export { PREFILL_BAND, prefillsAlike } from '../contract/report/prefill.js';

export interface RequestSpeedup {
  /** median over the alike pairs of profile / control request-wide tok/s (null when none) */
  medianOfTaskRatios: number | null;
  /** pairs whose prefills were alike, and all pairs with a control */
  alike: number;
  pairs: number;
}

function counts(p: ProfileSummary | undefined): RequestSpeedup | null {
  const s = p?.speedup?.request;
  if (!s) return null;
  return { medianOfTaskRatios: s.medianOfTaskRatios, alike: s.pairs, pairs: s.pairs + (s.prefilledUnlike ?? 0) };
}

/** The profile's request speedup from the report's JSON (null for the control). */
export function requestSpeedup(report: Report, profile: string): RequestSpeedup | null {
  return counts(report.profiles.find((p) => p.name === profile));
}

/** The profiles table's cell: "1.15x", "1.15x (3 of 4 pairs; 1 prefilled unlike)", "- (prefill differed in 1 of 1 pairs)". */
export function requestSpeedupCell(p: ProfileSummary): string {
  const s = counts(p);
  if (!s) return 'control';
  if (s.pairs === 0) return '-';
  if (s.alike === 0) return `- (prefill differed in ${s.pairs} of ${s.pairs} pairs)`;
  if (s.alike === s.pairs) return ratio(s.medianOfTaskRatios);
  return `${ratio(s.medianOfTaskRatios)} (${s.alike} of ${s.pairs} pairs; ${s.pairs - s.alike} prefilled unlike)`;
}
