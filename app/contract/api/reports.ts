// reports: a chat's performance report (the bench report's schema, app/contract/report/chat.ts) in the
// formats `power bench` writes. Every format goes through the service: the saved chat is the one
// source, the environment (machine, model files with their SHA-256) is known only there, and the
// PDF needs a print engine (a headless Chromium) that a browser page cannot drive.
import { z } from 'zod';

import { concern } from './describe.js';
import { Id } from './common.js';

/** The text formats of a report, each a pure function of the checked JSON (app/report/render.ts). */
export const TEXT_FORMATS = ['json', 'csv', 'md', 'html'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** Every format a report (a bench run's or a chat's) is written as: the text ones and the PDF. */
export const REPORT_FORMATS = [...TEXT_FORMATS, 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const ChatExport = z.object({
  /** power-chat-<title>-<date>.<format> */
  fileName: z.string().min(1),
  mimeType: z.string(),
  /** the file's bytes */
  base64: z.string(),
});
export type ChatExport = z.infer<typeof ChatExport>;

export const reports = concern({
  methods: {
    /**
     * the chat's report as a file; `bad-input` when the chat has no completed reply, `unsupported`
     * for pdf when no print engine is installed (the message says what to install)
     */
    exportChat: { input: z.object({ chatId: Id, format: z.enum(REPORT_FORMATS) }), output: ChatExport },
  },
  events: {},
});
