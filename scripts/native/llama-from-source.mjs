// Builds llama.cpp's shared libraries from the release's source (build/llama.cpp) with cmake:
// the default, batch-invariant CPU engine (flavour cpu), or CUDA for the user's own toolkit and
// chosen GPU architectures (cuda-src). Finished builds are cached by their inputs. The layout
// matches the prebuilt packages closely enough that the same addon CMakeLists links it:
// dynamic backends (GGML_BACKEND_DL, so a missing CUDA driver never stops the CPU backend
// from loading), no OpenMP (ggml's own thread pool, as in the prebuilt libraries), unversioned sonames and $ORIGIN rpaths (the folder
// can be copied next to power.node and still find itself).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cpuBackendFeatures, putsWeightsInAmx } from './cpu-features.mjs';
import { installedCudaToolkit } from './cuda-toolkit.mjs';
import { fail } from './flavours.mjs';
import { MINGW_PACKAGES, MINGW_TOOLCHAIN, WIN_TARGET, glibcMathObject, missingMingwPieces, mingwCompilerVersion } from './windows-cross.mjs';

const PATCH_DIR = join(dirname(fileURLToPath(import.meta.url)), 'patches');

/**
 * Our changes to the release's source, applied in name order to the clone the from-source
 * flavours build (the prebuilt ones run the release as shipped). Each patch says why in its
 * own comment; docs/exactness.md lists them. `hash` changes with any patch, and so does the
 * build's cache key.
 */
export function sourcePatches(defs = null, target = null) {
  const all = existsSync(PATCH_DIR) ? readdirSync(PATCH_DIR).filter((f) => f.endsWith('.patch')).sort() : [];
  // a backend's patches (ggml-vulkan-*, ggml-cuda-*) change only the builds that compile that
  // backend, and a toolchain's (*-mingw-*) only the builds made with it: with `defs`, the others
  // leave the build's hash (and its cache key) alone
  const compiled = (name) => {
    if (!defs) return true;
    if (name.includes('-mingw-')) return target === WIN_TARGET;
    const backend = /^ggml-(vulkan|cuda)-/.exec(name)?.[1];
    return !backend || defs[`GGML_${backend.toUpperCase()}`] === 'ON';
  };
  const names = all.filter(compiled);
  const hash = createHash('sha256');
  for (const name of names) hash.update(name).update('\0').update(readFileSync(join(PATCH_DIR, name))).update('\0');
  return { names, paths: names.map((n) => join(PATCH_DIR, n)), hash: hash.digest('hex').slice(0, 16) };
}

/** An nvcc that runs: its path, CUDA version and (for the cached PyPI toolkit) the toolkit's folder. */
function nvccAt(path, toolkit = null) {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const m = /release (\d+)\.(\d+)/.exec(out);
    return m ? { path, major: Number(m[1]), version: `${m[1]}.${m[2]}`, toolkit } : null;
  } catch {
    return null;
  }
}

/**
 * The toolkit that `node scripts/native/cuda-toolkit.mjs install` put into the cache from
 * PyPI's NVIDIA wheels (`toolkit` is its folder, for cmake's CUDAToolkit_ROOT), or null.
 */
function cachedToolkitNvcc() {
  const pip = installedCudaToolkit(llamaCacheRoot());
  return pip ? nvccAt(pip.nvcc, pip.dir) : null;
}

/**
 * nvcc from CUDACXX, PATH or the usual install folders, else the cached PyPI toolkit's; null
 * when there is none.
 */
export function findNvcc() {
  const candidates = [process.env.CUDACXX, 'nvcc'];
  const roots = process.platform === 'win32' ? [] : ['/usr/local/cuda/bin'];
  if (process.platform !== 'win32' && existsSync('/usr/local')) {
    for (const d of readdirSync('/usr/local').filter((d) => /^cuda-\d+/.test(d)).sort().reverse()) {
      roots.push(join('/usr/local', d, 'bin'));
    }
  }
  candidates.push(...roots.map((r) => join(r, 'nvcc')));
  for (const c of candidates.filter(Boolean)) {
    const found = nvccAt(c);
    if (found) return found;
  }
  return cachedToolkitNvcc();
}

/**
 * What ggml's CUDA build needs besides nvcc: cuBLAS headers and library, and the driver API
 * library (the real libcuda or the toolkit's stub). Asks nvcc where its toolkit is (it may be
 * a wrapper script). Returns the missing pieces, so a bare toolkit fails before cmake does.
 */
function missingCudaPieces(nvcc) {
  // the dry run prints its plan ("#$ TOP=...", "#$ INCLUDES=...") on stderr
  const probe = spawnSync(nvcc.path, ['--dryrun', '-x', 'cu', '-c', '/dev/null', '-o', join(tmpdir(), 'power-nvcc-probe.o')], {
    encoding: 'utf8',
  });
  const out = `${probe.stdout ?? ''}${probe.stderr ?? ''}`;
  const includes = [...out.matchAll(/-I"?([^"\s]+)"?/g)].map((m) => m[1]);
  const topRaw = /TOP=(\S+)/.exec(out)?.[1];
  if (!topRaw || includes.length === 0) return { top: null, missing: [] }; // unknown layout: let cmake decide
  const top = resolve(topRaw);
  const libDirs = includes.map((i) => join(i, '..', 'lib')).concat([join(top, 'lib64'), join(top, 'lib')]);
  const has = (dirs, file) => dirs.some((d) => existsSync(join(d, file)));
  const missing = [];
  if (!has(includes, 'cublas_v2.h')) missing.push('cuBLAS headers (cublas_v2.h)');
  if (!has(libDirs, 'libcublas.so')) missing.push('cuBLAS library (libcublas.so)');
  const driver = has(libDirs.map((d) => join(d, 'stubs')), 'libcuda.so') || has(['/usr/lib/x86_64-linux-gnu', '/usr/lib64'], 'libcuda.so');
  if (!driver) missing.push('the driver API library (libcuda.so or the toolkit stub stubs/libcuda.so)');
  return { top, missing };
}

export const VULKAN_PACKAGES = "on Debian and Ubuntu: apt-get install glslc libvulkan-dev spirv-headers; to run on the CPU's Vulkan device, Mesa's lavapipe: mesa-vulkan-drivers";

/**
 * What ggml's Vulkan build needs: the glslc shader compiler, the Vulkan headers and loader
 * library and the SPIR-V headers. Empty when all are there (the build is then part of a plain npm install).
 */
export function missingVulkanPieces() {
  const missing = [];
  try {
    execFileSync('glslc', ['--version'], { stdio: 'ignore' });
  } catch {
    missing.push('the glslc shader compiler');
  }
  const includeDirs = [process.env.VULKAN_SDK && join(process.env.VULKAN_SDK, 'include'), '/usr/include', '/usr/local/include'].filter(Boolean);
  const libDirs = [process.env.VULKAN_SDK && join(process.env.VULKAN_SDK, 'lib'), '/usr/lib/x86_64-linux-gnu', '/usr/lib64', '/usr/lib', '/usr/local/lib'].filter(Boolean);
  const headers = includeDirs.some((d) => existsSync(join(d, 'vulkan', 'vulkan.hpp')));
  const loader = libDirs.some((d) => existsSync(join(d, process.platform === 'win32' ? 'vulkan-1.lib' : 'libvulkan.so')));
  if (!headers || !loader) missing.push('the Vulkan headers and loader library');
  // ggml-vulkan's cmake finds them by their package configuration (the Vulkan SDK ships it on Windows)
  const cmakeDirs = [
    process.env.VULKAN_SDK && join(process.env.VULKAN_SDK, 'share', 'cmake'),
    process.env.VULKAN_SDK && join(process.env.VULKAN_SDK, 'lib', 'cmake'),
    '/usr/share/cmake',
    '/usr/lib/cmake',
    '/usr/lib/x86_64-linux-gnu/cmake',
    '/usr/local/share/cmake',
    '/usr/local/lib/cmake',
  ].filter(Boolean);
  if (process.platform !== 'win32' && !cmakeDirs.some((d) => existsSync(join(d, 'SPIRV-Headers', 'SPIRV-HeadersConfig.cmake')))) {
    missing.push('the SPIR-V headers (their cmake package)');
  }
  return missing;
}

function hasNinja() {
  try {
    execFileSync('ninja', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The cmake definitions of one llama.cpp build. `cpuVariants`:
 *   'native': the CPU backend compiled for this machine's CPU (GGML_NATIVE), the default for a
 *             local CPU build: fastest here, may not run on an older CPU (a CUDA build keeps
 *             ggml's portable CPU backend: dynamic backends exclude GGML_NATIVE);
 *   'all':    one CPU backend per x86 feature level (GGML_CPU_ALL_VARIANTS, loaded at run time
 *             by GGML_BACKEND_DL), for packages that must run on other machines.
 * GGML_LLAMAFILE is ON only on x86: there ggml-cpu-llamafile-every-row.patch makes llamafile's
 * sgemm multiply a lone row as it multiplies the rows of a batch (as released, one row went to
 * vec_dot, which sums in another order: docs/exactness.md, batch invariance). Elsewhere (ARM)
 * nobody checked its kernels, so it stays off and every matmul output is one vec_dot.
 * `target` 'win-x64': for Windows, cross-compiled with mingw-w64 (scripts/native/windows-cross.mjs);
 * null: for this machine.
 */
export function llamaCmakeDefs({ cuda, vulkan = false, cudaArchs, cpuVariants, target = null }) {
  const gpu = cuda || vulkan;
  const native = !gpu && cpuVariants === 'native';
  const defs = {
    CMAKE_BUILD_TYPE: 'Release',
    BUILD_SHARED_LIBS: 'ON',
    // ggml refuses GGML_NATIVE with dynamic backends (its variant scoring needs the explicit
    // feature list), so a native CPU build links its CPU backend into libggml; the GPU builds and
    // the all-variants build load their backends at run time (a machine without the GPU's
    // driver or Vulkan loader still loads the CPU backend)
    GGML_BACKEND_DL: native ? 'OFF' : 'ON',
    GGML_NATIVE: native ? 'ON' : 'OFF',
    GGML_CPU_ALL_VARIANTS: cpuVariants === 'all' ? 'ON' : 'OFF',
    GGML_LLAMAFILE: process.arch === 'x64' ? 'ON' : 'OFF',
    // the CPU weight repacking (interleaved Q4_0, Q4_K, IQ4_NL, MXFP4 blocks on x86 AVX2): a
    // batch is multiplied by a gemm kernel, one row by a gemv kernel. As released the Q4_K gemv
    // summed in another order (on Gemma 3 270M Q4_K_M greedy output left the control at token
    // 25); ggml-cpu-repack-one-order.patch makes every row of a gemm sum as the gemv sums it and
    // keeps the layouts nobody checked (other CPUs than x86) off (docs/exactness.md).
    // Prompts and decodes run on the faster kernels, and a verify row is still a one-row decode
    GGML_CPU_REPACK: 'ON',
    // AMX (our patch's option): with it compiled in (-march=native on a Xeon with AMX, the
    // sapphirerapids variant), ggml-cpu moves quantized weights into its AMX buffer, whose
    // kernels crashed there and multiply a batch and one row differently (docs/exactness.md).
    // Checked after the build on the compiler's own view of each CPU backend (cpu-features.mjs)
    GGML_CPU_AMX: 'OFF',
    // the compile commands let cpu-features.mjs ask the compiler what each CPU backend targets
    CMAKE_EXPORT_COMPILE_COMMANDS: 'ON',
    GGML_OPENMP: 'OFF',
    GGML_CUDA: cuda ? 'ON' : 'OFF',
    LLAMA_BUILD_TESTS: 'OFF',
    LLAMA_BUILD_EXAMPLES: 'OFF',
    LLAMA_BUILD_TOOLS: 'OFF',
    LLAMA_BUILD_SERVER: 'OFF',
    LLAMA_BUILD_APP: 'OFF',
    // libllama-common: common_speculative drives the eagle3/dflash/dspark artifacts and the
    // n-gram families (native/src/proposer_common*.cpp); built without network pieces (the
    // engine never downloads: no OpenSSL, and LLAMA_CURL is gone from this release)
    LLAMA_BUILD_COMMON: 'ON',
    LLAMA_OPENSSL: 'OFF',
    // llama.cpp's RPC backend (docs/devices.md): remote machines' devices join a split
    // (ggml_backend_rpc_add_server) and `power rpc` serves this machine's
    // (ggml_backend_rpc_start_server). One more source file; no RDMA (libibverbs would make
    // the build depend on what the machine has installed)
    GGML_RPC: 'ON',
    GGML_RPC_RDMA: 'OFF',
    CMAKE_PLATFORM_NO_VERSIONED_SONAME: 'ON',
    CMAKE_BUILD_WITH_INSTALL_RPATH: 'ON',
    CMAKE_INSTALL_RPATH: '$ORIGIN',
  };
  if (target) {
    // mingw-w64's math.h defines expf, powf and tanhf inline as the double functions: with those
    // off, every call goes to the float functions the link gives (glibc's: glibcMathObject)
    defs.CMAKE_C_FLAGS = '-D__CRT__NO_INLINE';
    defs.CMAKE_CXX_FLAGS = '-D__CRT__NO_INLINE';
  }
  if (process.platform === 'linux' && !target) {
    // a library loaded into Node calls its own C++ template code: Node's binary exports what it
    // instantiated (Node 22's std::regex among it), built without exceptions, and would
    // otherwise interpose, so a throw there aborts the process instead (docs/setup.md, Node.js)
    defs.CMAKE_SHARED_LINKER_FLAGS = '-Wl,-Bsymbolic-functions';
    defs.CMAKE_MODULE_LINKER_FLAGS = '-Wl,-Bsymbolic-functions';
  }
  if (cuda) {
    // stated, not left to ggml's defaults: the Flash Attention vector kernels for F16, Q4_0,
    // Q8_0 and BF16 KV caches only (ALL_QUANTS compiles every K/V type pair, several times
    // the instances and the build time; the engine's KV cache is llama.cpp's default F16), and
    // no NCCL (found, it would become a run-time dependency of libggml-cuda: the build must not
    // depend on what the machine has installed, as RPC without RDMA)
    defs.GGML_CUDA_FA_ALL_QUANTS = 'OFF';
    defs.GGML_CUDA_NCCL = 'OFF';
  }
  // named only when on: ggml's default is off, and the CPU and CUDA builds keep their cache keys
  if (vulkan) defs.GGML_VULKAN = 'ON';
  if (cuda && cudaArchs) defs.CMAKE_CUDA_ARCHITECTURES = cudaArchs;
  return defs;
}

function commandOutput(cmd, argv) {
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** What a native build is compiled for: the CPU's model and feature flags (Linux). */
function nativeCpuKey() {
  try {
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const model = /^model name\s*:\s*(.*)$/m.exec(text)?.[1] ?? '';
    const flags = /^flags\s*:\s*(.*)$/m.exec(text)?.[1] ?? '';
    return `${model}|${flags}`;
  } catch {
    return `${process.platform}-${process.arch}`;
  }
}

/**
 * The cache key of a build: everything that changes its output. The source commit of the
 * bundle, the cmake definitions, the compilers and cmake, and for a native build the CPU.
 */
export function llamaBuildKey({ srcCommit, defs, nvccVersion, target = null }) {
  const inputs = {
    v: 1,
    srcCommit,
    patches: sourcePatches(defs, target).hash,
    defs,
    cxx: target ? mingwCompilerVersion() : commandOutput(process.env.CXX || 'c++', ['--version']).split('\n')[0],
    cc: target ? mingwCompilerVersion() : commandOutput(process.env.CC || 'cc', ['--version']).split('\n')[0],
    cmake: commandOutput('cmake', ['--version']).split('\n')[0],
    nvcc: nvccVersion ?? null,
    cpu: defs.GGML_NATIVE === 'ON' ? nativeCpuKey() : null,
    platform: `${process.platform}-${process.arch}`,
    // absent for a build for this machine, so that their keys stay what they were
    ...(target ? { target } : {}),
  };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/**
 * Where finished llama.cpp builds are kept, one folder per input hash: $POWER_CACHE_DIR, else
 * $XDG_CACHE_HOME/power, else ~/.cache/power. It lives outside the checkout so that `npm ci`
 * (which starts from a clean node_modules) and a second clone on the same machine reuse it.
 */
export function llamaCacheRoot() {
  if (process.env.POWER_CACHE_DIR) return resolve(process.env.POWER_CACHE_DIR);
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'power');
}

/**
 * Configures and builds llama.cpp, or reuses a finished build of the same inputs. Returns the
 * folder of the built libraries, the seconds it took (0 when cached), the cache key and the
 * CUDA details.
 */
export function buildLlamaFromSource({ srcDir, srcCommit, cuda, vulkan = false, cudaArchs, cpuVariants = 'native', target = null }) {
  if (target && target !== WIN_TARGET) fail(`unknown target '${target}' (known: ${WIN_TARGET})`);
  if (target && (cuda || vulkan)) fail(`the ${target} cross-build is CPU only`);
  if (target) {
    const missing = missingMingwPieces();
    if (missing.length) fail(`the ${target} cross-build needs ${missing.join(' and ')} (${MINGW_PACKAGES})`);
  }
  if (vulkan) {
    const missing = missingVulkanPieces();
    if (missing.length) fail(`the Vulkan flavour needs ${missing.join(' and ')} (${VULKAN_PACKAGES})`);
  }
  let nvcc = cuda ? findNvcc() : null;
  if (cuda && !nvcc) {
    fail(
      '--cuda needs the CUDA toolkit: no nvcc on PATH, in CUDACXX or in /usr/local/cuda*/bin ' +
        "(without one, 'node scripts/native/cuda-toolkit.mjs install' puts CUDA 13.1 from PyPI's NVIDIA wheels into the cache)",
    );
  }
  if (nvcc && process.platform !== 'win32') {
    let { top, missing } = missingCudaPieces(nvcc);
    // an incomplete system toolkit found on PATH or in /usr/local (not one CUDACXX names)
    // gives way to the complete cached one
    const cached = missing.length && !nvcc.toolkit && nvcc.path !== process.env.CUDACXX ? cachedToolkitNvcc() : null;
    if (cached) {
      console.log(`power: the CUDA ${nvcc.version} toolkit in ${top} lacks ${missing.join(', ')}: using ${cached.toolkit}`);
      nvcc = cached;
      ({ top, missing } = missingCudaPieces(nvcc));
    }
    if (missing.length) {
      fail(
        `the CUDA ${nvcc.version} toolkit in ${top} lacks what ggml's CUDA backend links: ${missing.join(', ')} ` +
          `(install the toolkit's cuBLAS and driver development packages, e.g. libcublas-dev-${nvcc.version.replace('.', '-')} and cuda-driver-dev-${nvcc.version.replace('.', '-')}, ` +
          "or 'node scripts/native/cuda-toolkit.mjs install' for CUDA 13.1 from PyPI's NVIDIA wheels)",
      );
    }
  }
  const defs = llamaCmakeDefs({ cuda, vulkan, cudaArchs, cpuVariants, target });
  if (target) {
    // glibc's float functions, linked into every DLL and program ahead of mingw-w64's (an object
    // file on the linker's command line is always linked; its path names its inputs' hash)
    const math = glibcMathObject(llamaCacheRoot());
    for (const k of ['CMAKE_SHARED_LINKER_FLAGS', 'CMAKE_MODULE_LINKER_FLAGS', 'CMAKE_EXE_LINKER_FLAGS']) defs[k] = math;
  }
  const key = llamaBuildKey({ srcCommit, defs, nvccVersion: nvcc?.version, target });
  const buildDir = join(llamaCacheRoot(), `llama-${key}`);
  const libDir = join(buildDir, 'bin');
  const stamp = join(buildDir, 'power-build.json');
  const cudaInfo = { cudaMajor: nvcc?.major ?? null, cudaVersion: nvcc?.version ?? null };
  if (existsSync(stamp)) {
    const done = JSON.parse(readFileSync(stamp, 'utf8'));
    console.log(`power: llama.cpp build ${key} is cached (${libDir}; built in ${done.seconds} s)`);
    // checked when it was built; asking the compiler again needs the source tree it was built
    // from, which a later clone may not have (a stamp from before they were recorded asks anew)
    const cpuBackends = done.cpuBackends !== undefined ? done.cpuBackends : checkedCpuBackends(buildDir);
    return { libDir, seconds: 0, builtSeconds: done.seconds, key, defs, cpuBackends, ...cudaInfo };
  }
  if (nvcc) defs.CMAKE_CUDA_COMPILER = nvcc.path;
  // ggml's find_package(CUDAToolkit) runs before the CUDA language is enabled: point it at the
  // cached toolkit, which is on no search path
  if (nvcc?.toolkit) defs.CUDAToolkit_ROOT = nvcc.toolkit;

  const started = Date.now();
  const generator = hasNinja() ? ['-G', 'Ninja'] : [];
  const what = cuda
    ? `CUDA ${nvcc.version}, architectures ${cudaArchs ?? "ggml's default list"}`
    : vulkan
      ? 'Vulkan'
      : `CPU only, ${cpuVariants === 'all' ? 'all CPU variants' : 'this CPU'}${target ? `, for ${target} (mingw-w64)` : ''}`;
  // the toolchain file's path is not an input of the build (it names the compilers, which are)
  const toolchain = target ? [`-DCMAKE_TOOLCHAIN_FILE=${MINGW_TOOLCHAIN}`] : [];
  console.log(`power: configuring llama.cpp (${what}) in ${buildDir}`);
  // cmake prints its own errors; a failed step ends in one line, not a Node stack trace
  const cmake = (step, argv) => {
    try {
      execFileSync('cmake', argv, { stdio: 'inherit' });
    } catch {
      fail(`llama.cpp ${step} failed (cmake output above; build folder ${buildDir})`);
    }
  };
  mkdirSync(buildDir, { recursive: true });
  cmake('configuration', ['-S', srcDir, '-B', buildDir, ...generator, ...toolchain, ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)]);
  cmake('build', ['--build', buildDir, '--config', 'Release', '--parallel', String(Math.max(1, cpus().length))]);
  const seconds = Math.round((Date.now() - started) / 1000);
  const cpuBackends = checkedCpuBackends(buildDir);
  // written last: only a finished build is ever reused
  writeFileSync(
    stamp,
    JSON.stringify({ key, srcCommit, patches: sourcePatches(defs, target).names, defs, seconds, cpuBackends, builtAt: new Date().toISOString() }, null, 2) +
      '\n',
  );
  console.log(`power: llama.cpp built in ${seconds} s (${libDir})`);
  return { libDir, seconds, builtSeconds: seconds, key, defs, cpuBackends, ...cudaInfo };
}

/**
 * The features each CPU backend of a build was compiled for (cpu-features.mjs). A build one of
 * whose backends would put weights in ggml's AMX buffer, here or on an AMX Xeon, is refused: its
 * kernels crashed there and are not batch-invariant (docs/exactness.md).
 */
function checkedCpuBackends(buildDir) {
  const backends = cpuBackendFeatures(buildDir);
  const amx = (backends ?? []).filter((b) => putsWeightsInAmx(b.compiledFor) || putsWeightsInAmx(b.onAmxXeon));
  if (amx.length) {
    fail(
      `the llama.cpp build in ${buildDir} compiles AMX into ${amx.map((b) => b.name).join(', ')} ` +
        '(GGML_CPU_AMX=OFF and scripts/native/patches/ggml-cpu-no-amx.patch keep it out): remove the folder and build again',
    );
  }
  return backends;
}
