// Builds llama.cpp's shared libraries from the release's source (build/llama.cpp) with cmake,
// for the user's own CUDA toolkit and chosen GPU architectures, or CPU-only. The layout
// matches the prebuilt packages closely enough that the same addon CMakeLists links it:
// dynamic backends (GGML_BACKEND_DL, so a missing CUDA driver never stops the CPU backend
// from loading), no OpenMP (the prebuilt CPU libraries use ggml's own thread pool, so the
// two routes run the same CPU code), unversioned sonames and $ORIGIN rpaths (the folder
// can be copied next to power.node and still find itself).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';

import { fail } from './flavours.mjs';

/** nvcc from CUDACXX, PATH or the usual install folders; null when there is none. */
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
    try {
      const out = execFileSync(c, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const m = /release (\d+)\.(\d+)/.exec(out);
      if (m) return { path: c, major: Number(m[1]), version: `${m[1]}.${m[2]}` };
    } catch {
      // not this one
    }
  }
  return null;
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

function hasNinja() {
  try {
    execFileSync('ninja', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Configures and builds llama.cpp into `buildDir`; incremental (cmake decides what changed).
 * Returns the folder of the built libraries, the seconds it took and the CUDA details.
 */
export function buildLlamaFromSource({ srcDir, buildDir, cuda, cudaArchs }) {
  const nvcc = cuda ? findNvcc() : null;
  if (cuda && !nvcc) fail('--cuda needs the CUDA toolkit: no nvcc on PATH, in CUDACXX or in /usr/local/cuda*/bin');
  if (nvcc && process.platform !== 'win32') {
    const { top, missing } = missingCudaPieces(nvcc);
    if (missing.length) {
      fail(
        `the CUDA ${nvcc.version} toolkit in ${top} lacks what ggml's CUDA backend links: ${missing.join(', ')} ` +
          `(install the toolkit's cuBLAS and driver development packages, e.g. libcublas-dev-${nvcc.version.replace('.', '-')} and cuda-driver-dev-${nvcc.version.replace('.', '-')})`,
      );
    }
  }
  const defs = {
    CMAKE_BUILD_TYPE: 'Release',
    BUILD_SHARED_LIBS: 'ON',
    GGML_BACKEND_DL: 'ON',
    GGML_NATIVE: 'OFF',
    GGML_OPENMP: 'OFF',
    GGML_CUDA: cuda ? 'ON' : 'OFF',
    LLAMA_BUILD_TESTS: 'OFF',
    LLAMA_BUILD_EXAMPLES: 'OFF',
    LLAMA_BUILD_TOOLS: 'OFF',
    LLAMA_BUILD_SERVER: 'OFF',
    LLAMA_BUILD_APP: 'OFF',
    LLAMA_BUILD_COMMON: 'OFF',
    LLAMA_OPENSSL: 'OFF',
    CMAKE_PLATFORM_NO_VERSIONED_SONAME: 'ON',
    CMAKE_BUILD_WITH_INSTALL_RPATH: 'ON',
    CMAKE_INSTALL_RPATH: '$ORIGIN',
  };
  if (nvcc) defs.CMAKE_CUDA_COMPILER = nvcc.path;
  if (cuda && cudaArchs) defs.CMAKE_CUDA_ARCHITECTURES = cudaArchs;

  const started = Date.now();
  const generator = hasNinja() ? ['-G', 'Ninja'] : [];
  console.log(`power: configuring llama.cpp (${cuda ? `CUDA ${nvcc.version}, architectures ${cudaArchs ?? "ggml's default list"}` : 'CPU only'}) in ${buildDir}`);
  // cmake prints its own errors; a failed step ends in one line, not a Node stack trace
  const cmake = (what, argv) => {
    try {
      execFileSync('cmake', argv, { stdio: 'inherit' });
    } catch {
      fail(`llama.cpp ${what} failed (cmake output above; build folder ${buildDir})`);
    }
  };
  cmake('configuration', ['-S', srcDir, '-B', buildDir, ...generator, ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)]);
  cmake('build', ['--build', buildDir, '--config', 'Release', '--parallel', String(Math.max(1, cpus().length))]);
  const seconds = Math.round((Date.now() - started) / 1000);
  const libDir = join(buildDir, 'bin');
  console.log(`power: llama.cpp built in ${seconds} s (${libDir})`);
  return { libDir, seconds, cudaMajor: nvcc?.major ?? null, cudaVersion: nvcc?.version ?? null };
}
