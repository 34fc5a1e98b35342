// The sentences that differ between a bench report and a chat report, in one place so the
// Markdown and the HTML renderings say the same thing (a bench report's wording is unchanged).
import type { Report } from '../contract/report/schema.js';
import { PREFILL_BAND } from './prefill.js';

export function reportTitle(report: Report): string {
  return report.kind === 'power-chat-report' ? 'Power chat report' : 'Power bench report';
}

/** Which pairs the request speedup counts, and why. */
const REQUEST_SPEEDUP =
  `The request speedup counts only the pairs that prefilled alike (the same prompt tokens evaluated and kept from the previous request, at prefill rates within ${PREFILL_BAND}x of each other): ` +
  'a request-wide rate includes the prefill, which speculation does not speed up.';

/** How the speedups and the digest comparison were made. */
export function comparisonSentence(report: Report): string {
  if (report.kind === 'power-chat-report') {
    return (
      'Speedups and "= control" compare each reply with an autoregressive control reply to the same turn with the same sampling ' +
      `(Run A/B in the app re-runs the last prompt on the control); a reply without such a control shows "-" there. ${REQUEST_SPEEDUP}`
    );
  }
  return `Speedups compare each profile with the autoregressive control on the same tasks, run interleaved in the same engine. ${REQUEST_SPEEDUP}`;
}
