// GGUF v3 writer. The header is built in memory (it is small); tensor data is
// produced and written one tensor at a time so models of hundreds of MB never
// sit in memory whole. Tensors are F32, F16, Q8_0 or Q4_0 (quantize.ts: ggml's block layouts).
import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { FileHandle } from 'node:fs/promises';
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_KIND_TO_ID,
  GGUF_MAGIC,
  GGUF_MAX_DIMS,
  GGUF_MAX_TENSOR_NAME_BYTES,
  GGUF_VERSION,
  GgufValueType,
  alignUp,
  elementCount,
} from '../../app/gguf/types.js';
import type { GgufBigIntKind, GgufInfo, GgufModel, GgufScalarKind, GgufTensorSpec, GgufValue } from '../../app/gguf/types.js';
import { GGUF_FIXED, type GgufFixedKind, type GgufFixedValue } from '../../app/gguf/fixed-scalars.js';
import { DATA_TYPES, dataBytes, encodeData } from './quantize.js';

const INT_RANGES: Partial<Record<GgufScalarKind, [number, number]>> = {
  u8: [0, 0xff],
  i8: [-0x80, 0x7f],
  u16: [0, 0xffff],
  i16: [-0x8000, 0x7fff],
  u32: [0, 0xffffffff],
  i32: [-0x80000000, 0x7fffffff],
};

/** Growable little-endian byte sink for the header. */
class ByteBuilder {
  private buf = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.alloc(size);
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  fixed<K extends GgufFixedKind>(kind: K, v: GgufFixedValue<K>): void {
    const { bytes, write } = GGUF_FIXED[kind];
    this.reserve(bytes);
    write(this.buf, v, this.length);
    this.length += bytes;
  }
  u32(v: number): void {
    this.fixed('u32', v);
  }
  u64(v: bigint | number): void {
    this.fixed('u64', BigInt(v));
  }
  str(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.reserve(bytes.length);
    bytes.copy(this.buf, this.length);
    this.length += bytes.length;
  }
  zeros(n: number): void {
    this.reserve(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function checkNumber(key: string, kind: GgufScalarKind, v: number): void {
  const range = INT_RANGES[kind];
  if (range && !(Number.isInteger(v) && v >= range[0] && v <= range[1])) {
    throw new RangeError(`GGUF key "${key}": ${v} is not a valid ${kind}`);
  }
}

function checkBigInt(key: string, kind: GgufBigIntKind, v: bigint): void {
  const ok = kind === 'u64' ? v >= 0n && v < 1n << 64n : v >= -(1n << 63n) && v < 1n << 63n;
  if (!ok) throw new RangeError(`GGUF key "${key}": ${v} is not a valid ${kind}`);
}

function writeScalar(b: ByteBuilder, key: string, kind: GgufScalarKind, v: number | bigint | boolean | string): void {
  const want = kind === 'string' ? 'string' : GGUF_FIXED[kind].js;
  if (typeof v !== want) throw new TypeError(`GGUF key "${key}": ${kind} needs a ${want}`);
  if (kind === 'string') b.str(v as string);
  else {
    if (typeof v === 'number') checkNumber(key, kind, v);
    if (typeof v === 'bigint') checkBigInt(key, kind as GgufBigIntKind, v);
    b.fixed(kind, v as GgufFixedValue<typeof kind>);
  }
}

function writeValue(b: ByteBuilder, key: string, value: GgufValue): void {
  if (value.type === 'array') {
    b.u32(GgufValueType.ARRAY);
    b.u32(GGUF_KIND_TO_ID[value.itemType]);
    b.u64(value.value.length);
    for (const item of value.value) writeScalar(b, key, value.itemType, item);
    return;
  }
  b.u32(GGUF_KIND_TO_ID[value.type]);
  writeScalar(b, key, value.type, value.value);
}

function resolveAlignment(model: GgufModel): number {
  const entry = model.metadata.find((e) => e.key === 'general.alignment');
  if (!entry) return GGUF_DEFAULT_ALIGNMENT;
  const v = entry.value;
  // ggml refuses any other type or a non-power-of-two.
  if (v.type !== 'u32' || v.value <= 0 || (v.value & (v.value - 1)) !== 0) {
    throw new RangeError('GGUF key "general.alignment" must be a u32 power of two');
  }
  return v.value;
}

function checkTensor(t: GgufTensorSpec, seen: Set<string>): void {
  const nameBytes = Buffer.byteLength(t.name, 'utf8');
  if (nameBytes === 0 || nameBytes > GGUF_MAX_TENSOR_NAME_BYTES) {
    throw new RangeError(`tensor name "${t.name}" must be 1..${GGUF_MAX_TENSOR_NAME_BYTES} bytes`);
  }
  if (seen.has(t.name)) throw new RangeError(`duplicate tensor name "${t.name}"`);
  seen.add(t.name);
  if (t.shape.length < 1 || t.shape.length > GGUF_MAX_DIMS || !t.shape.every((d) => Number.isInteger(d) && d > 0)) {
    throw new RangeError(`tensor "${t.name}" has invalid shape [${t.shape.join(', ')}]`);
  }
  const info = DATA_TYPES[t.type];
  if (!info) throw new RangeError(`tensor "${t.name}": the writer cannot write type '${String(t.type)}'`);
  if ((t.shape[0] ?? 0) % info.blockSize !== 0) {
    throw new RangeError(`tensor "${t.name}": ${t.type} needs ne0 to be a multiple of ${info.blockSize} (got ${t.shape[0]})`);
  }
}

/** A tensor ready to be written: its header fields and a way to produce its bytes. */
interface PreparedTensor {
  name: string;
  shape: number[];
  typeId: number;
  size: number;
  bytes: () => Promise<Uint8Array> | Uint8Array;
}

/** Writes `model` as GGUF v3. Tensors are written in the given order, each padded to the alignment. */
export async function writeGguf(path: string, model: GgufModel): Promise<void> {
  const names = new Set<string>();
  for (const t of model.tensors) checkTensor(t, names);
  await writeTensors(
    path,
    model.metadata,
    resolveAlignment(model),
    model.tensors.map((t) => ({
      name: t.name,
      shape: t.shape,
      typeId: DATA_TYPES[t.type].id,
      size: dataBytes(t.type, elementCount(t.shape)),
      bytes: () => encodeTensor(t),
    })),
  );
}

/**
 * Writes a GGUF whose tensors are copied byte for byte from `source` (any ggml type, K-quants
 * included), with `metadata` as given: a model cut from another (an early-exit draft of its
 * first blocks with its embeddings and head).
 */
export async function writeGgufFrom(
  path: string,
  metadata: GgufModel['metadata'],
  source: GgufInfo,
  tensorNames: readonly string[],
): Promise<void> {
  const alignment = resolveAlignment({ metadata, tensors: [] });
  const src = await open(source.path, 'r');
  try {
    await writeTensors(
      path,
      metadata,
      alignment,
      tensorNames.map((name) => {
        const t = source.tensors.find((x) => x.name === name);
        if (!t) throw new RangeError(`${source.path} has no tensor "${name}"`);
        return {
          name,
          shape: t.shape,
          typeId: t.type,
          size: t.byteSize,
          bytes: async () => {
            const buf = Buffer.alloc(t.byteSize);
            await src.read(buf, 0, t.byteSize, source.dataOffset + t.offset);
            return buf;
          },
        };
      }),
    );
  } finally {
    await src.close();
  }
}

async function writeTensors(path: string, metadata: GgufModel['metadata'], alignment: number, tensors: PreparedTensor[]): Promise<void> {
  if (endianness() !== 'LE') throw new Error('writeGguf: only little-endian hosts are supported');
  const keys = new Set<string>();
  for (const { key } of metadata) {
    if (key.length === 0) throw new RangeError('empty GGUF key');
    if (keys.has(key)) throw new RangeError(`duplicate GGUF key "${key}"`);
    keys.add(key);
  }

  const header = new ByteBuilder();
  header.u32(GGUF_MAGIC);
  header.u32(GGUF_VERSION);
  header.u64(tensors.length);
  header.u64(metadata.length);
  for (const { key, value } of metadata) {
    header.str(key);
    writeValue(header, key, value);
  }
  // ggml requires each offset to equal the padded end of the previous tensor.
  let offset = 0;
  for (const t of tensors) {
    header.str(t.name);
    header.u32(t.shape.length);
    for (const d of t.shape) header.u64(d);
    header.u32(t.typeId);
    header.u64(offset);
    offset += alignUp(t.size, alignment);
  }
  header.zeros(alignUp(header.length, alignment) - header.length);

  const fh = await open(path, 'w');
  try {
    await writeAll(fh, header.bytes());
    const pad = Buffer.alloc(alignment);
    for (const t of tensors) {
      const bytes = await t.bytes();
      if (bytes.length !== t.size) throw new RangeError(`tensor "${t.name}" has ${bytes.length} bytes, its type and shape need ${t.size}`);
      await writeAll(fh, bytes);
      await writeAll(fh, pad.subarray(0, alignUp(t.size, alignment) - t.size));
    }
  } finally {
    await fh.close();
  }
}

function encodeTensor(t: GgufTensorSpec): Uint8Array {
  const data = t.data();
  const expected = elementCount(t.shape);
  if (data.length !== expected) {
    throw new RangeError(`tensor "${t.name}" produced ${data.length} values, shape needs ${expected}`);
  }
  return encodeData(t.type, data);
}

async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
    done += bytesWritten;
  }
}

// the F16 conversions moved to quantize.ts with the block formats; re-exported for callers
export { f16ToF32, f32ArrayToF16, f32ToF16 } from './quantize.js';
