// The CSV rendering: one row per request (RFC 4180: comma-separated, CRLF line ends, fields
// quoted when they hold a comma, a quote or a line break). Numbers keep full precision; a
// missing value is an empty field; acceptance per position is ';'-separated in one field, and so
// is a chain's `members` column (strategy:rounds:proposed:accepted per member, from the samples).
import type { ProfileRun, Report, RequestRecord } from '../contract/report/schema.js';
import { memberStats } from '../contract/report/stats.js';

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

/** The columns after CSV_COLUMNS that are derived from a request rather than copied from it. */
export const CSV_DERIVED_COLUMNS = ['members'] as const;

/** A chain's request: "ngram:12:40:30;mtp:3:21:15" (strategy:rounds:proposed:accepted); '' for one strategy. */
export function membersField(r: RequestRecord, profile: ProfileRun | undefined): string {
  if (!profile?.fallbacks) return '';
  return memberStats([profile.strategy, ...profile.fallbacks], r.samples)
    .map((m) => `${m.strategy}:${m.rounds}:${m.proposed}:${m.accepted}`)
    .join(';');
}

function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value) ? value.join(';') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function reportToCsv(report: Report): string {
  const lines = [[...CSV_COLUMNS, ...CSV_DERIVED_COLUMNS].join(',')];
  const profiles = new Map(report.run.profiles.map((p) => [p.name, p]));
  for (const r of report.requests) {
    lines.push([...CSV_COLUMNS.map((c) => field(r[c])), field(membersField(r, profiles.get(r.profile)))].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
