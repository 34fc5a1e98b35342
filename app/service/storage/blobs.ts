// Content-addressed files: each kept once under its sha256 (the images of chats: the same picture
// attached to ten messages is one file), written atomically like every document. Documents
// refer to a blob by its sha256; which blobs are still referred to is theirs to say (`sweep`).
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { PowerError } from '../../contract/api/errors.js';
import { sha256Bytes } from '../sha256.js';
import { isTempFile, writeFileAtomic } from './atomic-file.js';

const NAME = /^[0-9a-f]{64}$/;

export class BlobStore {
  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<BlobStore> {
    await mkdir(dir, { recursive: true });
    for (const name of await readdir(dir)) if (isTempFile(name)) await rm(join(dir, name), { force: true });
    return new BlobStore(dir);
  }

  /** Keeps `bytes` (once: a blob already there is not written again); its sha256. */
  async put(bytes: Uint8Array): Promise<string> {
    const sha = sha256Bytes(bytes);
    if (!(await this.has(sha))) await writeFileAtomic(this.file(sha), bytes);
    return sha;
  }

  async has(sha: string): Promise<boolean> {
    return stat(this.file(sha)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  /** The blob's bytes; `not-found` when the data folder has none by that sha256. */
  async read(sha: string, what = 'blob'): Promise<Buffer> {
    try {
      return await readFile(this.file(sha));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new PowerError('not-found', `no ${what} ${sha} in the data folder`);
      throw error;
    }
  }

  async size(sha: string): Promise<number> {
    return (await stat(this.file(sha))).size;
  }

  /** Removes the blobs among `candidates` (every blob, when absent) that `keep` does not hold; how many went. */
  async sweep(keep: ReadonlySet<string>, candidates?: Iterable<string>): Promise<number> {
    const names = candidates ? [...candidates] : (await readdir(this.dir)).filter((n) => NAME.test(n));
    let removed = 0;
    for (const sha of new Set(names)) {
      if (keep.has(sha) || !NAME.test(sha)) continue;
      await rm(this.file(sha), { force: true });
      removed++;
    }
    return removed;
  }

  private file(sha: string): string {
    if (!NAME.test(sha)) throw new PowerError('bad-input', `not a sha256: ${sha.slice(0, 80)}`);
    return join(this.dir, sha);
  }
}
