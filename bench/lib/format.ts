// Formatting of the bench tables: the report's (app/report/format.ts), and a speed ratio as the
// RESULTS files write it.
export { fixed, percent } from '../../app/report/format.js';

/** A ratio with two decimals and a times sign ("1.32×"), or '-' when there is none. */
export function times(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${value.toFixed(2)}×`;
}
