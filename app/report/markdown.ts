// The Markdown rendering: GitHub-flavoured tables to paste into an issue.
import type { Report } from '../contract/report/schema.js';
import { allTables, type Table } from './tables.js';
import { comparisonSentence, reportTitle } from './wording.js';

function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function markdownTable(t: Table): string {
  const keyValue = t.headers.every((h) => h === '');
  const headers = keyValue ? ['', ''] : t.headers;
  const lines = [`| ${headers.map(cell).join(' | ')} |`, `| ${headers.map(() => '---').join(' | ')} |`];
  for (const row of t.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

export function reportToMarkdown(report: Report): string {
  const parts = [`# ${reportTitle(report)}`, ''];
  for (const t of allTables(report)) {
    if (t.rows.length === 0) continue;
    parts.push(`## ${t.title}`, '', markdownTable(t), '');
  }
  parts.push(
    `Steady decode: tokens emitted after the first ${report.run.warmupRounds} rounds of a request over the time they took. ` +
      `${comparisonSentence(report)} ` +
      `Report schema version ${report.schemaVersion}; the JSON holds every figure and the per-round samples.`,
    '',
  );
  return parts.join('\n');
}
