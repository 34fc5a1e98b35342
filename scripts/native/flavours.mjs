// The addon flavours and where their llama.cpp libraries come from. A flavour is one build of
// the addon against one set of llama.cpp libraries; the engine host loads exactly one.
//   prebuilt: the @node-llama-cpp/<platform><packageSuffix> package of node-llama-cpp@3.21.1
//   source:   llama.cpp built here from the release's own source bundle (build/llama-<name>)
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// batchInvariant: a verify pass computes each row exactly as a one-row decode does
// (docs/exactness.md) with Flash Attention off; flashAttnBatchInvariant: with it on (each claimed
// apart); expertsBatchInvariant: for a Mixture-of-Experts model's expert products too. Measured
// for the CPU routes, on lavapipe for Vulkan and on an H200 for cuda-src (bench/RESULTS-gpu.md);
// the prebuilt CUDA package keeps the released kernels, which are not. The source route's CPU
// Flash Attention is invariant through scripts/native/patches/ggml-cpu-flash-attn-one-path.patch:
// as released, ggml splits a one-row decode's KV range across threads once the view reaches
// 512 cells and tiles batches of 64 rows or more, so a row's sums depend on the batch it is in
// (docs/exactness.md). invariantVerifyRows: the most rows a verify pass may have for these claims
// to hold (K + 1; absent: any); the GPU patches compute up to that many rows one by one and leave
// wider batches, a prompt's, to the released kernels.
export const FLAVOURS = {
  // the default: llama.cpp from the bundle with our batch-invariance patches (scripts/native/llama-from-source.mjs)
  cpu: { route: 'source', libSuffix: '', gpu: null, batchInvariant: true, flashAttnBatchInvariant: true, expertsBatchInvariant: true },
  // node-llama-cpp's prebuilt CPU libraries: llamafile's sgemm makes them not batch-invariant
  'cpu-prebuilt': { route: 'prebuilt', packageSuffix: '', libSuffix: '', gpu: null, batchInvariant: false, flashAttnBatchInvariant: false, expertsBatchInvariant: false },
  // the CUDA package names its libraries libllama.cuda.v0.4.0.so / libggml.cuda.v0.4.0.so and
  // was built against CUDA 13 (its libggml-cuda.so needs libcudart.so.13, libcublas.so.13)
  cuda: {
    route: 'prebuilt',
    packageSuffix: '-cuda',
    libSuffix: '.cuda',
    gpu: 'cuda',
    cudaMajor: 13,
    batchInvariant: false,
    flashAttnBatchInvariant: false,
    expertsBatchInvariant: false,
  },
  // ggml-cuda-verify-rows-as-decode.patch: with Flash Attention on (the CUDA default) every
  // row is computed as its decode where a one-row decode takes the vector attention kernel, which
  // depends on the device's compute capability and the model's heads (app/engine/cuda-invariance.ts);
  // without it, attention past 512 cells keeps the released batched path, and expert products
  // (mul_mat_id) keep theirs
  'cuda-src': {
    route: 'source',
    libSuffix: '',
    gpu: 'cuda',
    batchInvariant: false,
    flashAttnBatchInvariant: 'by-compute-capability',
    expertsBatchInvariant: false,
    // GGML_CUDA_INVARIANT_MAX_ROWS in the patch
    invariantVerifyRows: 32,
    // set in the environment, it turns the patch off (the released kernels, for measuring its cost)
    variantEnv: 'GGML_CUDA_BATCH_VARIANT',
  },
  // llama.cpp from the bundle with GGML_VULKAN=ON (built by npm install where glslc and the
  // Vulkan headers are installed): NVIDIA without a CUDA toolkit, AMD and Intel GPUs, and
  // Mesa's lavapipe, the CPU-type Vulkan device the tests run on
  // batch-invariant with Flash Attention off through ggml-vulkan-verify-rows-as-decode.patch
  // (docs/exactness.md); Flash Attention's Vulkan kernels are not covered (they crashed lavapipe)
  vulkan: {
    route: 'source',
    libSuffix: '',
    gpu: 'vulkan',
    batchInvariant: true,
    flashAttnBatchInvariant: false,
    expertsBatchInvariant: false,
    // power_vk_invariant_max_rows in the patch
    invariantVerifyRows: 32,
    variantEnv: 'GGML_VK_BATCH_VARIANT',
  },
};

export function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

export function platformKey() {
  const os = { linux: 'linux', win32: 'win', darwin: 'mac' }[process.platform];
  if (!os) fail(`unsupported platform ${process.platform}`);
  return `${os}-${process.arch}`;
}

/** A package's folder, found the way Node finds packages (works whatever its "exports"). */
export function packageDir(root, name) {
  const require = createRequire(join(root, 'package.json'));
  for (const base of require.resolve.paths(name) ?? []) {
    if (existsSync(join(base, name, 'package.json'))) return join(base, name);
  }
  return null;
}

/** The folder of prebuilt libraries of a prebuilt flavour, or null when its package is absent. */
export function prebuiltLibDir(root, key, flavour) {
  const name = `@node-llama-cpp/${key}${flavour.packageSuffix}`;
  const dir = packageDir(root, name);
  return dir ? join(dir, 'bins', `${key}${flavour.packageSuffix}`) : null;
}
