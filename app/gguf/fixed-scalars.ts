// Each fixed-size GGUF scalar: its width, the JS type of its values and its little-endian Buffer
// accessors. The header reader and the synthetic-model writer both go through this one table, so
// what one writes is what the other reads.
import type { GgufBigIntKind, GgufScalarKind } from './types.js';

/** Every scalar kind but string (whose bytes follow a length). */
export type GgufFixedKind = Exclude<GgufScalarKind, 'string'>;
/** A fixed kind's JS value: 64-bit integers are bigint, bool a boolean, the rest a number. */
export type GgufFixedValue<K extends GgufFixedKind> = K extends GgufBigIntKind ? bigint : K extends 'bool' ? boolean : number;

interface FixedScalar<V> {
  bytes: number;
  js: 'number' | 'bigint' | 'boolean';
  read(buf: Buffer, at: number): V;
  write(buf: Buffer, value: V, at: number): void;
}

export const GGUF_FIXED: { readonly [K in GgufFixedKind]: FixedScalar<GgufFixedValue<K>> } = {
  u8: { bytes: 1, js: 'number', read: (b, at) => b.readUInt8(at), write: (b, v, at) => b.writeUInt8(v, at) },
  i8: { bytes: 1, js: 'number', read: (b, at) => b.readInt8(at), write: (b, v, at) => b.writeInt8(v, at) },
  u16: { bytes: 2, js: 'number', read: (b, at) => b.readUInt16LE(at), write: (b, v, at) => b.writeUInt16LE(v, at) },
  i16: { bytes: 2, js: 'number', read: (b, at) => b.readInt16LE(at), write: (b, v, at) => b.writeInt16LE(v, at) },
  u32: { bytes: 4, js: 'number', read: (b, at) => b.readUInt32LE(at), write: (b, v, at) => b.writeUInt32LE(v, at) },
  i32: { bytes: 4, js: 'number', read: (b, at) => b.readInt32LE(at), write: (b, v, at) => b.writeInt32LE(v, at) },
  f32: { bytes: 4, js: 'number', read: (b, at) => b.readFloatLE(at), write: (b, v, at) => b.writeFloatLE(v, at) },
  f64: { bytes: 8, js: 'number', read: (b, at) => b.readDoubleLE(at), write: (b, v, at) => b.writeDoubleLE(v, at) },
  u64: { bytes: 8, js: 'bigint', read: (b, at) => b.readBigUInt64LE(at), write: (b, v, at) => b.writeBigUInt64LE(v, at) },
  i64: { bytes: 8, js: 'bigint', read: (b, at) => b.readBigInt64LE(at), write: (b, v, at) => b.writeBigInt64LE(v, at) },
  // one byte: non-zero reads as true, true writes as 1
  bool: { bytes: 1, js: 'boolean', read: (b, at) => b.readUInt8(at) !== 0, write: (b, v, at) => b.writeUInt8(v ? 1 : 0, at) },
};
