// The downloads concern of PowerApi (app/contract/api/downloads.ts): runs model downloads into one
// folder, reports them as events, and adds each finished file to the library.
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { ApiOf } from '../contract/api/describe.js';
import { FileName, type DownloadEntry, type downloads } from '../contract/api/downloads.js';
import { PowerError } from '../contract/api/errors.js';
import { RECOMMENDED_PAIRS } from '../contract/recommended-models.js';
import { DownloadError, downloadModel, partialPath } from './download.js';

export type DownloadsApi = ApiOf<{ downloads: typeof downloads }>['downloads'];

export interface DownloadManagerOptions {
  /** the library folder downloads land in */
  dir: string;
  /** adds a finished file to the library; returns its entry id */
  addToLibrary: (path: string) => Promise<string>;
  /** progress events at most this often (ms) */
  progressIntervalMs?: number;
}

interface Running {
  entry: DownloadEntry;
  abort: AbortController;
  done: Promise<void>;
}

function fileNameOf(url: string): string {
  const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  const checked = FileName.safeParse(last);
  if (!checked.success) throw new PowerError('bad-input', `cannot name the file after the URL ('${last}'): give fileName, ending in .gguf`);
  return checked.data;
}

export class DownloadManager {
  private readonly entries = new Map<string, Running>();
  private readonly listeners = new Set<(entry: DownloadEntry) => void>();

  constructor(private readonly options: DownloadManagerOptions) {}

  /** The concern's implementation. */
  readonly api: DownloadsApi = {
    recommended: async () => ({ pairs: [...RECOMMENDED_PAIRS] }),
    start: async (input) => this.start(input),
    list: async () => ({ downloads: [...this.entries.values()].map((r) => ({ ...r.entry })) }),
    cancel: async ({ downloadId }) => {
      const running = this.entries.get(downloadId);
      if (!running) throw new PowerError('not-found', `no download ${downloadId}`);
      if (running.entry.state === 'running') {
        running.abort.abort();
        await running.done;
        // a cancel gives the download up (close() keeps the partial to resume)
        await rm(partialPath(running.entry.path), { force: true });
        if (running.entry.error) running.entry.error.resumable = false;
      }
      return { ...running.entry };
    },
    onChanged: (listener) => {
      this.listeners.add(listener);
      return () => this.listeners.delete(listener);
    },
  };

  private emit(entry: DownloadEntry): void {
    const copy = { ...entry };
    for (const listener of [...this.listeners]) listener(copy);
  }

  private async start(input: { url: string; fileName?: string; sha256?: string; sizeBytes?: number }): Promise<DownloadEntry> {
    const fileName = input.fileName ?? fileNameOf(input.url);
    const path = join(this.options.dir, fileName);
    for (const r of this.entries.values()) {
      if (r.entry.path === path && r.entry.state === 'running') throw new PowerError('busy', `${fileName} is already downloading`);
    }
    await mkdir(this.options.dir, { recursive: true });
    const entry: DownloadEntry = {
      id: randomUUID(),
      url: input.url,
      fileName,
      path,
      state: 'running',
      receivedBytes: 0,
      totalBytes: input.sizeBytes ?? null,
      resumedFromBytes: 0,
      error: null,
      sha256: null,
      modelId: null,
      startedAt: new Date().toISOString(),
    };
    const abort = new AbortController();
    const done = this.run(entry, input, abort.signal);
    this.entries.set(entry.id, { entry, abort, done });
    this.emit(entry);
    return { ...entry };
  }

  private async run(entry: DownloadEntry, input: { url: string; sha256?: string; sizeBytes?: number }, signal: AbortSignal): Promise<void> {
    try {
      const result = await downloadModel({
        url: input.url,
        dest: entry.path,
        ...(input.sha256 ? { sha256: input.sha256 } : {}),
        ...(input.sizeBytes ? { sizeBytes: input.sizeBytes } : {}),
        signal,
        keepPartialOnCancel: true,
        progressIntervalMs: this.options.progressIntervalMs ?? 250,
        onProgress: (p) => {
          entry.receivedBytes = p.receivedBytes;
          entry.totalBytes = p.totalBytes;
          entry.resumedFromBytes = p.resumedFromBytes;
          this.emit(entry);
        },
      });
      entry.receivedBytes = result.sizeBytes;
      entry.totalBytes = result.sizeBytes;
      entry.sha256 = result.sha256;
      try {
        entry.modelId = await this.options.addToLibrary(result.path);
        entry.state = 'done';
      } catch (error) {
        entry.state = 'failed';
        entry.error = {
          code: 'library',
          message: `downloaded to ${result.path}, but the library refused it: ${(error as Error).message}`,
          resumable: false,
        };
      }
    } catch (error) {
      const e = error instanceof DownloadError ? error : new DownloadError('io', (error as Error).message);
      entry.state = e.code === 'cancelled' ? 'cancelled' : 'failed';
      entry.error = { code: e.code, message: e.message, resumable: e.resumable };
    }
    this.emit(entry);
  }

  /** Stops every running download (partials are kept: the next start resumes them). */
  async close(): Promise<void> {
    const running = [...this.entries.values()].filter((r) => r.entry.state === 'running');
    for (const r of running) r.abort.abort();
    await Promise.all(running.map((r) => r.done));
  }
}
