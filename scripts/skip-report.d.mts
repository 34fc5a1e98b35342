/** What scripts/test.mjs prints after the run from the reporter's file: the skips, then the counts. */
export function skipSummary(fileText: string): string;
declare const skipReport: (source: AsyncIterable<unknown>) => AsyncGenerator<string>;
export default skipReport;
