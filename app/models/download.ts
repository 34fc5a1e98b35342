// Downloads one GGUF model file from a URL: streams it into `<dest>.part`, resumes an
// interrupted transfer with an HTTP Range request, refuses a body that is not a GGUF as soon as
// its first 8 bytes arrive, checks the size and SHA-256, and only then renames the file into
// place, so the library never sees half a model.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, rm, stat, statfs, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

import { GgufFormatError, readGgufInfo } from '../gguf/reader.js';
import { GGUF_MAGIC } from '../gguf/types.js';

export type DownloadErrorCode =
  'bad-input' | 'exists' | 'http' | 'network' | 'not-gguf' | 'size-mismatch' | 'sha256-mismatch' | 'disk-full' | 'io' | 'cancelled';

/** A download that failed, with a reason a user can act on. */
export class DownloadError extends Error {
  constructor(
    readonly code: DownloadErrorCode,
    message: string,
    /** whether `<dest>.part` was kept, so starting the same download again resumes it */
    readonly resumable = false,
  ) {
    super(message);
    this.name = 'DownloadError';
  }
}

export interface DownloadProgress {
  /** bytes of the file on disk so far (resumed bytes included) */
  receivedBytes: number;
  /** the file's size when the server said it, else null */
  totalBytes: number | null;
  /** bytes that were already there from an interrupted attempt */
  resumedFromBytes: number;
}

export interface DownloadOptions {
  url: string;
  /** the final file; `<dest>.part` holds the transfer until it is checked */
  dest: string;
  /** expected SHA-256 (hex), checked before the file is renamed into place */
  sha256?: string;
  /** expected size in bytes, checked against the server's and the received size */
  sizeBytes?: number;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /** keep `<dest>.part` when cancelled, to resume later (default: remove it) */
  keepPartialOnCancel?: boolean;
  /** at most one progress call per this many ms (the last one always comes) */
  progressIntervalMs?: number;
}

export interface DownloadResult {
  path: string;
  sizeBytes: number;
  sha256: string;
  resumedFromBytes: number;
}

const GGUF_HEAD_BYTES = 8;

export function partialPath(dest: string): string {
  return `${dest}.part`;
}

/** Why the first bytes of a file are not a GGUF header, or null when they may be one. */
export function ggufHeadProblem(head: Uint8Array): string | null {
  const magic = Buffer.from(head.subarray(0, 4));
  if (magic.length >= 4 && magic.readUInt32LE(0) !== GGUF_MAGIC) {
    const shown = JSON.stringify(magic.toString('latin1'));
    return `not a GGUF file (it starts with ${shown}, expected "GGUF")`;
  }
  if (head.length >= GGUF_HEAD_BYTES) {
    const version = Buffer.from(head).readUInt32LE(4);
    if (version !== 2 && version !== 3) return `not a GGUF file this engine reads (version ${version}; expected 2 or 3)`;
  }
  return null;
}

function checkOptions(o: DownloadOptions): URL {
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    throw new DownloadError('bad-input', `not a URL: '${o.url}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DownloadError('bad-input', `only http and https URLs can be downloaded (got ${url.protocol})`);
  }
  if (o.sha256 !== undefined && !/^[0-9a-f]{64}$/i.test(o.sha256)) {
    throw new DownloadError('bad-input', `sha256 must be 64 hex digits (got '${o.sha256}')`);
  }
  if (o.sizeBytes !== undefined && (!Number.isSafeInteger(o.sizeBytes) || o.sizeBytes <= 0)) {
    throw new DownloadError('bad-input', `sizeBytes must be a positive integer (got ${o.sizeBytes})`);
  }
  return url;
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    const st = await stat(path);
    return st.isFile() ? st.size : 0;
  } catch {
    return null;
  }
}

/** Feeds an existing partial file into the hash and returns its first bytes. */
async function hashExisting(path: string, hash: Hash): Promise<Buffer> {
  const heads: Buffer[] = [];
  let have = 0;
  for await (const chunk of createReadStream(path)) {
    const buf = chunk as Buffer;
    hash.update(buf);
    if (have < GGUF_HEAD_BYTES) {
      heads.push(buf.subarray(0, GGUF_HEAD_BYTES - have));
      have += Math.min(buf.length, GGUF_HEAD_BYTES - have);
    }
  }
  return Buffer.concat(heads);
}

/** `bytes START-END/TOTAL` → start and total (total null when `*`). */
function parseContentRange(header: string | null): { start: number; total: number | null } | null {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header?.trim() ?? '');
  if (!m) return null;
  return { start: Number(m[1]), total: m[2] === '*' ? null : Number(m[2]) };
}

function unsatisfiedTotal(header: string | null): number | null {
  const m = /^bytes \*\/(\d+)$/.exec(header?.trim() ?? '');
  return m ? Number(m[1]) : null;
}

function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG';
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}

/** Whether the folder has room for `bytes` more; statfs is missing on some systems (then: yes). */
async function checkFreeSpace(dir: string, bytes: number): Promise<void> {
  let free: number;
  try {
    const fs = await statfs(dir);
    free = fs.bavail * fs.bsize;
  } catch {
    return;
  }
  if (free < bytes) {
    throw new DownloadError('disk-full', `not enough disk space in ${dir}: the download needs ${gib(bytes)} more, ${gib(free)} is free`);
  }
}

interface Response {
  status: number;
  statusText: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
}

async function request(url: URL, from: number, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, {
      headers: from > 0 ? { Range: `bytes=${from}-`, 'Accept-Encoding': 'identity' } : { 'Accept-Encoding': 'identity' },
      redirect: 'follow',
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw new DownloadError('cancelled', 'the download was cancelled', false);
    const cause = (error as Error & { cause?: Error }).cause;
    throw new DownloadError('network', `cannot reach ${url.host}: ${cause?.message ?? (error as Error).message}`, from > 0);
  }
}

/** Downloads `url` to `dest` (see the file comment); throws a DownloadError on every failure. */
export async function downloadModel(options: DownloadOptions): Promise<DownloadResult> {
  const url = checkOptions(options);
  const { dest, signal } = options;
  if ((await sizeOf(dest)) !== null) throw new DownloadError('exists', `${dest} already exists; remove it or choose another name`);
  const part = partialPath(dest);
  const interval = options.progressIntervalMs ?? 100;

  let offset = (await sizeOf(part)) ?? 0;
  let hash = createHash('sha256');
  let head = offset > 0 ? await hashExisting(part, hash) : Buffer.alloc(0);
  if (offset > 0 && ggufHeadProblem(head) !== null) {
    // an old partial that is not a GGUF cannot be resumed
    await rm(part, { force: true });
    offset = 0;
    hash = createHash('sha256');
    head = Buffer.alloc(0);
  }
  let response = await request(url, offset, signal);
  let total: number | null = null;
  if (offset > 0 && response.status === 416) {
    // the partial may already hold the whole file
    total = unsatisfiedTotal(response.headers.get('content-range'));
    await response.body?.cancel();
    if (total !== offset) {
      await rm(part, { force: true });
      offset = 0;
      hash = createHash('sha256');
      head = Buffer.alloc(0);
      response = await request(url, 0, signal);
    }
  }
  if (response.status === 206) {
    const range = parseContentRange(response.headers.get('content-range'));
    if (!range || range.start !== offset) {
      await response.body?.cancel();
      throw new DownloadError(
        'http',
        `the server answered the resume request with a different range (${response.headers.get('content-range')})`,
        false,
      );
    }
    total = range.total;
  } else if (response.status === 200) {
    // the server ignored the Range request: start over
    if (offset > 0) {
      offset = 0;
      hash = createHash('sha256');
      head = Buffer.alloc(0);
    }
    const length = response.headers.get('content-length');
    total = length !== null && /^\d+$/.test(length) ? Number(length) : null;
  } else if (!(response.status === 416 && total === offset)) {
    await response.body?.cancel();
    throw new DownloadError(
      'http',
      `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${url.href}`,
      offset > 0,
    );
  }
  const complete = response.status === 416;
  const resumedFrom = offset;

  if (options.sizeBytes !== undefined && total !== null && total !== options.sizeBytes) {
    await response.body?.cancel();
    throw new DownloadError('size-mismatch', `the server says the file is ${total} bytes, expected ${options.sizeBytes}`, false);
  }
  if (total !== null && !complete) {
    try {
      await checkFreeSpace(dirname(dest), total - offset);
    } catch (error) {
      await response.body?.cancel();
      throw error;
    }
  }

  let received = offset;
  let lastProgress = 0;
  const progress = (force: boolean): void => {
    const now = Date.now();
    if (!options.onProgress || (!force && now - lastProgress < interval)) return;
    lastProgress = now;
    options.onProgress({ receivedBytes: received, totalBytes: total, resumedFromBytes: resumedFrom });
  };

  if (!complete) {
    let file: FileHandle;
    try {
      file = await open(part, offset > 0 ? 'a' : 'w');
    } catch (error) {
      await response.body?.cancel();
      if (isDiskFull(error)) throw new DownloadError('disk-full', `disk full: cannot create ${part}`, false);
      throw new DownloadError('io', `cannot write ${part}: ${(error as Error).message}`, false);
    }
    try {
      progress(true);
      if (!response.body) throw new DownloadError('network', `${url.href} sent no body`, offset > 0);
      const reader = response.body.getReader();
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        const chunk = next.value;
        if (head.length < GGUF_HEAD_BYTES) {
          head = Buffer.concat([head, chunk.subarray(0, GGUF_HEAD_BYTES - head.length)]);
          const problem = ggufHeadProblem(head);
          if (problem) throw new DownloadError('not-gguf', `${url.href} is ${problem}`, false);
        }
        await file.write(chunk);
        hash.update(chunk);
        received += chunk.length;
        if (total !== null && received > total) {
          throw new DownloadError('size-mismatch', `the server sent more than the ${total} bytes it announced`, false);
        }
        progress(false);
      }
    } catch (error) {
      await response.body?.cancel().catch(() => {});
      await file.close().catch(() => {});
      throw await failed(error, part, received, options);
    }
    try {
      await file.sync();
      await file.close();
    } catch (error) {
      // a file system that reports a full disk only when the data is flushed (NFS, quotas)
      await file.close().catch(() => {});
      if (isDiskFull(error))
        throw new DownloadError('disk-full', `disk full while saving ${part}; free some space and start it again to resume`, true);
      throw new DownloadError('io', `cannot write ${part}: ${(error as Error).message}`, true);
    }
    progress(true);
  }

  if (total !== null && received !== total) {
    throw new DownloadError('network', `the transfer ended after ${received} of ${total} bytes; start it again to resume`, true);
  }
  if (options.sizeBytes !== undefined && received !== options.sizeBytes) {
    await rm(part, { force: true });
    throw new DownloadError('size-mismatch', `received ${received} bytes, expected ${options.sizeBytes}`, false);
  }
  const digest = hash.digest('hex');
  if (options.sha256 !== undefined && digest !== options.sha256.toLowerCase()) {
    await rm(part, { force: true });
    throw new DownloadError(
      'sha256-mismatch',
      `SHA-256 mismatch for ${basename(dest)}: got ${digest}, expected ${options.sha256.toLowerCase()}`,
      false,
    );
  }
  try {
    // the whole header: a body that starts like a GGUF but is not one (or is cut short) stops here
    await readGgufInfo(part);
  } catch (error) {
    if (!(error instanceof GgufFormatError)) throw new DownloadError('io', `cannot read ${part} back: ${(error as Error).message}`, true);
    await rm(part, { force: true });
    throw new DownloadError('not-gguf', `${url.href} is not a usable GGUF file: ${error.detail}`, false);
  }
  if ((await sizeOf(dest)) !== null)
    throw new DownloadError('exists', `${dest} appeared while downloading; the download is kept in ${part}`, true);
  try {
    await rename(part, dest);
  } catch (error) {
    throw new DownloadError('io', `cannot move ${part} into place: ${(error as Error).message}`, true);
  }
  return { path: dest, sizeBytes: received, sha256: digest, resumedFromBytes: resumedFrom };
}

/** Turns a failure while streaming into a DownloadError, removing the partial when it is useless. */
async function failed(error: unknown, part: string, received: number, options: DownloadOptions): Promise<DownloadError> {
  if (options.signal?.aborted) {
    if (!options.keepPartialOnCancel) await rm(part, { force: true });
    return new DownloadError('cancelled', 'the download was cancelled', options.keepPartialOnCancel === true);
  }
  if (error instanceof DownloadError) {
    if (!error.resumable) await rm(part, { force: true });
    return error;
  }
  if (isDiskFull(error)) {
    return new DownloadError(
      'disk-full',
      `disk full after ${received} bytes while writing ${part}; free some space and start it again to resume`,
      true,
    );
  }
  if ((error as NodeJS.ErrnoException).syscall === 'write') {
    return new DownloadError('io', `cannot write ${part}: ${(error as Error).message}`, true);
  }
  const cause = (error as Error & { cause?: Error }).cause;
  return new DownloadError(
    'network',
    `the transfer was interrupted after ${received} bytes (${cause?.message ?? (error as Error).message}); start it again to resume`,
    true,
  );
}
