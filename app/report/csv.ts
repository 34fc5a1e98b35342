// The CSV rendering: one row per request (RFC 4180: comma-separated, CRLF line ends, fields
// quoted when they hold a comma, a quote or a line break). Numbers keep full precision; a
// missing value is an empty field; acceptance per position is ';'-separated in one field.
import type { Report, RequestRecord } from '../contract/report/schema.js';

export const CSV_COLUMNS = [
  'task',
  'category',
  'profile',
  'repeat',
  'seed',
  'promptTokens',
  'generatedTokens',
  'stopReason',
  'ttftMs',
  'prefillTokensPerSecond',
  'steadyDecodeTokensPerSecond',
  'requestTokensPerSecond',
  'proposed',
  'accepted',
  'rounds',
  'acceptanceRate',
  'meanAcceptanceLength',
  'acceptancePerPosition',
  'replays',
  'clampedTo',
  'digest',
  'matchesControl',
] as const satisfies readonly (keyof RequestRecord)[];

function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value) ? value.join(';') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function reportToCsv(report: Report): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of report.requests) lines.push(CSV_COLUMNS.map((c) => field(r[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}
