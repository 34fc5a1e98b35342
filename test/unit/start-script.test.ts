// `npm start` where the Electron binary is absent (these build machines): one clear line that
// points to `npx power serve`, exit code 1, no stack trace, nothing launched or built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';

// plain .mjs beside the start script (not TypeScript: npm start runs before any build)
const { electronBinary } = (await import(join(ROOT, 'scripts', 'electron-binary.mjs'))) as {
  electronBinary: (root?: string, env?: NodeJS.ProcessEnv) => { path: string | null; reason: string | null };
};

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-electron-'));
  await mkdir(join(dir, 'types-only'));
  await writeFile(join(dir, 'types-only', 'package.json'), '{"name":"electron","version":"45.5.0"}');
  await mkdir(join(dir, 'installed', 'dist'), { recursive: true });
  await writeFile(join(dir, 'installed', 'package.json'), '{"name":"electron","version":"45.5.0"}');
  await writeFile(join(dir, 'installed', 'path.txt'), 'electron');
  await writeFile(join(dir, 'installed', 'dist', 'electron'), '');
});
after(() => rm(dir, { recursive: true, force: true }));

function npmStart(electronDir: string) {
  return spawnSync(process.execPath, ['scripts/start.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, POWER_ELECTRON_DIR: electronDir },
  });
}

describe('npm start without the Electron binary', () => {
  for (const [label, sub, reason] of [
    ['the package installed for its types only', 'types-only', /the Electron binary is not installed/],
    ['no electron package at all', 'missing', /the electron package is not installed/],
  ] as const) {
    test(`${label}: one line pointing to npx power serve, exit 1, no stack trace`, () => {
      const r = npmStart(join(dir, sub));
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /^power: cannot start the desktop app: /);
      assert.match(lines[0]!, reason);
      assert.match(lines[0]!, /`npx power serve`/);
      assert.doesNotMatch(r.stderr, /\n\s+at |Error:/);
    });
  }

  test('an installed binary is found where the electron package records it', () => {
    const found = electronBinary(ROOT, { POWER_ELECTRON_DIR: join(dir, 'installed') });
    assert.equal(found.path, join(dir, 'installed', 'dist', 'electron'));
    assert.equal(found.reason, null);
    const gone = electronBinary(ROOT, { POWER_ELECTRON_DIR: join(dir, 'types-only') });
    assert.equal(gone.path, null);
  });
});
