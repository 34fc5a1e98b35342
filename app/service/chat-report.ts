// The chat report's files (reports.exportChat): the report is built from the saved chat by
// app/contract/report/chat.ts; this side adds what only the main process knows (the machine, the model
// files in the library) and prints the PDF from the HTML with a headless Chromium, like
// `power bench` does.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { arch, cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';

import type { AssistantMessage, Chat } from '../contract/api/chats.js';
import { PowerError } from '../contract/api/errors.js';
import type { ChatExport } from '../contract/api/reports.js';
import { chatReportFileName, EXPORT_MIME_TYPES } from '../report/chat-export.js';
import { chatReport, ChatReportError, reportedMessages, type Machine } from '../contract/report/chat.js';
import type { ReportFormat } from '../contract/api/reports.js';
import { renderReport } from '../report/render.js';
import type { ModelFile, Report } from '../contract/report/schema.js';
import { nvidiaDriver, powerVersion } from '../report/environment.js';
import { ChromiumError, findChromium, printPdf } from '../report/pdf.js';
import { readBuildInfo } from '../engine/build-info.js';
import type { ModelLibrary } from './library.js';

function machine(replies: readonly AssistantMessage[]): Machine {
  const cpuList = cpus();
  const ran = replies.map((m) => m.environment).find((r) => r !== undefined);
  const cuda = replies.some(
    (m) => m.environment?.backend.kind === 'cuda' || (m.environment?.gpus.some((g) => g.name.startsWith('CUDA')) ?? false),
  );
  let llamaCppRelease = ran?.backend.llamaCppRelease;
  if (!llamaCppRelease) {
    try {
      llamaCppRelease = readBuildInfo().llamaCppRelease;
    } catch {
      llamaCppRelease = 'unknown';
    }
  }
  return {
    os: { platform: platform(), release: release(), arch: arch() },
    cpu: { model: cpuList[0]?.model.trim() ?? 'unknown', logicalCores: cpuList.length },
    memoryBytes: totalmem(),
    gpuDriver: cuda ? nvidiaDriver() : null,
    llamaCppRelease,
    powerVersion: powerVersion(),
    nodeVersion: process.version,
  };
}

/** The model files of the replies, from the library; a note for each one it cannot describe. */
function modelFiles(replies: readonly AssistantMessage[], library: ModelLibrary): { models: ModelFile[]; notes: string[] } {
  const models: ModelFile[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  const add = (role: ModelFile['role'], id: string, name: string, recordedSha: string | null) => {
    if (seen.has(`${role}:${id}`)) return;
    seen.add(`${role}:${id}`);
    let entry;
    try {
      entry = library.get(id);
    } catch {
      notes.push(
        `the ${role} model ${name} is no longer in the library: its file is not described${recordedSha ? ` (sha256 ${recordedSha} when it ran)` : ''}`,
      );
      return;
    }
    if (!entry.facts) {
      notes.push(`the ${role} model ${name} cannot be read now (${entry.problem ?? 'no header facts'}): its file is not described`);
      return;
    }
    const current = entry.sha256.state === 'done' ? entry.sha256.hex : null;
    if (recordedSha && current && recordedSha !== current)
      notes.push(`${name} changed since its replies ran: the sha256 shown is the one it had then`);
    models.push({
      role,
      name: basename(entry.path),
      sizeBytes: entry.sizeBytes,
      sha256: recordedSha ?? current,
      architecture: entry.facts.architecture,
      quantization: entry.facts.fileType,
      parameters: entry.facts.parameters,
    });
  };
  for (const m of replies) add('target', m.model.id, m.model.name, m.model.sha256);
  for (const m of replies) if (m.draft) add('draft', m.draft.id, m.draft.name, null);
  return { models, notes };
}

/** The chat's report, checked against the schema. */
export function buildChatReport(chat: Chat, library: ModelLibrary): Report {
  const replies = reportedMessages(chat);
  const { models, notes } = modelFiles(replies, library);
  try {
    return chatReport({
      chat,
      machine: machine(replies),
      models,
      notes,
      command: `Power ${powerVersion()}: the report of chat ${chat.id}`,
    });
  } catch (error) {
    if (error instanceof ChatReportError) throw new PowerError('bad-input', error.message);
    throw error;
  }
}

/** HTML printed to PDF by a headless Chromium; `unsupported` (saying what to install) without one. */
async function pdfOf(html: string): Promise<Buffer> {
  let chromium: string;
  try {
    chromium = findChromium(process.env, 'export another format (HTML prints to PDF from any browser)');
  } catch (error) {
    if (error instanceof ChromiumError) throw new PowerError('unsupported', `PDF export: ${error.message}`);
    throw error;
  }
  const dir = await mkdtemp(join(tmpdir(), 'power-chat-report-'));
  try {
    await writeFile(join(dir, 'report.html'), html);
    await printPdf(join(dir, 'report.html'), join(dir, 'report.pdf'), { chromium });
    return await readFile(join(dir, 'report.pdf'));
  } catch (error) {
    if (error instanceof ChromiumError) throw new PowerError('internal', `PDF export: ${error.message}`);
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function exportChatReport(chat: Chat, library: ModelLibrary, format: ReportFormat, now = new Date()): Promise<ChatExport> {
  const report = buildChatReport(chat, library);
  const bytes = format === 'pdf' ? await pdfOf(renderReport(report, 'html')) : Buffer.from(renderReport(report, format), 'utf8');
  return { fileName: chatReportFileName(chat, format, now), mimeType: EXPORT_MIME_TYPES[format], base64: bytes.toString('base64') };
}
