// The CI link check's reading of ldd: unresolved or out-of-folder libraries fail, the NVIDIA
// driver and CUDA runtime are only reported.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { judge, parseLdd } from '../../scripts/ldd-report.js';

const LDD = `	linux-vdso.so.1 (0x00007ffd)
	libggml-base.so => /w/build/addon-cuda/libggml-base.so (0x00007f01)
	libcudart.so.13 => /usr/local/cuda-13.0/lib/libcudart.so.13 (0x00007f02)
	libcublas.so.13 => not found
	libcuda.so.1 => not found
	libstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f03)
	/lib64/ld-linux-x86-64.so.2 (0x00007f04)
`;

describe('ldd report', () => {
  test('parses resolved and missing entries', () => {
    assert.deepEqual(parseLdd(LDD), [
      { name: 'libggml-base.so', path: '/w/build/addon-cuda/libggml-base.so' },
      { name: 'libcudart.so.13', path: '/usr/local/cuda-13.0/lib/libcudart.so.13' },
      { name: 'libcublas.so.13', path: null },
      { name: 'libcuda.so.1', path: null },
      { name: 'libstdc++.so.6', path: '/lib/x86_64-linux-gnu/libstdc++.so.6' },
    ]);
  });

  test('the driver and CUDA runtime are reported, not failed', () => {
    const v = judge('libggml-cuda.so', '/w/build/addon-cuda', parseLdd(LDD));
    assert.deepEqual(v.problems, []);
    assert.deepEqual(
      v.cuda.map((e) => e.name),
      ['libcudart.so.13', 'libcublas.so.13', 'libcuda.so.1'],
    );
  });

  test('anything else unresolved fails, and our libraries must come from the folder', () => {
    const v = judge('power.node', '/w/build/addon-cuda', [
      { name: 'libllama.cuda.v0.4.0.so', path: '/w/node_modules/x/libllama.cuda.v0.4.0.so' },
      { name: 'libfoo.so.2', path: null },
    ]);
    assert.deepEqual(v.problems, [
      'libllama.cuda.v0.4.0.so => /w/node_modules/x/libllama.cuda.v0.4.0.so (outside /w/build/addon-cuda: the folder is not self-contained)',
      'libfoo.so.2 => not found',
    ]);
  });
});
