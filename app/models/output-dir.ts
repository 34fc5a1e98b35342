// Makes sure an output folder exists and is a folder, one level at a time. Node's recursive
// mkdir can spin for ever on special file systems (`--out /proc/x` hung), and its errors name
// a syscall rather than the problem; this walks up to the nearest existing ancestor, checks it
// is a directory, and creates the rest one by one, failing with one readable line.
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { describeFsError } from './check-file.js';

export class OutputDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputDirError';
  }
}

export async function prepareOutputDir(dir: string): Promise<string> {
  const target = resolve(dir);
  const missing: string[] = [];
  let at = target;
  for (;;) {
    try {
      const st = await stat(at);
      if (!st.isDirectory()) {
        throw new OutputDirError(at === target ? `${dir} is not a directory` : `${dir}: ${at} is not a directory`);
      }
      break;
    } catch (error) {
      if (error instanceof OutputDirError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || dirname(at) === at) throw new OutputDirError(`cannot use ${dir}: ${describeFsError(error)}`);
      missing.unshift(at);
      at = dirname(at);
    }
  }
  for (const path of missing) {
    try {
      await mkdir(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new OutputDirError(`cannot create ${path}: ${describeFsError(error)}`);
      }
    }
  }
  return target;
}
