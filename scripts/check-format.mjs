#!/usr/bin/env node
// `npm run lint`'s formatting check: Prettier over the TypeScript and JavaScript (.prettierrc.json,
// .prettierignore) and clang-format over native/'s C++ (.clang-format). `--write` formats instead;
// paths limit either to those files (`node scripts/check-format.mjs --write native/src/model.cpp`).
// Both formatters are the versions package-lock.json pins (prettier, @wasm-fmt/clang-format:
// clang-format compiled to WebAssembly), so every machine formats alike: a system clang-format is
// never asked, since each release formats a little differently (Debian 12 ships 14, Debian 13 19).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { format, version } from '@wasm-fmt/clang-format';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const write = args.includes('--write');
const paths = args.filter((a) => !a.startsWith('--')).map((p) => relative(root, resolve(p)));
const isCpp = (p) => /\.(cpp|h)$/.test(p);

const others = paths.length > 0 ? paths.filter((p) => !isCpp(p)) : ['.'];
const prettier =
  others.length === 0
    ? { status: 0 }
    : spawnSync(
        process.execPath,
        [join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), write ? '--write' : '--check', '--log-level', 'warn', ...others],
        { cwd: root, stdio: 'inherit' },
      );

// the style is .clang-format's text: the WebAssembly build reads no files itself
const style = readFileSync(join(root, '.clang-format'), 'utf8');
const cpp =
  paths.length > 0
    ? paths.filter(isCpp)
    : execFileSync('git', ['ls-files', 'native/*.cpp', 'native/*.h'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
const unformatted = [];
for (const file of cpp) {
  const path = join(root, file);
  const source = readFileSync(path, 'utf8');
  const formatted = format(source, file, style);
  if (formatted === source) continue;
  if (write) writeFileSync(path, formatted);
  else unformatted.push(file);
}
if (unformatted.length > 0) {
  console.error(`${unformatted.map((f) => `[warn] ${f}\n`).join('')}[warn] C++ not formatted as ${version().split(' (')[0]} formats it`);
}

if (prettier.status !== 0 || unformatted.length > 0) {
  console.error('check-format: run `node scripts/check-format.mjs --write` to format');
  process.exit(1);
}
