// A reporter for node's test runner (scripts/test.mjs runs it beside the spec reporter): at the
// end, every skipped suite and test with its file and reason, in one list. The spec reporter
// shows a skip's reason only where it happens, among thousands of lines, and its summary does not
// count skipped suites; a suite skipped for a missing prerequisite (test/fixtures/prerequisite.ts)
// must not pass unnoticed.
import { relative } from 'node:path';

export default async function* skipReport(source) {
  const skipped = [];
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.skip !== undefined) {
      const { name, skip, file } = event.data;
      skipped.push(`  ${file ? `${relative(process.cwd(), file)}: ` : ''}${name}: ${skip === true ? '(no reason given)' : skip}`);
    }
  }
  if (skipped.length > 0) yield `\nskipped (${skipped.length}), each with its reason:\n${skipped.join('\n')}\n`;
}
