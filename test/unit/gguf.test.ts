import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GgufFormatError, getArray, getNumber, getString, parameterCount, readGgufInfo } from '../../app/gguf/reader.js';
import { gv, kv } from '../../app/gguf/types.js';
import type { GgufModel, GgufValue } from '../../app/gguf/types.js';
import { f16ToF32, f32ToF16, writeGguf } from '../../tools/gguf/writer.js';
import { SYNTHETIC_MODELS, makeModels } from '../../tools/models/synthetic.js';
import { TokenType, makeAltVocab, makeVocab } from '../../app/models/vocab.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-gguf-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ALL_VALUES: [string, GgufValue][] = [
  ['t.u8', gv.u8(255)],
  ['t.i8', gv.i8(-128)],
  ['t.u16', gv.u16(65535)],
  ['t.i16', gv.i16(-32768)],
  ['t.u32', gv.u32(4294967295)],
  ['t.i32', gv.i32(-2147483648)],
  ['t.f32', gv.f32(0.5)],
  ['t.f64', gv.f64(Math.PI)],
  ['t.u64', gv.u64(2n ** 64n - 1n)],
  ['t.i64', gv.i64(-(2n ** 63n))],
  ['t.bool', gv.bool(true)],
  ['t.string', gv.str('héllo ▁wörld')],
  ['t.empty', gv.str('')],
  ['t.strings', gv.strings(['a', '', '<0x0A>', '▁the'])],
  ['t.i32s', gv.i32s([1, -2, 3])],
  ['t.u32s', gv.u32s([0, 4294967295])],
  ['t.f32s', gv.f32s([0.25, -1.5])],
  ['t.bools', gv.bools([true, false])],
  ['t.u64s', { type: 'array', itemType: 'u64', value: [1n, 2n ** 60n] }],
  ['t.noitems', gv.i32s([])],
];

function sampleModel(alignment?: number): GgufModel {
  const metadata = [kv('general.architecture', gv.str('test')), ...ALL_VALUES.map(([k, v]) => kv(k, v))];
  if (alignment !== undefined) metadata.push(kv('general.alignment', gv.u32(alignment)));
  return {
    metadata,
    tensors: [
      { name: 'a', shape: [3], type: 'f32', data: () => new Float32Array([1, -2, 3.5]) },
      { name: 'b.weight', shape: [4, 2], type: 'f16', data: () => new Float32Array([0, 1, -1, 0.1, 65504, 1e-8, 2 ** -24, 0.5]) },
      { name: 'c', shape: [5, 1, 2], type: 'f32', data: () => Float32Array.from({ length: 10 }, (_, i) => i) },
    ],
  };
}

async function writeSample(name: string, alignment?: number): Promise<string> {
  const path = join(dir, name);
  await writeGguf(path, sampleModel(alignment));
  return path;
}

describe('gguf writer -> reader round trip', () => {
  for (const alignment of [undefined, 64]) {
    test(`metadata and tensor infos survive (alignment ${alignment ?? 'default'})`, async () => {
      const path = await writeSample(`rt-${alignment ?? 'default'}.gguf`, alignment);
      const info = await readGgufInfo(path);
      const align = alignment ?? 32;
      assert.equal(info.version, 3);
      assert.equal(info.alignment, align);
      for (const [key, value] of ALL_VALUES) assert.deepEqual(info.metadata.get(key), value, key);
      assert.equal(info.dataOffset % align, 0);
      assert.deepEqual(
        info.tensors.map((t) => [t.name, t.shape, t.typeName, t.byteSize]),
        [
          ['a', [3], 'F32', 12],
          ['b.weight', [4, 2], 'F16', 16],
          ['c', [5, 1, 2], 'F32', 40],
        ],
      );
      for (const t of info.tensors) assert.equal(t.offset % align, 0, t.name);
      assert.equal(info.tensors[1]?.offset, align); // 12 bytes padded to one alignment unit
      assert.equal(info.fileSize, info.dataOffset + 2 * align + Math.ceil(40 / align) * align);
      assert.equal(parameterCount(info), 3 + 8 + 10);

      const bytes = await readFile(path);
      const a = info.tensors[0];
      const b = info.tensors[1];
      assert.ok(a && b);
      const base = info.dataOffset;
      assert.deepEqual(
        [0, 1, 2].map((i) => bytes.readFloatLE(base + a.offset + 4 * i)),
        [1, -2, 3.5],
      );
      const halves = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => bytes.readUInt16LE(base + b.offset + 2 * i));
      assert.deepEqual(halves, [0x0000, 0x3c00, 0xbc00, 0x2e66, 0x7bff, 0x0000, 0x0001, 0x3800]);
    });
  }

  test('typed getters', async () => {
    const info = await readGgufInfo(await writeSample('getters.gguf'));
    assert.equal(getString(info, 't.string'), 'héllo ▁wörld');
    assert.equal(getNumber(info, 't.u32'), 4294967295);
    assert.equal(getNumber(info, 't.f32'), 0.5);
    assert.deepEqual(getArray(info, 't.i32s').value, [1, -2, 3]);
    assert.throws(() => getNumber(info, 't.u64'), /does not fit a JS number/);
    assert.throws(
      () => getString(info, 't.u32'),
      (e: unknown) => e instanceof GgufFormatError && /"t\.u32" is u32, expected string/.test(e.message),
    );
    assert.throws(() => getNumber(info, 't.strings'), /is array of string, expected a number/);
    assert.throws(() => getArray(info, 't.bool'), /is bool, expected an array/);
    assert.throws(() => getString(info, 'missing.key'), /"missing\.key" is missing/);
  });

  test('writer rejects what llama.cpp would reject', async () => {
    const base = sampleModel();
    const path = join(dir, 'bad-write.gguf');
    const first = base.tensors[0];
    assert.ok(first);
    await assert.rejects(writeGguf(path, { ...base, tensors: [first, first] }), /duplicate tensor name "a"/);
    await assert.rejects(writeGguf(path, { ...base, tensors: [{ ...first, shape: [4] }] }), /produced 3 values, shape needs 4/);
    await assert.rejects(writeGguf(path, { metadata: [kv('x', gv.u32(-1))], tensors: [] }), /not a valid u32/);
    await assert.rejects(writeGguf(path, { metadata: [kv('x', gv.u8(1)), kv('x', gv.u8(2))], tensors: [] }), /duplicate GGUF key/);
    await assert.rejects(writeGguf(path, { metadata: [kv('general.alignment', gv.u32(24))], tensors: [] }), /power of two/);
    await assert.rejects(writeGguf(path, { metadata: [], tensors: [{ ...first, name: 'x'.repeat(64) }] }), /1\.\.63 bytes/);
  });
});

describe('f16 conversion', () => {
  test('known values, rounding to nearest even, specials', () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.1, 0x2e66],
      [65504, 0x7bff], // largest finite half
      [65520, 0x7c00], // rounds up to infinity
      [1e9, 0x7c00],
      [Infinity, 0x7c00],
      [-Infinity, 0xfc00],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // tie between 0 and 2^-24: even wins
      [1.5 * 2 ** -25, 0x0001],
      [1 + 2 ** -11, 0x3c00], // tie: keep even mantissa
      [1 + 3 * 2 ** -11, 0x3c02], // tie: round up to even
      [1 + 2 ** -10, 0x3c01],
    ];
    for (const [value, bits] of cases) assert.equal(f32ToF16(value), bits, `f32ToF16(${value})`);
    assert.equal(f32ToF16(NaN) & 0x7c00, 0x7c00);
    assert.notEqual(f32ToF16(NaN) & 0x03ff, 0);
  });

  test('f16ToF32 inverts exactly representable values', () => {
    for (const v of [0, 1, -2, 0.5, 65504, 2 ** -14, 2 ** -24, 3 * 2 ** -20, 1 + 2 ** -10]) {
      assert.equal(f16ToF32(f32ToF16(v)), v);
    }
    assert.equal(f16ToF32(0x7c00), Infinity);
    assert.ok(Number.isNaN(f16ToF32(0x7e00)));
  });
});

describe('gguf reader errors', () => {
  async function corrupt(name: string, edit: (b: Buffer) => Buffer): Promise<string> {
    const source = await readFile(await writeSample(`${name}.src.gguf`));
    const path = join(dir, `${name}.gguf`);
    await writeFile(path, edit(Buffer.from(source)));
    return path;
  }

  async function expectError(path: string, pattern: RegExp): Promise<void> {
    await assert.rejects(readGgufInfo(path), (e: unknown) => {
      assert.ok(e instanceof GgufFormatError, `expected GgufFormatError, got ${String(e)}`);
      assert.ok(e.message.startsWith(`${path}: `), `message names the file: ${e.message}`);
      assert.ok(!e.message.includes('\n'), 'one line');
      assert.match(e.message, pattern);
      return true;
    });
  }

  /** Position of a tensor's info record (just after its name). */
  function tensorInfoAt(b: Buffer, name: string): number {
    const needle = Buffer.concat([Buffer.from([name.length, 0, 0, 0, 0, 0, 0, 0]), Buffer.from(name)]);
    const at = b.lastIndexOf(needle);
    assert.ok(at > 0);
    return at + needle.length;
  }

  test('wrong magic', async () => {
    const path = await corrupt('magic', (b) => (b.write('GGML', 0, 'latin1'), b));
    await expectError(path, /not a GGUF file \(magic "GGML", expected "GGUF"\)/);
  });

  test('tiny file', async () => {
    const path = join(dir, 'tiny.gguf');
    await writeFile(path, 'GGUF');
    await expectError(path, /not a GGUF file \(only 4 bytes\)/);
  });

  test('unsupported version', async () => {
    await expectError(await corrupt('version', (b) => (b.writeUInt32LE(99, 4), b)), /unsupported GGUF version 99/);
    await expectError(await corrupt('v1', (b) => (b.writeUInt32LE(1, 4), b)), /version 1 is no longer supported/);
  });

  test('absurd counts', async () => {
    await expectError(await corrupt('counts', (b) => (b.writeBigUInt64LE(1n << 40n, 16), b)), /absurd counts/);
  });

  test('string running past the end of the file', async () => {
    // First key's length field sits right after the 24-byte header.
    const path = await corrupt('string', (b) => (b.writeBigUInt64LE(1n << 32n, 24), b));
    await expectError(path, /key of metadata entry 0 at offset 24 \(4294967296 bytes\) runs past the end of the file/);
  });

  test('array running past the end of the file', async () => {
    const path = await corrupt('array', (b) => {
      const at = b.indexOf(Buffer.from('t.strings')) + 't.strings'.length + 8; // skip value type and item type
      b.writeBigUInt64LE(1n << 40n, at);
      return b;
    });
    await expectError(path, /array "t\.strings" .* claims 1099511627776 items, which runs past the end of the file/);
  });

  test('truncated tensor data', async () => {
    const path = await corrupt('truncated', (b) => b.subarray(0, b.length - 30));
    await expectError(path, /truncated: tensor c needs bytes up to \d+ but the file has \d+/);
  });

  test('unknown ggml type', async () => {
    const path = await corrupt('type', (b) => (b.writeUInt32LE(77, tensorInfoAt(b, 'b.weight') + 4 + 2 * 8), b));
    await expectError(path, /tensor "b\.weight" has unknown ggml type 77/);
  });

  test('unaligned and out-of-order offsets', async () => {
    const offsetAt = (b: Buffer): number => tensorInfoAt(b, 'b.weight') + 4 + 2 * 8 + 4;
    await expectError(await corrupt('unaligned', (b) => (b.writeBigUInt64LE(4n, offsetAt(b)), b)), /offset 4 is not aligned to 32/);
    await expectError(await corrupt('order', (b) => (b.writeBigUInt64LE(64n, offsetAt(b)), b)), /has offset 64, expected 32/);
  });

  test('too many dimensions', async () => {
    const path = await corrupt('dims', (b) => (b.writeUInt32LE(5, tensorInfoAt(b, 'a')), b));
    await expectError(path, /tensor "a" has 5 dimensions/);
  });
});

describe('synthetic models', () => {
  test('vocabularies have unique tokens and the documented layout', () => {
    for (const vocab of [makeVocab(), makeAltVocab()]) {
      assert.equal(new Set(vocab.tokens).size, vocab.tokens.length);
      assert.deepEqual(vocab.tokens.slice(0, 3), ['<unk>', '<s>', '</s>']);
      assert.equal(vocab.tokens[3 + 0x0a], '<0x0A>');
      assert.equal(vocab.tokenTypes[3 + 255], TokenType.BYTE);
      assert.equal(vocab.tokens[vocab.eot], '<|end|>');
      assert.equal(vocab.tokenTypes[vocab.eot], TokenType.CONTROL);
    }
    // llama.cpp treats drafts whose vocab size differs by more than 128 as incompatible.
    assert.ok(makeVocab().tokens.length - makeAltVocab().tokens.length > 128);
  });

  test('generation is deterministic and cached', async () => {
    const logs: string[] = [];
    const a = await makeModels(join(dir, 'set-a'), { onLog: (l) => logs.push(l) });
    const b = await makeModels(join(dir, 'set-b'));
    const names = Object.keys(SYNTHETIC_MODELS) as (keyof typeof SYNTHETIC_MODELS)[];
    assert.deepEqual(Object.keys(a).sort(), [...names].sort());
    const sha = async (p: string): Promise<string> =>
      createHash('sha256')
        .update(await readFile(p))
        .digest('hex');
    for (const name of names) assert.equal(await sha(a[name]), await sha(b[name]), name);

    assert.ok(logs.every((l) => l.startsWith('generated ')));
    const again: string[] = [];
    await makeModels(join(dir, 'set-a'), { onLog: (l) => again.push(l) });
    assert.deepEqual(
      again,
      names.map((n) => `cached ${n}`),
    );
  });

  test('generated models carry the keys llama.cpp requires', async () => {
    const set = await makeModels(join(dir, 'set-a'));
    const target = await readGgufInfo(set['target.gguf']);
    assert.equal(getString(target, 'general.architecture'), 'llama');
    assert.equal(getNumber(target, 'llama.rope.dimension_count'), 32);
    assert.equal(getArray(target, 'tokenizer.ggml.token_type').itemType, 'i32');
    assert.equal(getNumber(target, 'tokenizer.ggml.eot_token_id'), makeVocab().eot);
    assert.ok(target.tensors.some((t) => t.name === 'blk.3.ffn_down.weight'));

    const hybrid = await readGgufInfo(set['hybrid-mtp.gguf']);
    assert.equal(getString(hybrid, 'general.architecture'), 'qwen35');
    assert.equal(getNumber(hybrid, 'qwen35.block_count'), 5);
    assert.deepEqual(getArray(hybrid, 'qwen35.rope.dimension_sections').value, [3, 3, 2, 0]);
    assert.deepEqual(hybrid.tensors.find((t) => t.name === 'blk.4.nextn.eh_proj.weight')?.shape, [256, 128]);
    assert.ok(hybrid.tensors.some((t) => t.name === 'blk.0.ssm_a'));
    assert.ok(!hybrid.tensors.some((t) => t.name === 'blk.1.ssm_a'));

    const bad = await readGgufInfo(set['draft-badvocab.gguf']);
    assert.notEqual(getArray(bad, 'tokenizer.ggml.tokens').value.length, getArray(target, 'tokenizer.ggml.tokens').value.length);
  });
});
