// The writer's F16, Q8_0 and Q4_0 block layouts (ggml-quants.c reference quantizers), checked
// byte by byte on hand-made blocks, by their error bound on random data, and through a written
// file read back by our GGUF reader. test/model/quantized-models.test.ts loads them in llama.cpp.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { decodeData, encodeData, roundTrip, type GgufDataType } from '../../tools/gguf/quantize.js';
import { readGgufInfo } from '../../app/gguf/reader.js';
import { gv, kv, type GgufModel } from '../../app/gguf/types.js';
import { writeGguf } from '../../tools/gguf/writer.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-quant-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function randomData(n: number, seed: number): Float32Array {
  let s = seed;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * (1 + (i % 7));
  }
  return out;
}

describe('block formats', () => {
  test('Q4_0: the value of largest magnitude maps to -8, byte j holds elements j (low) and j+16 (high)', () => {
    const x = new Float32Array(32);
    for (let j = 0; j < 16; j++) {
      x[j] = j - 8; // x[0] = -8: d = -8 / -8 = 1
      x[16 + j] = 7 - j;
    }
    const bytes = encodeData('q4_0', x);
    assert.equal(bytes.length, 18);
    assert.equal(bytes[0]! | (bytes[1]! << 8), 0x3c00, 'scale 1.0 as f16');
    for (let j = 0; j < 16; j++) assert.equal(bytes[2 + j], j | ((15 - j) << 4), `byte ${j}`);
    assert.deepEqual(decodeData('q4_0', bytes, 32), x);
  });

  test('Q8_0: scale amax/127 as f16, then round-half-away-from-zero of x/scale', () => {
    const x = new Float32Array(32);
    for (let j = 0; j < 32; j++) x[j] = (j - 16) * 0.25; // amax 4 at j = 0
    const bytes = encodeData('q8_0', x);
    assert.equal(bytes.length, 34);
    const d = decodeData('f16', bytes.subarray(0, 2), 1)[0]!;
    assert.ok(Math.abs(d - 4 / 127) < 1e-5);
    const q = new Int8Array(bytes.buffer, bytes.byteOffset + 2, 32);
    assert.equal(q[0], -127);
    assert.equal(q[16], 0);
    assert.equal(q[17], 8); // 0.25 * 127 / 4 = 7.94 -> 8
    const back = decodeData('q8_0', bytes, 32);
    for (let j = 0; j < 32; j++) assert.ok(Math.abs(back[j]! - x[j]!) <= d / 2 + 1e-6);
  });

  test('round trips stay within half a step (Q8_0, F16) or one step (Q4_0: the top code is clamped), plus the rounding of the f16 scale', () => {
    const x = randomData(32 * 64, 7);
    for (const type of ['f16', 'q8_0', 'q4_0'] as const) {
      const back = roundTrip(type, x);
      for (let b = 0; b < x.length; b += 32) {
        const amax = Math.max(...Array.from(x.subarray(b, b + 32), Math.abs));
        // plus the scale's own f16 rounding (relative 2^-11) times the largest code
        const bound =
          type === 'f16' ? amax * 2 ** -11 : type === 'q8_0' ? (amax / 127) * (0.5 + 127 * 2 ** -11) : (amax / 8) * (1 + 8 * 2 ** -11);
        for (let j = b; j < b + 32; j++) {
          assert.ok(Math.abs(back[j]! - x[j]!) <= bound * 1.001 + 1e-7, `${type} element ${j}: ${x[j]} -> ${back[j]}`);
        }
      }
    }
  });

  test('an all-zero block has scale ±0 and decodes to zeros', () => {
    // Q4_0's scale is max / -8 = -0 there, as in ggml
    for (const type of ['q8_0', 'q4_0'] as const) assert.ok(roundTrip(type, new Float32Array(64)).every((v) => v === 0));
  });
});

describe('writer with quantized tensors', () => {
  const meta = [kv('general.architecture', gv.str('llama')), kv('general.alignment', gv.u32(32))];

  test('each type lands in the file with its ggml type id, size and bytes', async () => {
    const types: GgufDataType[] = ['f32', 'f16', 'q8_0', 'q4_0'];
    const data = randomData(64 * 3, 11);
    const model: GgufModel = {
      metadata: meta,
      tensors: types.map((type) => ({ name: `t.${type}`, shape: [64, 3], type, data: () => data })),
    };
    const path = join(dir, 'types.gguf');
    await writeGguf(path, model);
    const info = await readGgufInfo(path);
    const file = await readFile(path);
    const want = { f32: ['F32', 768], f16: ['F16', 384], q8_0: ['Q8_0', 204], q4_0: ['Q4_0', 108] } as const;
    for (const type of types) {
      const t = info.tensors.find((x) => x.name === `t.${type}`)!;
      assert.deepEqual([t.typeName, t.byteSize], want[type]);
      const start = info.dataOffset + t.offset;
      const bytes = new Uint8Array(file.subarray(start, start + t.byteSize));
      assert.deepEqual(decodeData(type, bytes, data.length), roundTrip(type, data));
    }
  });

  test('a quantized tensor whose rows do not fill 32-element blocks is refused', async () => {
    const model: GgufModel = { metadata: meta, tensors: [{ name: 'bad', shape: [48, 2], type: 'q4_0', data: () => new Float32Array(96) }] };
    await assert.rejects(writeGguf(join(dir, 'bad.gguf'), model), /q4_0 needs ne0 to be a multiple of 32 \(got 48\)/);
  });
});
