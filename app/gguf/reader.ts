// GGUF header reader: parses metadata and tensor infos without touching tensor
// data, and rejects anything llama.cpp would choke on with one clear line, so a
// bad file never reaches the native loader (where it aborts or fails vaguely).
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import {
  GGML_TYPES,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_ID_TO_KIND,
  GGUF_MAGIC,
  GGUF_MAX_DIMS,
  GGUF_MAX_TENSOR_NAME_BYTES,
  GgufValueType,
  alignUp,
  elementCount,
  tensorByteSize,
} from './types.js';
import type { GgufArray, GgufInfo, GgufScalar, GgufScalarKind, GgufTensorInfo, GgufValue } from './types.js';
import { GGUF_FIXED, type GgufFixedKind, type GgufFixedValue } from './fixed-scalars.js';
import { GGUF_LIMITS, type GgufLimits } from './limits.js';

export class GgufFormatError extends Error {
  constructor(
    readonly file: string,
    readonly detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'GgufFormatError';
  }
}

// Smallest possible encodings, used to reject counts the file cannot possibly hold.
const MIN_KV_BYTES = 8 + 1 + 4 + 1; // key length, 1-byte key, type, 1-byte value
const MIN_TENSOR_INFO_BYTES = 8 + 1 + 4 + 4 + 8; // name length, 1-byte name, n_dims, type, offset
const CHUNK = 1 << 20;

/** Forward-only cursor over a file handle with a refillable window. */
class Cursor {
  private buf = Buffer.alloc(CHUNK);
  /** metadata bytes still allowed into memory */
  budget: number;
  private start = 0; // file offset of buf[0]
  private end = 0; // file offset just past the valid bytes
  pos = 0;

  constructor(
    private readonly fh: FileHandle,
    readonly fileSize: number,
    private readonly fail: (detail: string) => never,
    readonly limits: GgufLimits,
  ) {
    this.budget = limits.maxMetadataBytes;
  }

  /** Counts `n` bytes against the metadata budget. */
  spend(n: number, what: string): void {
    this.budget -= n;
    if (this.budget < 0) {
      this.fail(`the metadata needs more than ${this.limits.maxMetadataBytes} bytes of memory (at ${what}); no real model has that much`);
    }
  }

  get remaining(): number {
    return this.fileSize - this.pos;
  }

  /** Makes `n` bytes at `pos` available, failing with `what` when the file ends first. */
  async need(n: number, what: string): Promise<void> {
    if (n > this.remaining) {
      this.fail(`${what} at offset ${this.pos} runs past the end of the file (${this.fileSize} bytes)`);
    }
    if (this.pos + n <= this.end) return;
    if (n > this.buf.length) this.buf = Buffer.alloc(Math.max(n, this.buf.length * 2));
    const want = Math.min(this.buf.length, this.fileSize - this.pos);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.fh.read(this.buf, got, want - got, this.pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    this.start = this.pos;
    this.end = this.pos + got;
    if (got < n) this.fail(`${what} at offset ${this.pos}: file shrank while reading`);
  }

  private take(n: number): number {
    const at = this.pos - this.start;
    this.pos += n;
    return at;
  }
  fixed<K extends GgufFixedKind>(kind: K): GgufFixedValue<K> {
    const { bytes, read } = GGUF_FIXED[kind];
    return read(this.buf, this.take(bytes));
  }
  u32(): number {
    return this.fixed('u32');
  }
  u64(): bigint {
    return this.fixed('u64');
  }
  /** the raw bytes of the last string read when they were not valid UTF-8 (decoding loses them) */
  lastInvalid: Uint8Array | null = null;
  utf8(n: number): string {
    const at = this.take(n);
    const bytes = this.buf.subarray(at, at + n);
    this.lastInvalid = isUtf8(bytes) ? null : Uint8Array.from(bytes);
    return bytes.toString('utf8');
  }

  /** A u64 that must fit a JS number and the file, e.g. a count or a length. */
  async size(what: string): Promise<number> {
    await this.need(8, what);
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} at offset ${this.pos - 8} is absurd (${v})`);
    return Number(v);
  }

  async string(what: string): Promise<string> {
    const len = await this.size(`${what} length`);
    if (len > this.remaining) {
      this.fail(`${what} at offset ${this.pos - 8} (${len} bytes) runs past the end of the file (${this.fileSize} bytes)`);
    }
    if (len > this.limits.maxStringBytes) {
      this.fail(`${what} at offset ${this.pos - 8} is ${len} bytes long (at most ${this.limits.maxStringBytes} are accepted)`);
    }
    this.spend(len + 8, what);
    await this.need(len, what);
    return this.utf8(len);
  }
}

async function readScalar(c: Cursor, kind: GgufScalarKind, what: string): Promise<GgufScalar> {
  if (kind === 'string') return { type: 'string', value: await c.string(what) };
  await c.need(GGUF_FIXED[kind].bytes, what);
  return readFixed(c, kind);
}

function readFixed(c: Cursor, kind: GgufFixedKind): GgufScalar {
  return { type: kind, value: c.fixed(kind) } as GgufScalar;
}

async function readArray(c: Cursor, key: string, fail: (d: string) => never): Promise<GgufArray> {
  await c.need(4, `array type of "${key}"`);
  const itemId = c.u32();
  if (itemId === GgufValueType.ARRAY) fail(`key "${key}" is a nested array, which llama.cpp does not support`);
  const itemType = GGUF_ID_TO_KIND.get(itemId);
  if (itemType === undefined) fail(`key "${key}" has unknown array item type ${itemId}`);
  const n = await c.size(`array length of "${key}"`);
  const minItem = itemType === 'string' ? 8 : GGUF_FIXED[itemType].bytes;
  if (n * minItem > c.remaining) {
    fail(`array "${key}" at offset ${c.pos - 8} claims ${n} items, which runs past the end of the file (${c.fileSize} bytes)`);
  }
  if (n > c.limits.maxArrayItems) {
    fail(`array "${key}" has ${n} items; at most ${c.limits.maxArrayItems} are accepted (real vocabularies have a few hundred thousand)`);
  }
  if (itemType !== 'string') c.spend(n * GGUF_FIXED[itemType].bytes, `array "${key}"`);
  const items: unknown[] = new Array(n);
  if (itemType === 'string') {
    // token strings may be arbitrary bytes: keep those that UTF-8 decoding would alter
    const raw = new Map<number, Uint8Array>();
    for (let i = 0; i < n; i++) {
      items[i] = await c.string(`item ${i} of "${key}"`);
      if (c.lastInvalid) raw.set(i, c.lastInvalid);
    }
    return { type: 'array', itemType, value: items as string[], ...(raw.size > 0 ? { raw } : {}) };
  } else {
    // Fixed-size items: refill in chunks instead of awaiting per item.
    const size = GGUF_FIXED[itemType].bytes;
    const perChunk = Math.floor(CHUNK / size);
    for (let i = 0; i < n;) {
      const m = Math.min(perChunk, n - i);
      await c.need(m * size, `array "${key}"`);
      for (const stop = i + m; i < stop; i++) items[i] = readFixed(c, itemType).value;
    }
  }
  return { type: 'array', itemType, value: items } as GgufArray;
}

/** Parses and validates the header, metadata and tensor infos of a GGUF file; tensor data is not read. */
export async function readGgufInfo(path: string, limits: GgufLimits = GGUF_LIMITS): Promise<GgufInfo> {
  const fail: (detail: string) => never = (detail) => {
    throw new GgufFormatError(path, detail);
  };
  const fh = await open(path, 'r');
  try {
    const fileSize = (await fh.stat()).size;
    const c = new Cursor(fh, fileSize, fail, limits);
    if (fileSize < 24) fail(`not a GGUF file (only ${fileSize} bytes)`);
    await c.need(8, 'header');
    const magic = c.u32();
    if (magic !== GGUF_MAGIC) {
      const text = Buffer.alloc(4);
      text.writeUInt32LE(magic);
      fail(`not a GGUF file (magic ${JSON.stringify(text.toString('latin1'))}, expected "GGUF")`);
    }
    const version = c.u32();
    if (version === 1) fail('GGUF version 1 is no longer supported by llama.cpp');
    if (version !== 2 && version !== 3) {
      const hint = version > 0xffff ? ' (big-endian file?)' : '';
      fail(`unsupported GGUF version ${version}${hint}; expected 2 or 3`);
    }
    const tensorCount = await c.size('tensor count');
    const kvCount = await c.size('metadata count');
    if (kvCount * MIN_KV_BYTES + tensorCount * MIN_TENSOR_INFO_BYTES > c.remaining) {
      fail(`absurd counts: ${kvCount} metadata entries and ${tensorCount} tensors cannot fit in ${fileSize} bytes`);
    }
    // llama.cpp's loader is quadratic in both: refuse before it spends minutes on them
    if (tensorCount > limits.maxTensors) {
      fail(`${tensorCount} tensors: at most ${limits.maxTensors} are accepted (real models have at most a few thousand)`);
    }
    if (kvCount > limits.maxMetadataEntries) {
      fail(`${kvCount} metadata entries: at most ${limits.maxMetadataEntries} are accepted (real models have a few hundred)`);
    }

    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = await c.string(`key of metadata entry ${i}`);
      if (key.length === 0) fail(`metadata entry ${i} has an empty key`);
      if (metadata.has(key)) fail(`duplicate metadata key "${key}"`);
      await c.need(4, `type of "${key}"`);
      const typeId = c.u32();
      let value: GgufValue;
      if (typeId === GgufValueType.ARRAY) {
        value = await readArray(c, key, fail);
      } else {
        const kind = GGUF_ID_TO_KIND.get(typeId);
        if (kind === undefined) return fail(`key "${key}" has unknown value type ${typeId}`);
        value = await readScalar(c, kind, `value of "${key}"`);
      }
      metadata.set(key, value);
    }

    const alignValue = metadata.get('general.alignment');
    let alignment = GGUF_DEFAULT_ALIGNMENT;
    if (alignValue !== undefined) {
      if (alignValue.type !== 'u32') fail(`general.alignment must be u32, not ${describeType(alignValue)}`);
      alignment = alignValue.value as number;
      if (alignment === 0 || (alignment & (alignment - 1)) !== 0) fail(`general.alignment ${alignment} is not a power of two`);
      if (alignment > limits.maxAlignment)
        fail(`general.alignment ${alignment} is absurd (at most ${limits.maxAlignment} is accepted; models use 32)`);
    }

    const tensors: GgufTensorInfo[] = [];
    const names = new Set<string>();
    let expectedOffset = 0;
    for (let i = 0; i < tensorCount; i++) {
      const name = await c.string(`name of tensor ${i}`);
      if (Buffer.byteLength(name) > GGUF_MAX_TENSOR_NAME_BYTES)
        fail(`tensor name "${name}" is longer than ${GGUF_MAX_TENSOR_NAME_BYTES} bytes`);
      if (names.has(name)) fail(`duplicate tensor name "${name}"`);
      names.add(name);
      await c.need(4, `dimensions of tensor "${name}"`);
      const nDims = c.u32();
      if (nDims > GGUF_MAX_DIMS) fail(`tensor "${name}" has ${nDims} dimensions (at most ${GGUF_MAX_DIMS})`);
      const shape: number[] = [];
      for (let d = 0; d < nDims; d++) shape.push(await c.size(`dimension ${d} of tensor "${name}"`));
      const elems = elementCount(shape);
      if (!Number.isSafeInteger(elems)) fail(`tensor "${name}" has an absurd shape [${shape.join(', ')}]`);
      await c.need(12, `type and offset of tensor "${name}"`);
      const type = c.u32();
      const typeInfo = GGML_TYPES.get(type);
      if (typeInfo === undefined) return fail(`tensor "${name}" has unknown ggml type ${type}`);
      const offset = await c.size(`offset of tensor "${name}"`);
      const byteSize = tensorByteSize(typeInfo, shape);
      if (byteSize === undefined) {
        return fail(
          `tensor "${name}" of type ${typeInfo.name} has ${shape[0] ?? 1} elements per row, not a multiple of ${typeInfo.blockSize}`,
        );
      }
      if (offset % alignment !== 0) fail(`tensor "${name}" offset ${offset} is not aligned to ${alignment}`);
      // ggml requires tensors packed in header order, each padded to the alignment.
      if (offset !== expectedOffset) fail(`tensor "${name}" has offset ${offset}, expected ${expectedOffset}`);
      expectedOffset += alignUp(byteSize, alignment);
      tensors.push({ name, shape, type, typeName: typeInfo.name, offset, byteSize });
    }

    // the data span is the tensors' bytes plus alignment padding: a file that is mostly holes
    // between tiny tensors is a crafted one, and loading it eats memory
    const tensorBytes = tensors.reduce((n, t) => n + t.byteSize, 0);
    const padding = expectedOffset - tensorBytes;
    if (padding > limits.maxPaddingBytes && padding > tensorBytes) {
      fail(`the tensor data spans ${expectedOffset} bytes but the tensors hold only ${tensorBytes}: the file is mostly padding`);
    }
    const dataOffset = alignUp(c.pos, alignment);
    for (const t of tensors) {
      const end = dataOffset + t.offset + t.byteSize;
      if (end > fileSize) fail(`truncated: tensor ${t.name} needs bytes up to ${end} but the file has ${fileSize}`);
    }
    return { path, version, alignment, dataOffset, fileSize, metadata, tensors };
  } finally {
    await fh.close();
  }
}

function describeType(v: GgufValue): string {
  return v.type === 'array' ? `array of ${v.itemType}` : v.type;
}

function lookup(info: GgufInfo, key: string): GgufValue {
  const v = info.metadata.get(key);
  if (v === undefined) throw new GgufFormatError(info.path, `metadata key "${key}" is missing`);
  return v;
}

export function getString(info: GgufInfo, key: string): string {
  const v = lookup(info, key);
  if (v.type !== 'string') throw new GgufFormatError(info.path, `metadata key "${key}" is ${describeType(v)}, expected string`);
  return v.value;
}

/** Any numeric scalar; 64-bit values must fit a JS number exactly. */
export function getNumber(info: GgufInfo, key: string): number {
  const v = lookup(info, key);
  switch (v.type) {
    case 'u64':
    case 'i64': {
      const n = Number(v.value);
      if (!Number.isSafeInteger(n)) throw new GgufFormatError(info.path, `metadata key "${key}" (${v.value}) does not fit a JS number`);
      return n;
    }
    case 'string':
    case 'bool':
    case 'array':
      throw new GgufFormatError(info.path, `metadata key "${key}" is ${describeType(v)}, expected a number`);
    default:
      return v.value;
  }
}

export function getArray(info: GgufInfo, key: string): GgufArray {
  const v = lookup(info, key);
  if (v.type !== 'array') throw new GgufFormatError(info.path, `metadata key "${key}" is ${v.type}, expected an array`);
  return v;
}

/** Total elements over all tensors (MTP/NextN blocks included). */
export function parameterCount(info: GgufInfo): number {
  return info.tensors.reduce((sum, t) => sum + elementCount(t.shape), 0);
}
