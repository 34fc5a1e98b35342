// Where the Electron binary is, or why it is not there: the `electron` npm package records
// the executable's path in path.txt once its install.js downloaded the binary, which npm ci
// never runs (the package has no install script; docs/setup.md). On the build machines here
// that download is impossible: the package is installed for its type definitions only.
// POWER_ELECTRON_DIR points at another copy of the package (tests use it to check both answers
// without launching anything).
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export function electronBinary(root = process.cwd(), env = process.env) {
  const dir = resolve(env.POWER_ELECTRON_DIR ?? join(root, 'node_modules', 'electron'));
  if (!existsSync(join(dir, 'package.json'))) return { path: null, reason: 'the electron package is not installed (npm install)' };
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return { path: null, reason: 'the Electron binary is not installed (its download was skipped or impossible)' };
  const path = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  if (!existsSync(path)) return { path: null, reason: `the Electron binary is missing (${path})` };
  return { path, reason: null };
}
