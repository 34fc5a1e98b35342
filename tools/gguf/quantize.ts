// ggml's block formats for the types the writer produces: F16, Q8_0 and Q4_0, quantized as
// ggml's reference code does (ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref, in
// float32 arithmetic), and their dequantization, so tests can compare a quantized model with
// an F32 model holding exactly the weights llama.cpp sees.
//   Q8_0 block (34 bytes): f16 scale d, 32 × int8 q;            x = d·q
//   Q4_0 block (18 bytes): f16 scale d, 16 bytes of nibbles;     x = d·(q − 8)
//     byte j holds element j (low nibble) and element j + 16 (high nibble)
import { GgmlType } from '../../app/gguf/types.js';

export const QK = 32; // elements per block of Q8_0 and Q4_0

export type QuantType = 'q8_0' | 'q4_0';
export type GgufDataType = 'f32' | 'f16' | QuantType;

/** ggml type id, elements per block and bytes per block of each writable type. */
export const DATA_TYPES: Readonly<Record<GgufDataType, { id: number; blockSize: number; blockBytes: number }>> = {
  f32: { id: GgmlType.F32, blockSize: 1, blockBytes: 4 },
  f16: { id: GgmlType.F16, blockSize: 1, blockBytes: 2 },
  q8_0: { id: GgmlType.Q8_0, blockSize: QK, blockBytes: 34 },
  q4_0: { id: GgmlType.Q4_0, blockSize: QK, blockBytes: 18 },
};

/** Bytes of `count` elements of `type`; the caller has checked that ne0 fills whole blocks. */
export function dataBytes(type: GgufDataType, count: number): number {
  const t = DATA_TYPES[type];
  return (count / t.blockSize) * t.blockBytes;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);
const fr = Math.fround;

/** IEEE 754 binary32 bits to binary16 bits, round to nearest even (as numpy and ggml's F16C path do). */
function bitsToF16(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: shift in the implicit bit, then round away the dropped bits.
    if (e < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rem = m & ((1 << shift) - 1);
    let r = m >>> shift;
    if (rem > half || (rem === half && (r & 1) === 1)) r += 1;
    return sign | r;
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h += 1;
  return h;
}

export function f32ToF16(value: number): number {
  f32Scratch[0] = value;
  return bitsToF16(u32Scratch[0] ?? 0);
}

export function f32ArrayToF16(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < bits.length; i++) out[i] = bitsToF16(bits[i] ?? 0);
  return out;
}

export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** C's roundf: halves away from zero. */
function roundf(x: number): number {
  return x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5);
}

function quantizeQ8_0(x: Float32Array): Uint8Array {
  const out = new Uint8Array(dataBytes('q8_0', x.length));
  const view = new DataView(out.buffer);
  for (let b = 0, o = 0; b < x.length; b += QK, o += 34) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[b + j] ?? 0));
    const d = fr(amax / 127);
    const id = d ? fr(1 / d) : 0;
    view.setUint16(o, f32ToF16(d), true);
    for (let j = 0; j < QK; j++) view.setInt8(o + 2 + j, roundf(fr((x[b + j] ?? 0) * id)));
  }
  return out;
}

function quantizeQ4_0(x: Float32Array): Uint8Array {
  const out = new Uint8Array(dataBytes('q4_0', x.length));
  const view = new DataView(out.buffer);
  for (let b = 0, o = 0; b < x.length; b += QK, o += 18) {
    // the value of largest magnitude, with its sign, maps to -8
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[b + j] ?? 0;
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = fr(max / -8);
    const id = d ? fr(1 / d) : 0;
    view.setUint16(o, f32ToF16(d), true);
    // (int8_t)(v + 8.5f) truncates toward zero, then MIN(15, ·)
    const nibble = (v: number): number => Math.min(15, Math.trunc(fr(fr(v * id) + 8.5)));
    for (let j = 0; j < QK / 2; j++) {
      out[o + 2 + j] = nibble(x[b + j] ?? 0) | (nibble(x[b + QK / 2 + j] ?? 0) << 4);
    }
  }
  return out;
}

/** `data` (ne0 first, ne0 a multiple of the block size) in `type`'s file layout. */
export function encodeData(type: GgufDataType, data: Float32Array): Uint8Array {
  switch (type) {
    case 'f32':
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    case 'f16': {
      const half = f32ArrayToF16(data);
      return new Uint8Array(half.buffer, half.byteOffset, half.byteLength);
    }
    case 'q8_0':
      return quantizeQ8_0(data);
    case 'q4_0':
      return quantizeQ4_0(data);
  }
}

/** The values llama.cpp reads back from `bytes` of `type` (its dequantize_row_* functions). */
export function decodeData(type: GgufDataType, bytes: Uint8Array, count: number): Float32Array {
  const out = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type) {
    case 'f32':
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
      return out;
    case 'f16':
      for (let i = 0; i < count; i++) out[i] = f16ToF32(view.getUint16(2 * i, true));
      return out;
    case 'q8_0':
      for (let b = 0, o = 0; b < count; b += QK, o += 34) {
        const d = f16ToF32(view.getUint16(o, true));
        for (let j = 0; j < QK; j++) out[b + j] = d * view.getInt8(o + 2 + j);
      }
      return out;
    case 'q4_0':
      for (let b = 0, o = 0; b < count; b += QK, o += 18) {
        const d = f16ToF32(view.getUint16(o, true));
        for (let j = 0; j < QK / 2; j++) {
          const q = view.getUint8(o + 2 + j);
          out[b + j] = d * ((q & 0x0f) - 8);
          out[b + QK / 2 + j] = d * ((q >> 4) - 8);
        }
      }
      return out;
  }
}

/** What llama.cpp will compute with: `data` stored as `type` and read back. */
export function roundTrip(type: GgufDataType, data: Float32Array): Float32Array {
  return decodeData(type, encodeData(type, data), data.length);
}
