// GGUF file-format vocabulary shared by the writer and the reader.
// The GGUF format as ggml defines it: header, metadata key/value types, tensor infos, alignment.

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;
/** ggml rejects names of GGML_MAX_NAME (64) bytes or more. */
export const GGUF_MAX_TENSOR_NAME_BYTES = 63;
/** ggml tensors have at most 4 dimensions. */
export const GGUF_MAX_DIMS = 4;

/** Value type ids as stored in the file. */
export const GgufValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufValueTypeId = (typeof GgufValueType)[keyof typeof GgufValueType];

/** Scalar kinds by name; the name is what callers write, so nothing is guessed from a JS number. */
export type GgufNumberKind = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64';
export type GgufBigIntKind = 'u64' | 'i64';
export type GgufScalarKind = GgufNumberKind | GgufBigIntKind | 'bool' | 'string';

export const GGUF_KIND_TO_ID: Readonly<Record<GgufScalarKind, GgufValueTypeId>> = {
  u8: GgufValueType.UINT8,
  i8: GgufValueType.INT8,
  u16: GgufValueType.UINT16,
  i16: GgufValueType.INT16,
  u32: GgufValueType.UINT32,
  i32: GgufValueType.INT32,
  f32: GgufValueType.FLOAT32,
  bool: GgufValueType.BOOL,
  string: GgufValueType.STRING,
  u64: GgufValueType.UINT64,
  i64: GgufValueType.INT64,
  f64: GgufValueType.FLOAT64,
};

export const GGUF_ID_TO_KIND: ReadonlyMap<number, GgufScalarKind> = new Map(
  Object.entries(GGUF_KIND_TO_ID).map(([kind, id]) => [id, kind as GgufScalarKind]),
);

/** 64-bit integers are bigint so values above 2^53 survive a round trip. */
export type GgufScalar =
  | { type: GgufNumberKind; value: number }
  | { type: GgufBigIntKind; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string };

/** ggml rejects nested arrays, so array items are scalars only. */
export type GgufArray =
  | { type: 'array'; itemType: GgufNumberKind; value: number[] }
  | { type: 'array'; itemType: GgufBigIntKind; value: bigint[] }
  | { type: 'array'; itemType: 'bool'; value: boolean[] }
  | {
      type: 'array';
      itemType: 'string';
      value: string[];
      /** items whose bytes are not valid UTF-8 (value holds them decoded, lossily), by index */
      raw?: ReadonlyMap<number, Uint8Array>;
    };

export type GgufValue = GgufScalar | GgufArray;

export interface GgufEntry {
  key: string;
  value: GgufValue;
}

/** Ordered: the writer keeps this order, which keeps output byte-identical. */
export type GgufMetadata = GgufEntry[];

/** Short constructors so model code reads `kv('llama.block_count', gv.u32(4))`. */
export const gv = {
  u8: (value: number): GgufValue => ({ type: 'u8', value }),
  i8: (value: number): GgufValue => ({ type: 'i8', value }),
  u16: (value: number): GgufValue => ({ type: 'u16', value }),
  i16: (value: number): GgufValue => ({ type: 'i16', value }),
  u32: (value: number): GgufValue => ({ type: 'u32', value }),
  i32: (value: number): GgufValue => ({ type: 'i32', value }),
  f32: (value: number): GgufValue => ({ type: 'f32', value }),
  f64: (value: number): GgufValue => ({ type: 'f64', value }),
  u64: (value: bigint | number): GgufValue => ({ type: 'u64', value: BigInt(value) }),
  i64: (value: bigint | number): GgufValue => ({ type: 'i64', value: BigInt(value) }),
  bool: (value: boolean): GgufValue => ({ type: 'bool', value }),
  str: (value: string): GgufValue => ({ type: 'string', value }),
  strings: (value: string[]): GgufValue => ({ type: 'array', itemType: 'string', value }),
  i32s: (value: number[]): GgufValue => ({ type: 'array', itemType: 'i32', value }),
  u32s: (value: number[]): GgufValue => ({ type: 'array', itemType: 'u32', value }),
  f32s: (value: number[]): GgufValue => ({ type: 'array', itemType: 'f32', value }),
  bools: (value: boolean[]): GgufValue => ({ type: 'array', itemType: 'bool', value }),
};

export function kv(key: string, value: GgufValue): GgufEntry {
  return { key, value };
}

/** ggml tensor type ids (ggml.h `enum ggml_type`). */
export const GgmlType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q8_0: 8,
  Q4_K: 12,
  Q6_K: 14,
  BF16: 30,
} as const;

export interface GgmlTypeInfo {
  name: string;
  /** Elements per block; ne0 must be a multiple of it. */
  blockSize: number;
  /** Bytes per block. */
  typeSize: number;
}

/**
 * Block layout of every type ggml v0.4.0 can store, read from the library itself
 * (ggml_blck_size / ggml_type_size), so real quantized checkpoints can be sized
 * without reading their data.
 */
export const GGML_TYPES: ReadonlyMap<number, GgmlTypeInfo> = new Map<number, GgmlTypeInfo>([
  [0, { name: 'F32', blockSize: 1, typeSize: 4 }],
  [1, { name: 'F16', blockSize: 1, typeSize: 2 }],
  [2, { name: 'Q4_0', blockSize: 32, typeSize: 18 }],
  [3, { name: 'Q4_1', blockSize: 32, typeSize: 20 }],
  [6, { name: 'Q5_0', blockSize: 32, typeSize: 22 }],
  [7, { name: 'Q5_1', blockSize: 32, typeSize: 24 }],
  [8, { name: 'Q8_0', blockSize: 32, typeSize: 34 }],
  [9, { name: 'Q8_1', blockSize: 32, typeSize: 36 }],
  [10, { name: 'Q2_K', blockSize: 256, typeSize: 84 }],
  [11, { name: 'Q3_K', blockSize: 256, typeSize: 110 }],
  [12, { name: 'Q4_K', blockSize: 256, typeSize: 144 }],
  [13, { name: 'Q5_K', blockSize: 256, typeSize: 176 }],
  [14, { name: 'Q6_K', blockSize: 256, typeSize: 210 }],
  [15, { name: 'Q8_K', blockSize: 256, typeSize: 292 }],
  [16, { name: 'IQ2_XXS', blockSize: 256, typeSize: 66 }],
  [17, { name: 'IQ2_XS', blockSize: 256, typeSize: 74 }],
  [18, { name: 'IQ3_XXS', blockSize: 256, typeSize: 98 }],
  [19, { name: 'IQ1_S', blockSize: 256, typeSize: 50 }],
  [20, { name: 'IQ4_NL', blockSize: 32, typeSize: 18 }],
  [21, { name: 'IQ3_S', blockSize: 256, typeSize: 110 }],
  [22, { name: 'IQ2_S', blockSize: 256, typeSize: 82 }],
  [23, { name: 'IQ4_XS', blockSize: 256, typeSize: 136 }],
  [24, { name: 'I8', blockSize: 1, typeSize: 1 }],
  [25, { name: 'I16', blockSize: 1, typeSize: 2 }],
  [26, { name: 'I32', blockSize: 1, typeSize: 4 }],
  [27, { name: 'I64', blockSize: 1, typeSize: 8 }],
  [28, { name: 'F64', blockSize: 1, typeSize: 8 }],
  [29, { name: 'IQ1_M', blockSize: 256, typeSize: 56 }],
  [30, { name: 'BF16', blockSize: 1, typeSize: 2 }],
  [34, { name: 'TQ1_0', blockSize: 256, typeSize: 54 }],
  [35, { name: 'TQ2_0', blockSize: 256, typeSize: 66 }],
  [39, { name: 'MXFP4', blockSize: 32, typeSize: 17 }],
  [40, { name: 'NVFP4', blockSize: 64, typeSize: 36 }],
  [41, { name: 'Q1_0', blockSize: 128, typeSize: 18 }],
  [42, { name: 'Q2_0', blockSize: 64, typeSize: 18 }],
]);

/** Data types the writer can produce (converted from Float32Array in TS; see quantize.ts). */
export type GgufWritableType = 'f32' | 'f16' | 'q8_0' | 'q4_0';

export interface GgufTensorSpec {
  name: string;
  /** ggml order: ne0 (the contiguous dimension) first. */
  shape: number[];
  type: GgufWritableType;
  /** Called once, when this tensor is written, so only one tensor is in memory at a time. */
  data: () => Float32Array;
}

export interface GgufModel {
  metadata: GgufMetadata;
  tensors: GgufTensorSpec[];
}

/** A tensor as described in a file's header. */
export interface GgufTensorInfo {
  name: string;
  /** ggml order: ne0 first. */
  shape: number[];
  /** ggml type id. */
  type: number;
  typeName: string;
  /** Byte offset relative to the start of the data region (`GgufInfo.dataOffset`). */
  offset: number;
  byteSize: number;
}

export interface GgufInfo {
  path: string;
  version: number;
  alignment: number;
  /** Absolute file offset where tensor data begins. */
  dataOffset: number;
  fileSize: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
}

export function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Bytes a tensor occupies, or undefined when ne0 does not fill whole blocks. */
export function tensorByteSize(type: GgmlTypeInfo, shape: readonly number[]): number | undefined {
  const ne0 = shape[0] ?? 1;
  if (ne0 % type.blockSize !== 0) return undefined;
  return (elementCount(shape) / type.blockSize) * type.typeSize;
}
