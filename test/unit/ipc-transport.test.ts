// The Electron IPC transport without Electron: the renderer-side client (what the preload
// exposes as window.power) connected to the main-side dispatcher through an in-memory port that
// behaves like ipcRenderer.invoke/on and ipcMain.handle/webContents.send (structured clone
// included), checked against a small description and against the PowerApi description itself.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { z } from 'zod';

import { concern, type ApiOf, type ConcernSpec } from '../../contract/api/describe.js';
import { PowerError } from '../../contract/api/errors.js';
import { powerApi } from '../../contract/api/index.js';
import { createIpcClient, type IpcRendererPort } from '../../electron/ipc/client.js';
import { apiShape, callChannel, eventChannel, SUBSCRIBE_CHANNEL, UNSUBSCRIBE_CHANNEL } from '../../electron/ipc/protocol.js';
import { createIpcDispatcher, type IpcDispatcher, type SenderInfo } from '../../electron/ipc/dispatcher.js';
import { isTrustedSender } from '../../electron/policy/sender.js';

const description = {
  math: concern({
    methods: {
      add: { input: z.object({ a: z.number(), b: z.number().default(1) }), output: z.object({ sum: z.number() }) },
      fail: { input: z.object({ code: z.enum(['busy', 'not-found']) }), output: z.null() },
      crash: { input: z.object({}), output: z.null() },
      lie: { input: z.object({}), output: z.object({ sum: z.number() }) },
    },
    events: { onTick: z.object({ n: z.number().int() }) },
  }),
};
type Api = ApiOf<typeof description>;

function fixture(sender: Omit<SenderInfo, 'id'> = { url: 'app://power/index.html', isMainFrame: true }) {
  const tickListeners = new Set<(payload: { n: number }) => void>();
  const calls: unknown[] = [];
  const logs: string[] = [];
  const impl: Api = {
    math: {
      add: async (input) => {
        calls.push(input);
        return { sum: input.a + (input.b ?? 1) };
      },
      fail: async ({ code }) => {
        throw new PowerError(code, `failed with ${code}`);
      },
      crash: async () => {
        throw new TypeError('undefined is not a function');
      },
      lie: async () => ({ sum: 'three' }) as unknown as { sum: number },
      onTick: (listener) => {
        tickListeners.add(listener);
        return () => tickListeners.delete(listener);
      },
    },
  };
  const dispatcher = createIpcDispatcher(description, impl, { isTrustedSender, log: (l) => logs.push(l) });
  const port = ipcPair(dispatcher, { id: 7, ...sender });
  const tick = (payload: unknown): void => tickListeners.forEach((l) => l(payload as { n: number }));
  return { impl, dispatcher, port, calls, logs, tick, tickListeners };
}

/** ipcRenderer ⇄ ipcMain, in memory: every value crosses by structured clone, as Electron does. */
function ipcPair(dispatcher: IpcDispatcher, sender: SenderInfo) {
  const handlers = new Map<string, (arg: unknown) => unknown>();
  const rendererListeners = new Map<string, Set<(payload: unknown) => void>>();
  const sent: { channel: string; payload: unknown }[] = [];
  const toRenderer = (channel: string, payload: unknown): void => {
    sent.push({ channel, payload });
    for (const l of rendererListeners.get(channel) ?? []) l(structuredClone(payload));
  };
  for (const { concern: c, method, channel } of dispatcher.shape.calls) handlers.set(channel, (arg) => dispatcher.call(c, method, sender, arg));
  handlers.set(SUBSCRIBE_CHANNEL, (name) => dispatcher.subscribe(sender, name, (payload) => toRenderer(eventChannel(String(name)), payload)));
  handlers.set(UNSUBSCRIBE_CHANNEL, (name) => dispatcher.unsubscribe(sender, name));
  const port: IpcRendererPort & { sent: typeof sent; raw: (channel: string, arg: unknown) => Promise<unknown> } = {
    sent,
    raw: async (channel, arg) => structuredClone(await handlers.get(channel)!(structuredClone(arg))),
    invoke: async (channel, arg) => {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`No handler registered for '${channel}'`);
      return structuredClone(await handler(structuredClone(arg)));
    },
    on: (channel, listener) => {
      let set = rendererListeners.get(channel);
      if (!set) rendererListeners.set(channel, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
  };
  return port;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IPC transport generated from a description', () => {
  test('a call reaches the implementation with the parsed input (defaults applied) and returns the checked output', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    assert.deepEqual(await api.math.add({ a: 2 }), { sum: 3 });
    assert.deepEqual(f.calls, [{ a: 2, b: 1 }]);
  });

  test('a service error keeps its ApiError code; anything else thrown becomes internal', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    await assert.rejects(api.math.fail({ code: 'busy' }), (e: unknown) => e instanceof PowerError && e.code === 'busy' && e.message === 'failed with busy');
    await assert.rejects(api.math.crash({}), (e: unknown) => e instanceof PowerError && e.code === 'internal');
  });

  test('errorsAsData rejects with a plain { code, message } (what survives contextBridge)', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port, { errorsAsData: true });
    await assert.rejects(api.math.fail({ code: 'not-found' }), (e: unknown) => {
      assert.deepEqual(e, { code: 'not-found', message: 'failed with not-found' });
      return Object.getPrototypeOf(e) === Object.prototype;
    });
  });

  test('the client refuses a bad input before it leaves the page', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    await assert.rejects(api.math.add({ a: 'x' as unknown as number }), (e: unknown) => e instanceof PowerError && e.code === 'bad-input');
    assert.deepEqual(f.calls, []);
  });

  test('the main side validates every message itself: a bad input sent around the client is refused', async () => {
    const f = fixture();
    const reply = await f.port.raw(callChannel('math', 'add'), { a: 'x' });
    assert.equal((reply as { ok: boolean }).ok, false);
    assert.equal((reply as { error: { code: string } }).error.code, 'bad-input');
    assert.match((reply as { error: { message: string } }).error.message, /^math\.add: a: /);
    assert.deepEqual(f.calls, []);
    const unknownMethod = await f.dispatcher.call('math', 'pow', { id: 7, url: 'app://power/', isMainFrame: true }, {});
    assert.deepEqual(unknownMethod, { ok: false, error: { code: 'not-found', message: 'no method math.pow' } });
    const proto = await f.dispatcher.call('math', '__proto__', { id: 7, url: 'app://power/', isMainFrame: true }, {});
    assert.equal(proto.ok, false);
  });

  test('an output that breaks the description is not handed to the page', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    await assert.rejects(api.math.lie({}), (e: unknown) => e instanceof PowerError && e.code === 'internal');
    assert.match(f.logs.join('\n'), /math\.lie answered with a result that does not match/);
  });

  for (const [label, sender] of [
    ['an iframe of the app', { url: 'app://power/index.html', isMainFrame: false }],
    ['a page that navigated away', { url: 'https://example.com/', isMainFrame: true }],
    ['a file:// page', { url: 'file:///tmp/index.html', isMainFrame: true }],
    ['a frame that is gone', { url: null, isMainFrame: false }],
  ] as const) {
    test(`every message from ${label} is refused before the service sees it`, async () => {
      const f = fixture(sender);
      const api = createIpcClient(description, f.port);
      await assert.rejects(api.math.add({ a: 1 }), (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /may not use PowerApi/.test(e.message));
      const warnings: string[] = [];
      const client = createIpcClient(description, f.port, { onProtocolError: (m) => warnings.push(m) });
      client.math.onTick(() => {});
      await settle();
      assert.equal(f.dispatcher.subscriptionCount(), 0);
      assert.match(warnings.join('\n'), /cannot subscribe to math\.onTick: this frame may not use PowerApi/);
      assert.deepEqual(f.calls, []);
      assert.match(f.logs.join('\n'), /refused/);
    });
  }

  test('events arrive checked, once per page however many listeners, and unsubscribing stops them', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    const a: number[] = [];
    const b: number[] = [];
    const offA = api.math.onTick((p) => a.push(p.n));
    const offB = api.math.onTick((p) => b.push(p.n));
    await settle();
    assert.equal(f.tickListeners.size, 1);
    f.tick({ n: 1 });
    f.tick({ n: 'two' }); // breaks the description: dropped on the main side
    offA();
    f.tick({ n: 3 });
    offB();
    await settle();
    f.tick({ n: 4 });
    assert.deepEqual(a, [1]);
    assert.deepEqual(b, [1, 3]);
    assert.equal(f.tickListeners.size, 0);
    assert.equal(f.dispatcher.subscriptionCount(), 0);
    assert.match(f.logs.join('\n'), /dropped a math\.onTick payload/);
    assert.deepEqual(f.port.sent.map((s) => s.payload), [{ n: 1 }, { n: 3 }]);
  });

  test('a subscription to an event the description lacks is refused; a page that goes drops its subscriptions', async () => {
    const f = fixture();
    const sender = { id: 7, url: 'app://power/', isMainFrame: true };
    assert.equal(f.dispatcher.subscribe(sender, 'math.onNope', () => {}).ok, false);
    assert.equal(f.dispatcher.subscribe(sender, 'not an event', () => {}).ok, false);
    assert.equal(f.dispatcher.subscribe(sender, { toString: () => 'math.onTick' }, () => {}).ok, false);
    assert.equal(f.dispatcher.subscribe(sender, 'math.onTick', () => {}).ok, true);
    assert.equal(f.tickListeners.size, 1);
    f.dispatcher.dropSender(7);
    assert.equal(f.tickListeners.size, 0);
    assert.equal(f.dispatcher.subscriptionCount(), 0);
  });
});

describe('IPC transport for the PowerApi description', () => {
  const shape = apiShape(powerApi as Record<string, ConcernSpec>);

  test('every method and event of PowerApi has its own channel, all distinct and under power:', () => {
    const methods = Object.values(powerApi).reduce((n, c) => n + Object.keys(c.methods).length, 0);
    const events = Object.values(powerApi).reduce((n, c) => n + Object.keys(c.events).length, 0);
    assert.equal(shape.calls.length, methods);
    assert.equal(shape.events.length, events);
    const channels = [...shape.calls.map((c) => c.channel), ...shape.events.map((e) => e.channel), SUBSCRIBE_CHANNEL, UNSUBSCRIBE_CHANNEL];
    assert.equal(new Set(channels).size, channels.length);
    for (const c of channels) assert.match(c, /^power:/);
    assert.ok(shape.calls.some((c) => c.channel === 'power:call:chats.send'));
    assert.ok(shape.events.some((e) => e.channel === 'power:event:generation.onToken'));
  });

  test('the generated window.power has a function for every method and event of every concern', () => {
    const port: IpcRendererPort = { invoke: async () => ({ ok: true, value: null }), on: () => () => {} };
    const api = createIpcClient(powerApi, port) as unknown as Record<string, Record<string, unknown>>;
    for (const [name, spec] of Object.entries(powerApi)) {
      for (const member of [...Object.keys(spec.methods), ...Object.keys(spec.events)]) assert.equal(typeof api[name]?.[member], 'function', `${name}.${member}`);
    }
  });
});
