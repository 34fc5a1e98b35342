// Checks a model file before it reaches llama.cpp, which aborts or fails obscurely on some bad
// inputs: the file must exist, be a well-formed, complete GGUF, and name an architecture
// this llama.cpp release knows.
import { stat } from 'node:fs/promises';

import { GgufFormatError, readGgufInfo } from '../gguf/reader.js';
import type { GgufInfo } from '../gguf/types.js';

/** A model file that cannot be used, with the reason. */
export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

export async function checkModelFile(path: string, knownArchitectures: readonly string[]): Promise<GgufInfo> {
  let st;
  try {
    st = await stat(path);
  } catch {
    throw new ModelFileError(`model file not found: ${path}`);
  }
  if (!st.isFile()) throw new ModelFileError(`not a file: ${path}`);
  let info: GgufInfo;
  try {
    info = await readGgufInfo(path);
  } catch (error) {
    if (error instanceof GgufFormatError) throw new ModelFileError(error.message);
    throw error;
  }
  const arch = info.metadata.get('general.architecture');
  if (!arch || arch.type !== 'string') {
    throw new ModelFileError(`${path} has no general.architecture: not a model GGUF`);
  }
  if (!knownArchitectures.includes(arch.value)) {
    throw new ModelFileError(`${path}: architecture '${arch.value}' is not supported by llama.cpp in this build`);
  }
  return info;
}
