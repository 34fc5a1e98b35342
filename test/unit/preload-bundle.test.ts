// The preload as Electron's sandbox runs it: one CommonJS file whose `require` knows only
// 'electron', evaluated here in a fresh V8 context without Node's globals, with ipcRenderer
// and contextBridge stood in by recorders. It must load, expose exactly `window.power`, hand
// the page functions only, and speak the channel protocol on its one channel (calls,
// errors as data, reference-counted subscriptions, events).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import vm from 'node:vm';

import { ROOT } from '../../app/paths.js';

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
    /** every message the preload sent: [channel, message] */
    const sent: [string, Record<string, unknown>][] = [];
    const listeners = new Map<string, Set<Listener>>();
    const required: string[] = [];
    /** main → renderer, as Electron delivers it: an event object first, on a later turn */
    const toPage = (message: unknown) =>
      setImmediate(() => {
        for (const l of listeners.get('power:channel') ?? []) l({ sender: 'ipc event' }, message);
      });
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, api: unknown) => exposed.set(name, api) },
      ipcRenderer: {
        send: (channel: string, message: Record<string, unknown>) => {
          sent.push([channel, plain(message) as Record<string, unknown>]);
          const { id } = message;
          if (message.method === 'list') toPage({ id, result: { entries: [] } });
          else if (message.method === 'get') toPage({ id, error: { code: 'not-found', message: 'no chat x' } });
          else toPage({ id, result: null });
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
    return { exposed, sent, listeners, required, toPage };
  }

  test('loads with nothing but require("electron") and exposes only window.power, made of functions', () => {
    const { exposed, required, listeners } = load();
    assert.deepEqual([...new Set(required)], ['electron']);
    assert.deepEqual([...exposed.keys()], ['power']);
    assert.deepEqual([...listeners.keys()], ['power:channel'], 'it listens on its one channel only');
    const power = exposed.get('power') as Record<string, Record<string, unknown>>;
    for (const concern of Object.values(power)) for (const member of Object.values(concern)) assert.equal(typeof member, 'function');
  });

  test('calls go out as envelopes on the one channel; errors come back as { code, message }', async () => {
    const { exposed, sent } = load();
    const power = exposed.get('power') as { models: { list(i: object): Promise<unknown> }; chats: { get(i: object): Promise<unknown> } };
    assert.deepEqual(plain(await power.models.list({})), { entries: [] });
    await assert.rejects(power.chats.get({ chatId: 'x' }), (e: unknown) => {
      assert.deepEqual(plain(e), { code: 'not-found', message: 'no chat x' });
      return true;
    });
    assert.deepEqual(sent, [
      ['power:channel', { id: 1, concern: 'models', method: 'list', input: {} }],
      ['power:channel', { id: 2, concern: 'chats', method: 'get', input: { chatId: 'x' } }],
    ]);
  });

  test('an event subscription is one subscribe however many listeners; they get the payload only; the last one unsubscribes', async () => {
    const { exposed, sent, toPage } = load();
    const power = exposed.get('power') as { models: { onLibraryChanged(l: (...args: unknown[]) => void): () => void } };
    const got: unknown[][] = [];
    const off = power.models.onLibraryChanged((...args) => got.push(args));
    const offOther = power.models.onLibraryChanged(() => {});
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent, [['power:channel', { id: 1, subscribe: 'models.onLibraryChanged' }]]);
    toPage({ event: 'models.onLibraryChanged', payload: { entries: [] } });
    toPage({ event: 'models.onOther', payload: { entries: [] } }); // not subscribed: not delivered
    toPage({ event: 'models.onLibraryChanged', payload: { entries: [] }, extra: 1 }); // not the protocol: dropped
    await new Promise((r) => setImmediate(r));
    assert.equal(got.length, 1);
    assert.deepEqual(plain(got[0]), [{ entries: [] }], 'the listener gets the payload, never the IPC event');
    off();
    assert.equal(sent.length, 1, 'another listener is still there');
    offOther();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent.at(-1), ['power:channel', { id: 2, unsubscribe: 'models.onLibraryChanged' }]);
  });
});
