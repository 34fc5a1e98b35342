// The bench scripts' statistics, over the report's own order statistics (app/contract/report/stats.ts):
// medians of measurements that may be missing, and medians of ratios taken pair by pair.
import { median } from '../../app/contract/report/stats.js';

/** The median of the finite numbers among `values` (null, undefined and NaN dropped); null when none is left. */
export function medianOf(values: readonly (number | null | undefined)[]): number | null {
  return median(values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)));
}

/**
 * The median of a / b over the pairs where both are there and non-zero (a ratio per prompt or per
 * repetition, runs close together in time, so the machine's drift cancels out); null when no pair is.
 */
export function medianRatio(pairs: Iterable<readonly [number | null | undefined, number | null | undefined]>): number | null {
  const ratios: number[] = [];
  for (const [a, b] of pairs) if (a && b) ratios.push(a / b);
  return medianOf(ratios);
}
