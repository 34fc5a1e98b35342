// The session report: every reply completed while this window was open, with its figures,
// exportable as JSON (the report formats of the benchmark issue replace this when they land).
import type { AssistantMessage, ReplyStats } from '../api-types.js';
import type { AbResult } from './ab.js';

export type StopReasonName = NonNullable<AssistantMessage['stopReason']>;

export interface ReportEntry {
  at: string;
  chatId: string;
  chatTitle: string;
  messageId: string;
  model: string;
  draft: string | null;
  profile: string | null;
  strategy: string;
  k: number | null;
  s: number | null;
  tokens: number;
  stopReason: StopReasonName | null;
  digest: string | null;
  stats: ReplyStats | null;
}

export const REPORT_FORMAT = 'power-session-report';

export function reportJson(entries: readonly ReportEntry[], abRuns: readonly AbResult[], now = new Date()): string {
  return `${JSON.stringify({ format: REPORT_FORMAT, version: 1, createdAt: now.toISOString(), requests: entries, ab: abRuns }, null, 2)}\n`;
}

export function reportFileName(now = new Date()): string {
  return `power-report-${now.toISOString().replace(/[:.]/g, '-')}.json`;
}
