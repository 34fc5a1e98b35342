#!/usr/bin/env node
// CI link check (npm test runs it after the build): every built addon flavour's power.node,
// reference tool and libraries must resolve with `ldd`, our llama/ggml libraries from the
// flavour's own folder. The NVIDIA driver (libcuda.so.1) and the CUDA runtime libraries
// (libcudart/libcublas/libcublasLt) are reported, not failed: build machines have no GPU.
// Fails too when the CUDA package is installed but its flavour was not built.
//
//   node --import tsx scripts/check-cuda-link.ts [--json]
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { addonDir, builtFlavours } from '../app/engine/build-info.js';
import { ROOT } from '../app/paths.js';
import { judge, parseLdd, type FileVerdict } from './ldd-report.js';

function ldd(file: string): string {
  // ldd exits non-zero for some files (e.g. static ones) yet prints what it knows
  try {
    return execFileSync('ldd', [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? '');
  }
}

function binaries(dir: string): string[] {
  return readdirSync(dir)
    .filter(
      (f) =>
        f.endsWith('.so') ||
        f.endsWith('.node') ||
        ['power-reference', 'power-bench-loop', 'power-chat-template', 'power-kernel-rows'].includes(f),
    )
    .sort()
    .map((f) => join(dir, f));
}

function main(): number {
  const json = process.argv.includes('--json');
  if (process.platform !== 'linux') {
    console.log(`check-cuda-link: skipped (ldd is Linux-only; platform ${process.platform})`);
    return 0;
  }
  const failures: string[] = [];
  const built = builtFlavours();
  const cudaPackage = join(ROOT, 'node_modules', '@node-llama-cpp', `linux-${process.arch}-cuda`);
  if (existsSync(cudaPackage) && !built.some((b) => b.flavour === 'cuda')) {
    failures.push(`@node-llama-cpp/linux-${process.arch}-cuda is installed but build/addon-cuda is not built`);
  }
  const report: { flavour: string; files: FileVerdict[] }[] = [];
  for (const b of built) {
    const dir = addonDir(b.flavour);
    const files = binaries(dir).map((f) => judge(f, dir, parseLdd(ldd(f))));
    report.push({ flavour: b.flavour, files });
    for (const v of files) for (const p of v.problems) failures.push(`${b.flavour}: ${v.file}: ${p}`);
  }

  if (json) {
    console.log(JSON.stringify({ ok: failures.length === 0, failures, report }, null, 2));
  } else {
    for (const { flavour, files } of report) {
      const cuda = new Map<string, string | null>();
      for (const v of files) for (const e of v.cuda) cuda.set(e.name, e.path);
      const bad = files.filter((v) => v.problems.length > 0).length;
      console.log(`check-cuda-link: ${flavour}: ${files.length} files, ${bad} with unresolved dependencies`);
      for (const [name, path] of cuda) {
        console.log(`  reported: ${name} => ${path ?? 'not found (driver/CUDA runtime: needed only on a GPU machine)'}`);
      }
    }
    for (const f of failures) console.error(`check-cuda-link: FAIL ${f}`);
  }
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = main();
