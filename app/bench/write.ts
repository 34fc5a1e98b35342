// Writes a report in the formats asked for; every format is derived from the checked JSON.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPORT_FORMATS, type ReportFormat } from '../contract/api/reports.js';
import { renderReport } from '../report/render.js';
import { Report } from '../contract/report/schema.js';
import { writeFileAtomic } from '../service/storage/atomic-file.js';
import { printPdf } from '../report/pdf.js';

/** Writes report.<format> into `dir` for each format; returns the paths written. */
export async function writeReport(report: Report, dir: string, formats: readonly ReportFormat[], chromium?: string): Promise<string[]> {
  const checked = Report.parse(report);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  const path = (ext: string) => join(dir, `report.${ext}`);
  const text = (format: Exclude<ReportFormat, 'pdf'>) => renderReport(checked, format);
  for (const format of REPORT_FORMATS) {
    if (format === 'pdf' || !formats.includes(format)) continue;
    await writeFileAtomic(path(format), text(format), 0o644);
    written.push(path(format));
  }
  if (formats.includes('pdf')) {
    // printed from the HTML (a temporary copy when html itself was not asked for)
    const scratch = formats.includes('html') ? null : await mkdtemp(join(tmpdir(), 'power-report-'));
    try {
      const html = scratch ? join(scratch, 'report.html') : path('html');
      if (scratch) await writeFile(html, text('html'));
      await printPdf(html, path('pdf'), chromium ? { chromium } : {});
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
    written.push(path('pdf'));
  }
  return written;
}
