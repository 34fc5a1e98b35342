// The text formats of a report, each a pure function of the checked JSON (the PDF is printed
// from the HTML by main/).
import { reportToCsv } from './csv.js';
import { reportToHtml } from './html.js';
import { reportToMarkdown } from './markdown.js';
import type { Report } from './schema.js';

export const TEXT_FORMATS = ['json', 'csv', 'md', 'html'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** Every format a report (a bench run's or a chat's) is written as: the text ones and the PDF. */
export const REPORT_FORMATS = [...TEXT_FORMATS, 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

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
