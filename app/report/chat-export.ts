// The files a chat report is exported as (reports.exportChat): formats, their MIME types and
// a file name safe on every system.
import type { Chat } from '../contract/api/chats.js';
import type { ReportFormat } from '../contract/api/reports.js';

export const EXPORT_MIME_TYPES: Record<ReportFormat, string> = {
  json: 'application/json',
  csv: 'text/csv',
  md: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
};

/** "power-chat-<title>-<yyyy-mm-dd>.<ext>": a file name safe on Windows and Linux. */
export function chatReportFileName(chat: Pick<Chat, 'title'>, format: ReportFormat, at: Date): string {
  const slug =
    chat.title
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40)
      .replace(/-+$/, '') || 'chat';
  return `power-chat-${slug}-${at.toISOString().slice(0, 10)}.${format}`;
}
