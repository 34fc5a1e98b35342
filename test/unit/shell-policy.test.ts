// The Electron shell's security decisions, one rule per test, called directly under Node (the
// shell files only connect them to Electron's events): sender frames, navigation, new windows,
// webviews, permissions, the app:// file server, the window's saved bounds and the quit sequence.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { resolveAppFile } from '../../main/policy/app-files.js';
import { menuTemplate } from '../../main/policy/menu-template.js';
import { externalUrl, navigationDecision, webviewAllowed, windowOpenDecision } from '../../main/policy/navigation.js';
import { APP_ENTRY_URL, isAppUrl } from '../../main/policy/origin.js';
import { devicePermissionDecision, permissionCheckDecision, permissionRequestDecision } from '../../main/policy/permissions.js';
import { createQuitSequence } from '../../main/policy/quit.js';
import { isTrustedSender } from '../../main/policy/sender.js';
import { DEFAULT_SIZE, loadWindowState, restoredBounds, saveWindowState } from '../../main/policy/window-state.js';

describe('sender frames', () => {
  test('only the app page in its main frame may use PowerApi', () => {
    assert.equal(isTrustedSender({ id: 1, url: APP_ENTRY_URL, isMainFrame: true }), true);
    assert.equal(isTrustedSender({ id: 1, url: 'app://power/chat/3', isMainFrame: true }), true);
    assert.equal(isTrustedSender({ id: 1, url: APP_ENTRY_URL, isMainFrame: false }), false);
    for (const url of [
      'app://evil/index.html',
      'app://power.evil/',
      'app://user:pw@power/',
      'file:///index.html',
      'http://127.0.0.1/',
      'https://power/',
      'about:blank',
      'garbage',
      null,
    ]) {
      assert.equal(isTrustedSender({ id: 1, url, isMainFrame: true }), false, String(url));
    }
  });

  test('isAppUrl compares scheme and host exactly', () => {
    assert.equal(isAppUrl('app://power:8080/'), false);
    assert.equal(isAppUrl(undefined), false);
  });
});

describe('navigation and new windows', () => {
  test('no navigation is ever allowed', () => {
    for (const url of ['https://example.com/', 'app://power/other', 'file:///etc/passwd', 'javascript:alert(1)']) {
      assert.equal(navigationDecision(url, true).allow, false);
    }
  });

  test('a main-frame navigation to an http(s) link goes to the system browser; nothing else does', () => {
    assert.equal(navigationDecision('https://example.com/a?b=c', true).openExternally, 'https://example.com/a?b=c');
    assert.equal(navigationDecision('http://example.com/', true).openExternally, 'http://example.com/');
    assert.equal(navigationDecision('https://example.com/', false).openExternally, null);
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://host/share',
      'app://power/',
      'data:text/html,x',
      'ms-settings:',
      'https://user:pw@example.com/',
    ]) {
      assert.equal(navigationDecision(url, true).openExternally, null, url);
      assert.equal(externalUrl(url), null, url);
    }
  });

  test('new windows are always denied; a clicked http(s) link opens in the system browser', () => {
    assert.deepEqual(windowOpenDecision({ url: 'https://example.com/', disposition: 'foreground-tab' }), {
      action: 'deny',
      openExternally: 'https://example.com/',
    });
    assert.deepEqual(windowOpenDecision({ url: 'https://example.com/', disposition: 'background-tab' }), {
      action: 'deny',
      openExternally: 'https://example.com/',
    });
    assert.deepEqual(windowOpenDecision({ url: 'https://example.com/', disposition: 'new-window' }), {
      action: 'deny',
      openExternally: null,
    });
    assert.deepEqual(windowOpenDecision({ url: 'file:///etc/passwd', disposition: 'foreground-tab' }), {
      action: 'deny',
      openExternally: null,
    });
    assert.deepEqual(windowOpenDecision({ url: 'app://power/', disposition: 'foreground-tab' }), { action: 'deny', openExternally: null });
  });

  test('webviews are never attached', () => {
    assert.equal(webviewAllowed(), false);
  });
});

describe('permissions', () => {
  test('every permission request and check is refused, even from the app itself', () => {
    for (const p of [
      'media',
      'geolocation',
      'notifications',
      'clipboard-read',
      'midi',
      'openExternal',
      'fullscreen',
      'hid',
      'serial',
      'unknown-future-permission',
    ]) {
      assert.equal(permissionRequestDecision(p, APP_ENTRY_URL), false, p);
      assert.equal(permissionCheckDecision(p, 'app://power'), false, p);
    }
    assert.equal(devicePermissionDecision(), false);
  });
});

describe('app:// files', () => {
  let root = '';
  let outside = '';
  before(async () => {
    const base = await mkdtemp(join(tmpdir(), 'power-app-files-'));
    root = join(base, 'renderer');
    outside = join(base, 'secret.txt');
    await mkdir(join(root, 'assets'), { recursive: true });
    await writeFile(join(root, 'index.html'), '<!doctype html><title>Power</title>');
    await writeFile(join(root, 'assets', 'app.js'), 'console.log(1)');
    await writeFile(outside, 'secret');
    await symlink(outside, join(root, 'assets', 'link.js'));
  });
  after(async () => rm(join(root, '..'), { recursive: true, force: true }));

  test('serves the built renderer with the strict CSP', async () => {
    const index = await resolveAppFile(root, 'GET', 'app://power/');
    assert.equal(index.status, 200);
    assert.ok(index.status === 200 && index.file.endsWith('index.html'));
    assert.match(index.headers['Content-Security-Policy']!, /script-src 'self'(;|$)/);
    assert.match(index.headers['Content-Security-Policy']!, /default-src 'self'/);
    assert.equal(index.headers['X-Content-Type-Options'], 'nosniff');
    const js = await resolveAppFile(root, 'GET', 'app://power/assets/app.js');
    assert.equal(js.status, 200);
    assert.match(js.headers['Content-Type']!, /^text\/javascript/);
    const route = await resolveAppFile(root, 'GET', 'app://power/chats/12');
    assert.ok(route.status === 200 && route.file.endsWith('index.html'));
  });

  test('no path leaves the folder', async () => {
    for (const url of [
      'app://power/../secret.txt',
      'app://power/%2e%2e/secret.txt',
      'app://power/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      'app://power/assets/..%2f..%2fsecret.txt',
    ]) {
      const answer = await resolveAppFile(root, 'GET', url);
      assert.ok(answer.status === 403 || answer.status === 404, `${url}: ${answer.status}`);
    }
    assert.equal((await resolveAppFile(root, 'GET', 'app://power/assets/link.js')).status, 403);
    assert.equal((await resolveAppFile(root, 'GET', 'app://power/a%5c..%5c..%5csecret.txt')).status, 400);
    assert.equal((await resolveAppFile(root, 'GET', 'app://power/a%00b')).status, 400);
    assert.equal((await resolveAppFile(root, 'GET', 'app://power/%E0%A4%A')).status, 400);
  });

  test('only GET and HEAD to app://power', async () => {
    assert.equal((await resolveAppFile(root, 'POST', 'app://power/')).status, 405);
    assert.equal((await resolveAppFile(root, 'HEAD', 'app://power/')).status, 200);
    assert.equal((await resolveAppFile(root, 'GET', 'app://other/')).status, 403);
    assert.equal((await resolveAppFile(root, 'GET', 'app://power/missing.js')).status, 404);
  });

  test('an unbuilt renderer is a clear 404, not a crash', async () => {
    const answer = await resolveAppFile(join(root, 'nope'), 'GET', 'app://power/');
    assert.ok(answer.status === 404 && /not built/.test(answer.message));
  });
});

describe('window bounds', () => {
  const screen = [{ x: 0, y: 0, width: 1920, height: 1040 }];

  test('saved bounds come back when they still show on a display', () => {
    assert.deepEqual(restoredBounds({ x: 100, y: 50, width: 1000, height: 700, maximized: true }, screen), {
      bounds: { x: 100, y: 50, width: 1000, height: 700 },
      maximized: true,
    });
  });

  test('a window left on an unplugged monitor opens on a visible one with its size', () => {
    assert.deepEqual(restoredBounds({ x: 3000, y: 50, width: 1000, height: 700, maximized: false }, screen), {
      bounds: { width: 1000, height: 700 },
      maximized: false,
    });
  });

  test('first start gets the default size', () => {
    assert.deepEqual(restoredBounds(null, screen), { bounds: { ...DEFAULT_SIZE }, maximized: false });
  });

  test('bounds are saved to the data folder and a corrupt or foreign file is ignored', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'power-window-'));
    try {
      const file = join(dir, 'window.json');
      await saveWindowState(file, { x: 10, y: 20, width: 900, height: 600, maximized: false });
      assert.deepEqual(await loadWindowState(file), { x: 10, y: 20, width: 900, height: 600, maximized: false });
      assert.match(await readFile(file, 'utf8'), /"width": 900/);
      await writeFile(file, '{"x": 1');
      assert.equal(await loadWindowState(file), null);
      await writeFile(file, '{"x": 1, "y": 2, "width": -5, "height": 10}');
      assert.equal(await loadWindowState(file), null);
      assert.equal(await loadWindowState(join(dir, 'missing.json')), null);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('quit sequence', () => {
  const event = () => {
    let prevented = 0;
    return {
      preventDefault: () => void prevented++,
      get prevented() {
        return prevented;
      },
    };
  };

  test('the first quit waits for the service to close, then exits 0; later requests are swallowed', async () => {
    let release: () => void = () => {};
    let closes = 0;
    const exits: number[] = [];
    const quit = createQuitSequence({
      close: () => (closes++, new Promise<void>((r) => (release = r))),
      exit: (c) => exits.push(c),
      timeoutMs: 10_000,
    });
    const first = event();
    quit.onBeforeQuit(first);
    const second = event();
    quit.onBeforeQuit(second);
    assert.equal(first.prevented, 1);
    assert.equal(second.prevented, 1);
    assert.equal(quit.state, 'closing');
    assert.deepEqual(exits, []);
    release();
    assert.equal(await quit.done, 0);
    assert.deepEqual(exits, [0]);
    assert.equal(closes, 1);
    const late = event();
    quit.onBeforeQuit(late); // app.exit's own quit passes
    assert.equal(late.prevented, 0);
  });

  test('a close that hangs does not keep the app alive', async () => {
    const exits: number[] = [];
    const logs: string[] = [];
    const quit = createQuitSequence({
      close: () => new Promise<void>(() => {}),
      exit: (c) => exits.push(c),
      timeoutMs: 20,
      log: (l) => logs.push(l),
    });
    quit.onBeforeQuit(event());
    assert.equal(await quit.done, 1);
    assert.deepEqual(exits, [1]);
    assert.match(logs.join('\n'), /exiting anyway/);
  });

  test('a close that fails still exits', async () => {
    const exits: number[] = [];
    const quit = createQuitSequence({
      close: async () => {
        throw new Error('disk full');
      },
      exit: (c) => exits.push(c),
      timeoutMs: 1000,
      log: () => {},
    });
    quit.onBeforeQuit(event());
    assert.equal(await quit.done, 1);
    assert.deepEqual(exits, [1]);
  });
});

describe('menu', () => {
  test('the usual roles are there, with the model library dialogs in File', () => {
    const noop = () => {};
    const template = menuTemplate({ addModelFile: noop, addModelFolder: noop, openDataFolder: noop }, 'linux');
    const roles = JSON.stringify(template, (_k, v: unknown) => (typeof v === 'function' ? undefined : v));
    for (const role of [
      'editMenu',
      'windowMenu',
      'quit',
      'reload',
      'toggleDevTools',
      'togglefullscreen',
      'zoomIn',
      'zoomOut',
      'resetZoom',
      'about',
    ])
      assert.match(roles, new RegExp(`"role":"${role}"`));
    assert.match(roles, /Add Model File…/);
    assert.match(roles, /Add Model Folder…/);
    const mac = JSON.stringify(menuTemplate({ addModelFile: noop, addModelFolder: noop, openDataFolder: noop }, 'darwin'));
    assert.match(mac, /"role":"appMenu"/);
  });
});
