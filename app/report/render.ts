// The text formats of a report, each a pure function of the checked JSON (the PDF is printed
// from the HTML by main/).
import { reportToCsv } from './csv.js';
import { reportToHtml } from './html.js';
import { reportToMarkdown } from './markdown.js';
import type { Report } from './schema.js';

export const TEXT_FORMATS = ['json', 'csv', 'md', 'html'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

export function renderReport(report: Report, format: TextFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(report, null, 2) + '\n';
    case 'csv':
      return reportToCsv(report);
    case 'md':
      return reportToMarkdown(report);
    case 'html':
      return reportToHtml(report);
  }
}
