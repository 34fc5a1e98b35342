// Versioned JSON documents on disk: { "format": "power.<kind>", "version": N, "data": ... }.
// Reading runs the migrations from the stored version up to the current one (the hook for
// future format changes) and validates the result; a file from a newer Power is refused
// rather than overwritten.
import { readFile } from 'node:fs/promises';

import type { z } from 'zod';

import { writeFileAtomic } from './atomic-file.js';

export interface DocumentKind<T extends z.ZodType> {
  /** "chat", "library", "settings" */
  format: string;
  version: number;
  schema: T;
  /** migrations[v] turns version v's data into version v + 1's */
  migrations?: Record<number, (data: unknown) => unknown>;
}

export class DocumentError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'DocumentError';
  }
}

export function encodeDocument<T extends z.ZodType>(kind: DocumentKind<T>, data: z.output<T>): string {
  return JSON.stringify({ format: `power.${kind.format}`, version: kind.version, data }, null, 1) + '\n';
}

export function decodeDocument<T extends z.ZodType>(kind: DocumentKind<T>, text: string, path: string): z.output<T> {
  let raw: { format?: unknown; version?: unknown; data?: unknown };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch (error) {
    throw new DocumentError(path, `not JSON (${(error as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || raw.format !== `power.${kind.format}`) {
    throw new DocumentError(path, `not a power.${kind.format} document`);
  }
  let version = raw.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) throw new DocumentError(path, 'no valid version');
  if (version > kind.version) {
    throw new DocumentError(path, `written by a newer Power (format version ${version}, this one reads up to ${kind.version})`);
  }
  let data = raw.data;
  for (; version < kind.version; version++) {
    const step = kind.migrations?.[version];
    if (!step) throw new DocumentError(path, `no migration from version ${version}`);
    data = step(data);
  }
  const checked = kind.schema.safeParse(data);
  if (!checked.success) throw new DocumentError(path, `invalid content: ${checked.error.issues[0]?.message ?? 'unknown'}`);
  return checked.data;
}

/** Reads a document; null when the file does not exist. */
export async function readDocument<T extends z.ZodType>(kind: DocumentKind<T>, path: string): Promise<z.output<T> | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return decodeDocument(kind, text, path);
}

export function writeDocument<T extends z.ZodType>(kind: DocumentKind<T>, path: string, data: z.output<T>): Promise<void> {
  return writeFileAtomic(path, encodeDocument(kind, data));
}

/**
 * Serialises the writes of one file: a save requested while one is running runs after it,
 * with the latest data, and concurrent requests coalesce into one write.
 */
export class SaveQueue {
  private running: Promise<void> | null = null;
  private pending: (() => Promise<void>) | null = null;
  private waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  save(write: () => Promise<void>): Promise<void> {
    this.pending = write;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.running) this.running = this.drain();
    return done;
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      const write = this.pending;
      const waiters = this.waiters;
      this.pending = null;
      this.waiters = [];
      try {
        await write();
        for (const w of waiters) w.resolve();
      } catch (error) {
        for (const w of waiters) w.reject(error as Error);
      }
    }
    this.running = null;
  }
}
