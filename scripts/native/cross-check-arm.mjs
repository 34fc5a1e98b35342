// Compiles Power's patched ggml CPU backend (the source build/llama.cpp holds, our patches
// applied: scripts/build-native.mjs) for aarch64 with Debian's cross compiler, as a native arm64
// build would configure it (llamafile off, repack on, no OpenMP) and for a CPU with dot
// products, FP16 and i8mm, so that the NEON paths of the kernels our patches touch compile
// (repack, flash attention, the IQ panel's switch). It proves they build, not that they are
// batch-invariant: a CPU build for arm64 claims nothing (docs/exactness.md, "Other CPU
// architectures") until power-kernel-rows passes on such a machine.
//
//   node scripts/native/cross-check-arm.mjs [--jobs N]
//
// Needs `g++-aarch64-linux-gnu` (apt-get install g++-aarch64-linux-gnu) and a built cpu flavour
// (npm run build:native). Builds into build/cross-arm64; prints the library it made.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({ options: { jobs: { type: 'string', default: String(cpus().length) } } });
const fail = (message) => {
  console.error(`cross-check-arm: ${message}`);
  process.exit(1);
};

const src = join(root, 'build', 'llama.cpp');
if (!existsSync(join(src, '.power-release'))) fail('build/llama.cpp (the patched source) is missing: npm run build:native');
for (const tool of ['aarch64-linux-gnu-gcc', 'aarch64-linux-gnu-g++']) {
  if (spawnSync(tool, ['--version']).status !== 0) fail(`${tool} is missing: apt-get install g++-aarch64-linux-gnu`);
}
const build = join(root, 'build', 'cross-arm64');
const defs = {
  CMAKE_SYSTEM_NAME: 'Linux',
  CMAKE_SYSTEM_PROCESSOR: 'aarch64',
  CMAKE_C_COMPILER: 'aarch64-linux-gnu-gcc',
  CMAKE_CXX_COMPILER: 'aarch64-linux-gnu-g++',
  CMAKE_BUILD_TYPE: 'Release',
  BUILD_SHARED_LIBS: 'ON',
  GGML_NATIVE: 'OFF',
  GGML_CPU_ARM_ARCH: 'armv8.2-a+dotprod+fp16+i8mm',
  GGML_LLAMAFILE: 'OFF',
  GGML_CPU_REPACK: 'ON',
  GGML_OPENMP: 'OFF',
  LLAMA_BUILD_TESTS: 'OFF',
  LLAMA_BUILD_EXAMPLES: 'OFF',
  LLAMA_BUILD_TOOLS: 'OFF',
  LLAMA_BUILD_SERVER: 'OFF',
  LLAMA_CURL: 'OFF',
  LLAMA_OPENSSL: 'OFF',
};
const configure = ['-S', src, '-B', build, ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)];
if (spawnSync('ninja', ['--version']).status === 0) configure.push('-G', 'Ninja');
for (const args of [configure, ['--build', build, '--target', 'ggml-cpu', '-j', values.jobs]]) {
  const r = spawnSync('cmake', args, { stdio: 'inherit' });
  if (r.status !== 0) fail(`cmake ${args.slice(0, 2).join(' ')} failed`);
}
const lib = join(build, 'bin', 'libggml-cpu.so');
if (!existsSync(lib)) fail(`the build made no ${lib}`);
// the ELF header's e_machine: 183 is AArch64
const machine = readFileSync(lib).readUInt16LE(18);
if (machine !== 183) fail(`${lib} is not an AArch64 library (ELF machine ${machine})`);
console.log(`cross-check-arm: ${lib}: AArch64, the patched CPU backend compiles for ${defs.GGML_CPU_ARM_ARCH}`);
