// The Electron IPC transport without Electron: the renderer-side client (what the preload
// exposes as window.power) connected to the main-side dispatcher through an in-memory pair that
// behaves like ipcRenderer.send/on and ipcMain.on/event.reply on POWER_CHANNEL (structured
// clone, delivery on a later turn), checked against a small description and against PowerApi.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { ConcernSpec } from '../../app/contract/api/describe.js';
import { PowerError } from '../../app/contract/api/errors.js';
import { powerApi } from '../../app/contract/api/index.js';
import { ClientMessage, ServerMessage } from '../../app/contract/channel/protocol.js';
import { mathDescription, mathImplementation } from '../fixtures/channel.js';
import { createIpcClient, type IpcRendererPort } from '../../main/ipc/client.js';
import { createIpcDispatcher, type IpcDispatcher, type SenderInfo } from '../../main/ipc/dispatcher.js';
import { isTrustedSender } from '../../main/policy/sender.js';

const description = mathDescription;

const APP_PAGE = { url: 'app://power/index.html', isMainFrame: true };

function fixture(sender: Omit<SenderInfo, 'id'> = APP_PAGE) {
  const { impl, received: calls, ticks: tickListeners, tick, finishSlow } = mathImplementation();
  const logs: string[] = [];
  const dispatcher = createIpcDispatcher(description, impl, { isTrustedSender, log: (l) => logs.push(l) });
  const port = ipcPair(dispatcher, { id: 7, ...sender });
  return { impl, dispatcher, port, calls, logs, tick, tickListeners, finishSlow };
}

/** ipcRenderer ⇄ ipcMain on one channel, in memory: cloned when sent, delivered on a later turn. */
function ipcPair(dispatcher: IpcDispatcher, sender: SenderInfo) {
  const rendererListeners = new Set<(message: unknown) => void>();
  /** everything main sent to the page */
  const sent: unknown[] = [];
  const later = (message: unknown, deliver: (copy: unknown) => void): void => {
    const copy = structuredClone(message);
    setImmediate(() => deliver(copy));
  };
  const toRenderer = (message: unknown): void => {
    sent.push(message);
    later(message, (copy) => rendererListeners.forEach((l) => l(copy)));
  };
  const port: IpcRendererPort & { sent: unknown[]; raw: (message: unknown) => Promise<unknown> } = {
    sent,
    /** one message around the client; resolves with the first answer */
    raw: (message) =>
      new Promise((resolve) => later(message, (copy) => dispatcher.receive(sender, copy, (answer) => resolve(structuredClone(answer))))),
    send: (message) => later(message, (copy) => dispatcher.receive(sender, copy, toRenderer)),
    onMessage: (listener) => void rendererListeners.add(listener),
  };
  return port;
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};
const events = (sent: unknown[]) => sent.filter((m) => typeof m === 'object' && m !== null && 'event' in m);

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
    await assert.rejects(
      api.math.fail({ code: 'busy' }),
      (e: unknown) => e instanceof PowerError && e.code === 'busy' && e.message === 'failed with busy',
    );
    await assert.rejects(
      api.math.crash({}),
      (e: unknown) => e instanceof PowerError && e.code === 'internal' && e.message === 'undefined is not a function',
    );
  });

  test('errorsAsData rejects with a plain { code, message } (what survives contextBridge)', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port, { errorsAsData: true });
    await assert.rejects(api.math.fail({ code: 'not-found' }), (e: unknown) => {
      assert.deepEqual(e, { code: 'not-found', message: 'failed with not-found' });
      return Object.getPrototypeOf(e) === Object.prototype;
    });
    await assert.rejects(
      api.math.add({ a: 'x' as unknown as number }),
      (e: unknown) => Object.getPrototypeOf(e) === Object.prototype && (e as { code: string }).code === 'bad-input',
    );
  });

  test('a bad input from the page is refused by the main side before the service sees it', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    await assert.rejects(
      api.math.add({ a: 'x' as unknown as number }),
      (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /^math\.add: a: /.test(e.message),
    );
    assert.deepEqual(f.calls, []);
  });

  test('the main side validates every message itself: bad inputs, unknown methods and broken envelopes sent around the client', async () => {
    const f = fixture();
    const reply = (await f.port.raw({ id: 1, concern: 'math', method: 'add', input: { a: 'x' } })) as {
      id: number;
      error: { code: string; message: string };
    };
    assert.equal(reply.id, 1);
    assert.equal(reply.error.code, 'bad-input');
    assert.match(reply.error.message, /^math\.add: a: /);
    assert.deepEqual(f.calls, []);
    assert.deepEqual(await f.port.raw({ id: 2, concern: 'math', method: 'pow', input: {} }), {
      id: 2,
      error: { code: 'not-found', message: 'no method math.pow' },
    });
    const proto = (await f.port.raw({ id: 3, concern: 'math', method: '__proto__', input: {} })) as { error?: { code: string } };
    assert.equal(proto.error?.code, 'not-found');
    const envelope = (await f.port.raw({ id: 4, what: 'ever' })) as { id: number; error: { code: string } };
    assert.deepEqual([envelope.id, envelope.error.code], [4, 'bad-input']);
    const noId = (await f.port.raw('just a string')) as { id: null; error: { code: string } };
    assert.deepEqual([noId.id, noId.error.code], [null, 'bad-input']);
  });

  test('an output that breaks the description is not handed to the page', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    await assert.rejects(
      api.math.lie({}),
      (e: unknown) => e instanceof PowerError && e.code === 'internal' && e.message === 'math.lie produced an invalid result',
    );
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
      await assert.rejects(
        api.math.add({ a: 1 }),
        (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /may not use PowerApi/.test(e.message),
      );
      const warnings: string[] = [];
      const client = createIpcClient(description, f.port, { onProtocolError: (m) => warnings.push(m) });
      client.math.onTick(() => {});
      await settle();
      assert.equal(f.dispatcher.subscriptionCount(), 0);
      assert.equal(f.tickListeners.size, 0);
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
    await settle();
    offA();
    f.tick({ n: 3 });
    await settle();
    offB();
    await settle();
    f.tick({ n: 4 });
    await settle();
    assert.deepEqual(a, [1]);
    assert.deepEqual(b, [1, 3]);
    assert.equal(f.tickListeners.size, 0);
    assert.equal(f.dispatcher.subscriptionCount(), 0);
    assert.match(f.logs.join('\n'), /dropped a math\.onTick payload/);
    assert.deepEqual(events(f.port.sent), [
      { event: 'math.onTick', payload: { n: 1 } },
      { event: 'math.onTick', payload: { n: 3 } },
    ]);
  });

  test('a subscription to an event the description lacks is refused; a page that goes drops its subscriptions', async () => {
    const f = fixture();
    assert.deepEqual(await f.port.raw({ id: 1, subscribe: 'math.onNope' }), {
      id: 1,
      error: { code: 'not-found', message: 'no event math.onNope' },
    });
    assert.equal(((await f.port.raw({ id: 2, subscribe: 'not an event' })) as { error: { code: string } }).error.code, 'bad-input');
    // not something structured clone would carry, but the dispatcher must not trust the clone either
    const answers: unknown[] = [];
    f.dispatcher.receive({ id: 7, ...APP_PAGE }, { id: 3, subscribe: { toString: () => 'math.onTick' } }, (m) => answers.push(m));
    assert.equal((answers[0] as { error: { code: string } }).error.code, 'bad-input');
    assert.deepEqual(await f.port.raw({ id: 4, subscribe: 'math.onTick' }), { id: 4, result: null });
    assert.deepEqual(await f.port.raw({ id: 5, subscribe: 'math.onTick' }), { id: 5, result: null });
    assert.equal(f.tickListeners.size, 1, 'one subscription per page and event');
    f.dispatcher.dropSender(7);
    assert.equal(f.tickListeners.size, 0);
    assert.equal(f.dispatcher.subscriptionCount(), 0);
  });

  test('a page that goes hears nothing more: answers in flight are dropped, and the next page starts afresh', async () => {
    const f = fixture();
    const api = createIpcClient(description, f.port);
    void api.math.slow({});
    api.math.onTick(() => {});
    await settle();
    f.dispatcher.dropSender(7); // a reload: the next page has the same webContents id and restarts its ids
    const before = f.port.sent.length;
    f.finishSlow();
    f.tick({ n: 1 });
    await settle();
    assert.equal(f.port.sent.length, before, 'nothing reaches the new page from the old one');
    const next = createIpcClient(description, f.port);
    assert.deepEqual(await next.math.add({ a: 1, b: 1 }), { sum: 2 });
  });
});

describe('IPC transport for the PowerApi description', () => {
  const members = (kind: 'methods' | 'events') =>
    Object.entries(powerApi as Record<string, ConcernSpec>).flatMap(([c, spec]) => Object.keys(spec[kind]).map((m) => [c, m] as const));

  test('every method and event of PowerApi is addressable on the one channel, each under its own name', async () => {
    const names = [...members('methods'), ...members('events')].map(([c, m]) => `${c}.${m}`);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.includes('chats.send') && names.includes('generation.onDone'));
    for (const [c, m] of members('methods'))
      assert.ok(ClientMessage.safeParse({ id: 1, concern: c, method: m, input: {} }).success, `${c}.${m}`);
    for (const [c, e] of members('events')) {
      assert.ok(ClientMessage.safeParse({ id: 1, subscribe: `${c}.${e}` }).success, `${c}.${e}`);
      assert.ok(ServerMessage.safeParse({ event: `${c}.${e}`, payload: null }).success, `${c}.${e}`);
    }

    // the dispatcher routes each of them to the service
    const reached: string[] = [];
    const service = new Proxy(
      {},
      {
        get: (_t, concernName: string) =>
          new Proxy(
            {},
            {
              get: (_u, member: string) => (arg: unknown) => {
                reached.push(`${concernName}.${member}`);
                return typeof arg === 'function' ? () => {} : Promise.reject(new PowerError('busy', 'stand-in'));
              },
            },
          ),
      },
    );
    const dispatcher = createIpcDispatcher(powerApi as Record<string, ConcernSpec>, service as never, { isTrustedSender: () => true });
    const answers: unknown[] = [];
    let id = 1;
    for (const [c, e] of members('events'))
      dispatcher.receive({ id: 1, ...APP_PAGE }, { id: id++, subscribe: `${c}.${e}` }, (m) => answers.push(m));
    assert.ok(
      answers.every((a) => (a as { result?: unknown }).result === null),
      JSON.stringify(answers.slice(0, 3)),
    );
    for (const [c, m] of members('methods')) {
      const spec = (powerApi as Record<string, ConcernSpec>)[c]!.methods[m]!;
      // the smallest input the schema takes, when it takes an empty object
      const input = spec.input.safeParse({}).success ? {} : null;
      if (input) dispatcher.receive({ id: 1, ...APP_PAGE }, { id: id++, concern: c, method: m, input }, (a) => answers.push(a));
    }
    await settle();
    for (const [c, e] of members('events')) assert.ok(reached.includes(`${c}.${e}`), `${c}.${e}`);
    assert.ok(reached.filter((r) => members('methods').some(([c, m]) => r === `${c}.${m}`)).length > 0);
  });

  test('the generated window.power has a function for every method and event of every concern', () => {
    const port: IpcRendererPort = { send: () => {}, onMessage: () => {} };
    const api = createIpcClient(powerApi, port) as unknown as Record<string, Record<string, unknown>>;
    for (const [name, spec] of Object.entries(powerApi)) {
      for (const member of [...Object.keys(spec.methods), ...Object.keys(spec.events)])
        assert.equal(typeof api[name]?.[member], 'function', `${name}.${member}`);
    }
  });
});
