// The default engine's CPU matrix kernels compute a row of a batch exactly as they compute the
// row alone, for every weight type, in the repacked and the plain weight buffers, on one and
// two threads (native/tools/kernel_rows.cpp; docs/exactness.md, matrix kernels). As released,
// the repacked Q4_K gemm, llamafile's tinyBLAS for F32/F16/BF16/IQ4_NL and the IQ panel summed
// otherwise, so a speculative verify row left the one-row decode it stands for. On a CPU with
// AVX-512 VNNI the Q8_0, Q4_0, Q5_0 and IQ4_NL batches run the paired tinyBLAS kernel of
// ggml-cpu-llamafile-q0-pairs.patch, a faster kernel that must keep the same sums.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { addonDir } from '../../app/engine/build-info.js';

const tool = join(addonDir('cpu'), 'power-kernel-rows');

function kernelRows(args: string[]): { code: number | null; lines: string[]; stderr: string } {
  const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, lines: r.stdout.trim().split('\n'), stderr: r.stderr };
}

describe('CPU matrix kernels: a row of a batch equals the row alone', () => {
  for (const threads of ['1', '2']) {
    test(`every weight type, batches of 2-17 and 30-69 rows, ${threads} thread(s)`, () => {
      const r = kernelRows(['--threads', threads]);
      const differing = r.lines.filter((l) => !l.endsWith(': ok'));
      assert.deepEqual(differing, [], r.stderr);
      assert.equal(r.code, 0, r.stderr);
      // the check ran: every type in a plain buffer at three heights, and the repacked layouts
      for (const type of ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K', 'iq4_nl', 'iq4_xs', 'iq2_s']) {
        assert.equal(r.lines.filter((l) => l.startsWith(`${type} plain `)).length, 3, `${type}: ${r.lines.join('\n')}`);
      }
      if (process.arch === 'x64')
        assert.ok(
          r.lines.some((l) => l.startsWith('q4_K repacked 640x')),
          r.lines.join('\n'),
        );
    });
  }

  test('refuses an unknown weight type with a usage error', () => {
    const r = kernelRows(['--types', 'q4_Z']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown type q4_Z/);
  });
});
