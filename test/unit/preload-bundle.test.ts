// The preload as Electron's sandbox runs it: one CommonJS file whose `require` knows only
// 'electron', evaluated here in a fresh V8 context without Node's globals, with ipcRenderer
// and contextBridge stood in by recorders. It must load, expose exactly `window.power`, hand
// the page functions only, and speak the IPC protocol (envelopes, subscribe, events).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import vm from 'node:vm';

import { ROOT } from '../../node/paths.js';

/** values from the preload's own V8 context have that context's prototypes */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

type Listener = (event: unknown, payload: unknown) => void;

describe('preload bundle', () => {
  let code = '';
  before(async () => {
    const built = spawnSync(process.execPath, ['scripts/build-shell.mjs'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    code = await readFile(join(ROOT, 'dist', 'shell', 'preload.cjs'), 'utf8');
  });

  function load() {
    const exposed = new Map<string, unknown>();
    const invoked: [string, unknown][] = [];
    const listeners = new Map<string, Set<Listener>>();
    const required: string[] = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, api: unknown) => exposed.set(name, api) },
      ipcRenderer: {
        invoke: async (channel: string, arg: unknown) => {
          invoked.push([channel, arg]);
          if (channel === 'power:call:models.list') return { ok: true, value: { entries: [] } };
          if (channel === 'power:call:chats.get') return { ok: false, error: { code: 'not-found', message: 'no chat x' } };
          return { ok: true, value: null };
        },
        on: (channel: string, l: Listener) => void (listeners.get(channel) ?? listeners.set(channel, new Set()).get(channel)!).add(l),
        removeListener: (channel: string, l: Listener) => void listeners.get(channel)?.delete(l),
      },
    };
    const module = { exports: {} };
    const context = vm.createContext({
      module,
      exports: module.exports,
      require: (name: string) => {
        required.push(name);
        if (name === 'electron') return electron;
        throw new Error(`a sandboxed preload cannot require ${name}`);
      },
      console,
    });
    vm.runInContext(code, context, { filename: 'preload.cjs' });
    return { exposed, invoked, listeners, required };
  }

  test('loads with nothing but require("electron") and exposes only window.power, made of functions', () => {
    const { exposed, required } = load();
    assert.deepEqual([...new Set(required)], ['electron']);
    assert.deepEqual([...exposed.keys()], ['power']);
    const power = exposed.get('power') as Record<string, Record<string, unknown>>;
    for (const concern of Object.values(power)) for (const member of Object.values(concern)) assert.equal(typeof member, 'function');
  });

  test('calls go out as envelopes on their channel; errors come back as { code, message }', async () => {
    const { exposed, invoked } = load();
    const power = exposed.get('power') as { models: { list(i: object): Promise<unknown> }; chats: { get(i: object): Promise<unknown> } };
    assert.deepEqual(plain(await power.models.list({})), { entries: [] });
    await assert.rejects(power.chats.get({ chatId: 'x' }), (e: unknown) => {
      assert.deepEqual(plain(e), { code: 'not-found', message: 'no chat x' });
      return true;
    });
    assert.deepEqual(invoked.map(([c]) => c), ['power:call:models.list', 'power:call:chats.get']);
  });

  test('an event subscription listens on its channel, passes checked payloads only, and unsubscribes', async () => {
    const { exposed, invoked, listeners } = load();
    const power = exposed.get('power') as { models: { onLibraryChanged(l: (p: unknown) => void): () => void } };
    const got: unknown[] = [];
    const off = power.models.onLibraryChanged((p) => got.push(p));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(plain(invoked[0]), ['power:subscribe', 'models.onLibraryChanged']);
    const channel = 'power:event:models.onLibraryChanged';
    for (const l of listeners.get(channel)!) {
      l({ sender: 'ipc event' }, { entries: [] });
      l({ sender: 'ipc event' }, { entries: 'not a list' });
    }
    assert.equal(got.length, 1);
    assert.deepEqual(plain(got[0]), { entries: [] });
    off();
    await new Promise((r) => setImmediate(r));
    assert.equal(listeners.get(channel)!.size, 0);
    assert.deepEqual(plain(invoked.at(-1)), ['power:unsubscribe', 'models.onLibraryChanged']);
  });
});
