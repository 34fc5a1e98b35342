// Checks a model file before it reaches llama.cpp, which aborts or fails obscurely on some bad
// inputs: the file must exist, be readable, be a well-formed, complete GGUF within the reader's
// limits (app/gguf/limits.ts), name an architecture this llama.cpp release knows, and carry
// nothing that loads and then aborts at the first decode (see model-sanity.ts).
import { stat } from 'node:fs/promises';

import { GgufFormatError, readGgufInfo } from '../gguf/reader.js';
import type { GgufInfo } from '../gguf/types.js';
import { modelSanityProblem } from './model-sanity.js';
import { PROJECTOR_ARCHITECTURE } from './projector.js';

/** A model file that cannot be used, with the reason. */
export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

/** A file-system error as one line: "permission denied", "is a directory", ... */
export function describeFsError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  const why: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EISDIR: 'is a directory',
    ENOTDIR: 'a part of the path is not a directory',
    ENOENT: 'no such file or directory',
    EROFS: 'read-only file system',
    EEXIST: 'already exists',
    ENOSPC: 'no space left on the device',
    ELOOP: 'too many symbolic links',
    ENAMETOOLONG: 'the name is too long',
    EIO: 'input/output error',
    // Windows: a program holds the file open without sharing it (one still writing it, say)
    EBUSY: 'the file is in use by another program',
  };
  const said = (e.code && why[e.code]) ?? e.message ?? String(error);
  // Windows answers "access denied" to replacing or deleting a file that a program has open, and
  // a loaded model stays open (mapped) for as long as it is loaded
  if (process.platform === 'win32' && (e.code === 'EPERM' || e.code === 'EACCES'))
    return `${said} (on Windows also what a file open in another program gives: a model that Power or another app has loaded is open)`;
  return said;
}

export async function checkModelFile(path: string, knownArchitectures: readonly string[]): Promise<GgufInfo> {
  let st;
  try {
    st = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ModelFileError(`model file not found: ${path}`);
    throw new ModelFileError(`cannot read the model file ${path}: ${describeFsError(error)}`);
  }
  // a directory, a FIFO (which would block the reader for ever) or a device
  if (!st.isFile()) throw new ModelFileError(`not a file: ${path}`);
  let info: GgufInfo;
  try {
    info = await readGgufInfo(path);
  } catch (error) {
    if (error instanceof GgufFormatError) throw new ModelFileError(error.message);
    if ((error as NodeJS.ErrnoException).code) throw new ModelFileError(`cannot read the model file ${path}: ${describeFsError(error)}`);
    throw error;
  }
  const arch = info.metadata.get('general.architecture');
  if (!arch || arch.type !== 'string') {
    throw new ModelFileError(`${path} has no general.architecture: not a model GGUF`);
  }
  // a projector's GGUF is read by llama.cpp's mtmd library, never loaded as a model
  if (arch.value === PROJECTOR_ARCHITECTURE) {
    throw new ModelFileError(
      `${path} is a multimodal projector (clip), not a chat model: it pairs with the model beside it (power info <model.gguf> shows the pairing)`,
    );
  }
  if (!knownArchitectures.includes(arch.value)) {
    throw new ModelFileError(`${path}: architecture '${arch.value}' is not supported by llama.cpp in this build`);
  }
  const problem = modelSanityProblem(info, arch.value);
  if (problem) throw new ModelFileError(`${path}: ${problem}`);
  return info;
}
