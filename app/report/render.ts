// The text formats of a report, each a pure function of the checked JSON (the PDF is printed
// from the HTML by app/report/pdf.ts). The list of formats is the contract's (app/contract/api/reports.ts).
import { reportToCsv } from './csv.js';
import { reportToHtml } from './html.js';
import { reportToMarkdown } from './markdown.js';
import type { TextFormat } from '../contract/api/reports.js';
import type { Report } from '../contract/report/schema.js';

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
