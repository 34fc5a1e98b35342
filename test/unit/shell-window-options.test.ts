// Electron's security checklist, read off the one window's options object (static: the same
// function main/window.ts passes to new BrowserWindow), plus a source check that no
// shell file turns a rule back off elsewhere.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';
import { mainWindowOptions } from '../../main/policy/window-options.js';

const options = mainWindowOptions({ bounds: { width: 1000, height: 700 }, preload: '/app/dist/shell/preload.cjs' });
const web = options.webPreferences!;

describe('window options (Electron security checklist)', () => {
  test('context isolation on', () => assert.equal(web.contextIsolation, true));
  test('renderer sandbox on', () => assert.equal(web.sandbox, true));
  test('no Node integration anywhere (page, workers, subframes)', () => {
    assert.equal(web.nodeIntegration, false);
    assert.equal(web.nodeIntegrationInWorker, false);
    assert.equal(web.nodeIntegrationInSubFrames, false);
  });
  test('web security on, no insecure content, no experimental features', () => {
    assert.equal(web.webSecurity, true);
    assert.equal(web.allowRunningInsecureContent, false);
    assert.equal(web.experimentalFeatures, false);
  });
  test('no <webview>, no navigation by dropping a file', () => {
    assert.equal(web.webviewTag, false);
    assert.equal(web.navigateOnDragDrop, false);
  });
  test('the preload is the bundled one and nothing else is injected', () => {
    assert.equal(web.preload, '/app/dist/shell/preload.cjs');
    assert.equal(Object.hasOwn(web, 'additionalArguments'), false);
    assert.equal(Object.hasOwn(web, 'partition'), false);
  });
  test('the window opens hidden (shown on ready-to-show) at the given size', () => {
    assert.equal(options.show, false);
    assert.equal(options.width, 1000);
    assert.equal(options.height, 700);
  });
});

describe('shell sources', () => {
  test('no shell file loads file:// pages, exposes ipcRenderer, or turns a checklist rule off', async () => {
    const dir = join(ROOT, 'main');
    const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length >= 8);
    for (const file of files) {
      // code only: comments may name what is not done
      const text = (await readFile(join(dir, file), 'utf8')).replace(/^\s*(\/\/|\*|\/\*\*).*$/gm, '');
      assert.doesNotMatch(text, /loadFile\(|file:\/\//, file);
      assert.doesNotMatch(text, /(contextIsolation|sandbox|webSecurity):\s*false/, file);
      assert.doesNotMatch(text, /nodeIntegration\w*:\s*true/, file);
      assert.doesNotMatch(text, /exposeInMainWorld\([^)]*ipcRenderer/, file);
    }
    const preload = await readFile(join(dir, 'preload.ts'), 'utf8');
    assert.equal((preload.match(/exposeInMainWorld/g) ?? []).length, 1);
  });
});

describe('shell policies stay Electron-free at run time', () => {
  test('the lint rule refuses a value import of electron in main/policy and allows type imports', async () => {
    const { ESLint } = await import('eslint');
    const eslint = new ESLint({ cwd: ROOT });
    const lint = async (code: string) =>
      (await eslint.lintText(`${code}\nexport const used = 1;\n`, { filePath: join(ROOT, 'main/policy/x.ts') }))[0]!.messages.filter(
        (m) => m.ruleId === 'no-restricted-imports',
      );
    assert.equal((await lint("import { app } from 'electron';\nvoid app;")).length, 1);
    assert.deepEqual(await lint("import type { App } from 'electron';\nexport type A = App;"), []);
  });
});
