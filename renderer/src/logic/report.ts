// The Report tab: the open chat's replies (those Regenerate and the A/B replaced included) and
// the export of its report. The report itself is built by the service from the saved chat
// (reports.exportChat): it alone knows the machine and the model files, and prints the PDF.
import { chatReplies, leftOut, type ChatReplyRef } from '../../../app/contract/report/chat.js';
import type { Chat } from '../api-types.js';

export const EXPORT_FORMATS = [
  { format: 'json', label: 'JSON' },
  { format: 'csv', label: 'CSV' },
  { format: 'md', label: 'Markdown' },
  { format: 'html', label: 'HTML' },
  { format: 'pdf', label: 'PDF' },
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number]['format'];

/** The chat's replies in conversation order, a turn's replaced ones before the one shown. */
export function replyRows(chat: Chat | null): ChatReplyRef[] {
  return chat ? chatReplies(chat) : [];
}

/** Replies the report can hold (completed or stopped, with their figures). */
export function reportable(rows: readonly ChatReplyRef[]): number {
  return rows.filter((r) => leftOut(r.message) === null).length;
}

/** The bytes of a base64 payload (the export's file). */
export function base64Bytes(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
