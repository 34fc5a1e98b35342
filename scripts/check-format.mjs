#!/usr/bin/env node
// `npm run lint`'s formatting check: Prettier over the TypeScript and JavaScript (.prettierrc.json,
// .prettierignore) and clang-format over native/'s C++ (.clang-format). `--write` formats instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const write = process.argv.includes('--write');

const prettier = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), write ? '--write' : '--check', '--log-level', 'warn', '.'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
const cpp = execFileSync('git', ['ls-files', 'native/*.cpp', 'native/*.h'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
const clang = spawnSync('clang-format', [...(write ? ['-i'] : ['--dry-run', '--Werror']), ...cpp], { cwd: root, stdio: 'inherit' });
if (clang.error) {
  console.error('check-format: clang-format is not installed (scripts/setup-system.sh installs it)');
  process.exit(1);
}
if (prettier.status !== 0 || clang.status !== 0) {
  console.error('check-format: run `node scripts/check-format.mjs --write` to format');
  process.exit(1);
}
