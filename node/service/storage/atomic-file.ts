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

/**
 * Replaces `path` with what `write` puts into the temporary file it is given (a writer that
 * streams to a path of its own: the GGUF writer). The temporary file is removed on failure.
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
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
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
