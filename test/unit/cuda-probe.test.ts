// Why --device cuda fails, decided from what the system loader says (a fake loader here).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { DeviceInfo } from '../../app/contract/engine-types.js';
import { cudaRuntimeLibraries, probeCuda, type CudaProbeInput } from '../../app/engine-host/cuda-probe.js';

const CPU: DeviceInfo = { name: 'CPU', description: 'AMD EPYC', type: 'cpu', backend: 'CPU', freeBytes: 1, totalBytes: 1 };
const GPU: DeviceInfo = { name: 'CUDA0', description: 'NVIDIA H200', type: 'gpu', backend: 'CUDA', freeBytes: 2, totalBytes: 3 };

function loader(missing: string[], backend: string | null = null) {
  return (lib: string) => {
    if (lib.endsWith('libggml-cuda.so') || lib.endsWith('ggml-cuda.dll')) return backend;
    return missing.includes(lib) ? `${lib}: cannot open shared object file: No such file or directory` : null;
  };
}

const input = (over: Partial<CudaProbeInput>): CudaProbeInput => ({
  platform: 'linux',
  addonDir: '/x/build/addon-cuda',
  cudaMajor: 13,
  devices: [CPU],
  loadLog: '',
  tryLoad: loader([]),
  ...over,
});

describe('CUDA probe', () => {
  test('a registered CUDA device: no reason', () => {
    const s = probeCuda(input({ devices: [CPU, GPU] }));
    assert.equal(s.devices, 1);
    assert.equal(s.reason, null);
    assert.deepEqual(
      s.libraries.map((l) => l.error),
      [null, null, null, null],
    );
  });

  test('no driver comes first, the other missing libraries follow', () => {
    const s = probeCuda(
      input({ tryLoad: loader(['libcuda.so.1', 'libcublas.so.13', 'libcublasLt.so.13'], 'libcublas.so.13: cannot open') }),
    );
    assert.equal(
      s.reason,
      'no NVIDIA driver (libcuda.so.1: cannot open shared object file: No such file or directory); also missing: libcublas.so.13, libcublasLt.so.13',
    );
    assert.equal(s.backendError, 'libcublas.so.13: cannot open');
  });

  test('a driver without the CUDA 13 runtime says which libraries and where to put them', () => {
    const s = probeCuda(input({ tryLoad: loader(['libcudart.so.13'], 'libcudart.so.13: cannot open') }));
    assert.match(
      s.reason!,
      /^the CUDA 13 libraries libcudart\.so\.13 cannot be loaded \(libcudart\.so\.13: cannot open .*\); install the CUDA 13 runtime and cuBLAS or put their folder on LD_LIBRARY_PATH$/,
    );
  });

  test('everything loads but the backend itself does not: its own loader error', () => {
    const s = probeCuda(input({ tryLoad: loader([], '/x/build/addon-cuda/libggml-cuda.so: undefined symbol: foo') }));
    assert.equal(s.reason, 'libggml-cuda.so cannot be loaded: /x/build/addon-cuda/libggml-cuda.so: undefined symbol: foo');
  });

  test('it loads and finds no device: what ggml logged', () => {
    const s = probeCuda(input({ loadLog: 'ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected' }));
    assert.equal(
      s.reason,
      'the CUDA backend loads but reports no CUDA device (ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected)',
    );
  });

  test('Windows names the DLLs and PATH', () => {
    assert.deepEqual(
      cudaRuntimeLibraries('win32', 13).map((l) => l.name),
      ['nvcuda.dll', 'cublas64_13.dll', 'cublasLt64_13.dll'],
    );
    const s = probeCuda(
      input({
        platform: 'win32',
        addonDir: 'C:\\p',
        tryLoad: (l) => (l === 'cublas64_13.dll' ? 'The specified module could not be found.' : null),
      }),
    );
    assert.match(
      s.reason!,
      /cublas64_13\.dll: The specified module could not be found\.\); .* on PATH \(Windows looks for them there, not beside ggml-cuda\.dll\)$/,
    );
  });
});
