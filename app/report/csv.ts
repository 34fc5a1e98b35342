// The CSV rendering: one row per request (RFC 4180: comma-separated, CRLF line ends, fields
// quoted when they hold a comma, a quote or a line break). Numbers keep full precision; a
// missing value is an empty field; acceptance per position is ';'-separated in one field, and so
// is a chain's `members` column (strategy:rounds:proposed:accepted per member, from the samples);
// a chat reply that thought fills the thinking and answer columns after it; last, `sources`: where
// a drafter that tells (`suffix`) took its drafts (source:rounds:drafted:accepted:expected).
import type { ReplyParts } from '../contract/report/parts.js';
import type { ProfileRun, Report, RequestRecord } from '../contract/report/schema.js';
import { memberStats, sourceStats } from '../contract/report/stats.js';

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

/** A thinking reply's figures per part, after `members`: empty for a reply that did not think (and in a bench report). */
export const CSV_PART_COLUMNS = [
  'thinkingTokens',
  'thinkingProposed',
  'thinkingAccepted',
  'thinkingAcceptanceRate',
  'thinkingMs',
  'thinkingTokensPerSecond',
  'answerTokens',
  'answerProposed',
  'answerAccepted',
  'answerAcceptanceRate',
  'answerMs',
  'answerTokensPerSecond',
] as const;

/** The columns after CSV_COLUMNS that are derived from a request rather than copied from it. */
export const CSV_DERIVED_COLUMNS = ['members', ...CSV_PART_COLUMNS, 'sources'] as const;

const PART_FIGURES = ['tokens', 'proposed', 'accepted', 'acceptanceRate', 'ms', 'tokensPerSecond'] as const;

/** The part columns of one request: its reply's parts in a chat report, else empty fields. */
export function partFields(parts: ReplyParts | undefined): (number | null)[] {
  return (['thinking', 'answer'] as const).flatMap((part) => PART_FIGURES.map((f) => (parts ? parts[part][f] : null)));
}

/** A chain's request: "ngram:12:40:30;mtp:3:21:15" (strategy:rounds:proposed:accepted); '' for one strategy. */
export function membersField(r: RequestRecord, profile: ProfileRun | undefined): string {
  if (!profile?.fallbacks) return '';
  return memberStats([profile.strategy, ...profile.fallbacks], r.samples)
    .map((m) => `${m.strategy}:${m.rounds}:${m.proposed}:${m.accepted}`)
    .join(';');
}

/**
 * A request whose drafter told where its drafts came from: "request:20:31:25:24.61;store:3:40:40:39.2"
 * (source:rounds:drafted:accepted:expected, expected summed over the rounds); '' otherwise.
 */
export function sourcesField(r: RequestRecord): string {
  return sourceStats(r.samples)
    .map((s) => `${s.source}:${s.rounds}:${s.drafted}:${s.accepted}:${Number(((s.meanExpected ?? 0) * s.rounds).toFixed(2))}`)
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
  report.requests.forEach((r, i) => {
    lines.push(
      [
        ...CSV_COLUMNS.map((c) => field(r[c])),
        field(membersField(r, profiles.get(r.profile))),
        ...partFields(report.chat?.replies[i]?.parts).map(field),
        field(sourcesField(r)),
      ].join(','),
    );
  });
  return lines.join('\r\n') + '\r\n';
}
