// Where Power's own files are, whether it runs from source (tsx) or from dist/.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'power') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find Power's package.json above ${start}`);
    dir = parent;
  }
}

/** The package root (holds package.json, build/, dist/). */
export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** Default cache of generated synthetic models. */
export const MODELS_CACHE = join(ROOT, '.cache', 'models');

/** The larger synthetic models of the benchmarks and the long exactness test (not in the library folder). */
export const BENCH_MODELS_CACHE = join(ROOT, '.cache', 'bench');

/**
 * The root for files native code opens itself (the addon, llama.cpp's libraries): in a packaged
 * Electron app they are unpacked next to app.asar, where dlopen can reach them.
 */
export const UNPACKED_ROOT = ROOT.replace(/app\.asar$/, 'app.asar.unpacked');
