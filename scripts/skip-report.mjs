// A reporter for node's test runner (scripts/test.mjs runs it beside the spec reporter, into a
// file of its own): every skipped suite and test with its file and reason, and the run's counts.
// The spec reporter shows a skip's reason only where it happens, among thousands of lines, and its
// summary does not count skipped suites; a suite skipped for a missing prerequisite
// (test/fixtures/prerequisite.ts) must not pass unnoticed. scripts/test.mjs prints the list after
// the run, then the counts as the run's last line.
import { relative } from 'node:path';

export default async function* skipReport(source) {
  const skipped = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, skip, file, details } = event.data;
    if (skip !== undefined) {
      skipped.push(`  ${file ? `${relative(process.cwd(), file)}: ` : ''}${name}: ${skip === true ? '(no reason given)' : skip}`);
    }
    // the counts are of tests, as the spec reporter's are (a suite is not one; a skipped suite is
    // listed above)
    if (details?.type === 'suite') continue;
    if (skip !== undefined) counts.skipped++;
    else if (event.type === 'test:pass') counts.passed++;
    else counts.failed++;
  }
  yield `${JSON.stringify({ skipped, counts })}\n`;
}

/** What scripts/test.mjs prints after the run from the reporter's file: the skips, then the counts. */
export function skipSummary(fileText) {
  const { skipped, counts } = JSON.parse(fileText);
  const list = skipped.length > 0 ? `\nskipped (${skipped.length}), each with its reason:\n${skipped.join('\n')}\n` : '';
  return `${list}\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`;
}
