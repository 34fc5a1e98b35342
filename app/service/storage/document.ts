// Versioned JSON documents on disk: { "format": "power.<kind>", "version": N, "data": ... }.
// Reading runs the migrations from the stored version up to the current one (the hook for
// future format changes) and validates the result; a file from a newer Power is refused
// rather than overwritten.
import { readFile, rename } from 'node:fs/promises';
import { basename } from 'node:path';

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

/**
 * Why a document could not be read: 'corrupt' (cut short, not JSON, not this kind of document,
 * content the schema refuses), or 'newer' (written by a later Power: valid, but not for this one
 * to read or to overwrite).
 */
export type DocumentProblem = 'corrupt' | 'newer';

export class DocumentError extends Error {
  constructor(
    readonly path: string,
    message: string,
    readonly problem: DocumentProblem = 'corrupt',
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
    throw new DocumentError(path, `written by a newer Power (format version ${version}, this one reads up to ${kind.version})`, 'newer');
  }
  let data = raw.data;
  for (; version < kind.version; version++) {
    const step = kind.migrations?.[version];
    if (!step) throw new DocumentError(path, `no migration from version ${version}`);
    try {
      data = step(data);
    } catch (error) {
      throw new DocumentError(path, `cannot migrate it from version ${version}: ${(error as Error).message}`);
    }
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

/** `<file>.corrupt-2026-12-01T18-20-59-123Z`: sorts by time, and never ends in .json (never read as a document again). */
export function setAsideName(file: string, at = new Date()): string {
  return `${file}.corrupt-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/**
 * Reads a document that Power must start without: a corrupt one is renamed out of the way
 * (setAsideName, never deleted: it may hold what the user wants back) with a notice, and null
 * comes back as if there were none. A newer Power's file, or one that cannot be read, still
 * throws: it is not this one's to replace.
 */
export async function readDocumentOrSetAside<T extends z.ZodType>(
  kind: DocumentKind<T>,
  path: string,
  log: (line: string) => void,
): Promise<z.output<T> | null> {
  try {
    return await readDocument(kind, path);
  } catch (error) {
    if (!(error instanceof DocumentError) || error.problem !== 'corrupt') throw error;
    const aside = `${path.slice(0, -basename(path).length)}${setAsideName(basename(path))}`;
    await rename(path, aside);
    log(`${path} is corrupt (${error.message.slice(path.length + 2)}); it was set aside as ${aside} and a fresh one is used`);
    return null;
  }
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
