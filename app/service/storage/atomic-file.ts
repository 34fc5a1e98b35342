// Crash-safe file replacement: write a temporary file next to the target, fsync it, rename it
// over the target, fsync the folder. A kill at any moment leaves either the previous complete
// file or the new complete file, never a torn one (rename is atomic within a file system).
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

async function fsyncDir(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; its rename is durable through the journal
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * A write that found no room (ENOSPC, a quota, a file-size limit). The file it was to replace is
 * untouched, which the message says, since a user seeing "disk full" worries about exactly that.
 */
export class DiskFullError extends Error {
  readonly code: string;
  constructor(
    readonly path: string,
    cause: NodeJS.ErrnoException,
  ) {
    const why =
      cause.code === 'EDQUOT'
        ? 'the disk quota is used up'
        : cause.code === 'EFBIG'
          ? 'the file is over the size limit'
          : 'the disk is full';
    const hint = cause.code === 'EFBIG' ? '' : '. Free some space and try again';
    super(`${why}: ${path} could not be saved (${cause.code}); its previous version is kept${hint}`, { cause });
    this.name = 'DiskFullError';
    this.code = cause.code!;
  }
}

export function isDiskFull(error: unknown): error is NodeJS.ErrnoException {
  return FULL.has((error as NodeJS.ErrnoException | null)?.code ?? '');
}

/**
 * Windows refuses to replace a file that another program holds open without sharing it, and virus
 * scanners, search indexers and sync clients (OneDrive) open a freshly written file for a moment:
 * there the rename is tried again for a while before the error counts, as graceful-fs does.
 */
const WINDOWS_BUSY = new Set(['EPERM', 'EACCES', 'EBUSY']);
const WINDOWS_RENAME_RETRY_MS = 10_000;

async function renameOver(temp: string, path: string): Promise<void> {
  const since = Date.now();
  for (let wait = 10; ; wait = Math.min(wait * 2, 500)) {
    try {
      return await rename(temp, path);
    } catch (error) {
      const busy = process.platform === 'win32' && WINDOWS_BUSY.has((error as NodeJS.ErrnoException).code ?? '');
      if (!busy || Date.now() - since > WINDOWS_RENAME_RETRY_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Replaces `path` with what `write` puts into the temporary file it is given (a writer that
 * streams to a path of its own: the GGUF writer). The temporary file is removed on failure;
 * no room on the disk is a DiskFullError.
 */
export async function replaceFileAtomic(path: string, write: (temp: string) => Promise<void>): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await write(temp);
    const handle = await open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameOver(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw isDiskFull(error) ? new DiskFullError(path, error) : error;
  }
  await fsyncDir(dir);
}

/** Replaces `path` with `data`; `mode` 0o600 by default (chats and settings are the user's alone). */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  return replaceFileAtomic(path, async (temp) => {
    const handle = await open(temp, 'w', mode);
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
  });
}

/** Leftover temporary files of writes a kill interrupted (never the live file). */
export function isTempFile(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}
