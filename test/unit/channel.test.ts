// The channel layer itself (app/contract/channel), over an in-memory pair of ports that clones
// every message and delivers it on a later turn: calls and errors, reference-counted
// subscriptions, closing, and each side checking only what ChannelChecks gives it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PowerError } from '../../app/contract/api/errors.js';
import { CHECKED_BY_CLIENT, CHECKED_BY_SERVER, type ChannelChecks } from '../../app/contract/channel/checks.js';
import { connectChannel, type ConnectOptions } from '../../app/contract/channel/connect.js';
import type { ChannelPort } from '../../app/contract/channel/port.js';
import { serveChannel } from '../../app/contract/channel/serve.js';
import { mathDescription, mathImplementation } from '../fixtures/channel.js';

const description = mathDescription;

/** Two ports joined in memory; `close(reason)` is the link going away under both ends. */
function portPair() {
  const onMessage: [((m: unknown) => void)[], ((m: unknown) => void)[]] = [[], []];
  const onClose: [((reason?: unknown) => void)[], ((reason?: unknown) => void)[]] = [[], []];
  const traffic: { to: 'server' | 'client'; message: unknown }[] = [];
  let open = true;
  const port = (side: 0 | 1): ChannelPort => ({
    send: (message) => {
      if (!open) return;
      traffic.push({ to: side === 0 ? 'server' : 'client', message });
      const copy = structuredClone(message);
      setImmediate(() => onMessage[1 - side]!.forEach((l) => l(copy)));
    },
    onMessage: (listener) => void onMessage[side].push(listener),
    onClose: (listener) => void onClose[side].push(listener),
  });
  return {
    client: port(0),
    server: port(1),
    traffic,
    /** a message to the server that no client end would send */
    inject: (message: unknown) => onMessage[1].forEach((l) => l(structuredClone(message))),
    /** a message to the client that no server end would send */
    injectToClient: (message: unknown) => onMessage[0].forEach((l) => l(structuredClone(message))),
    close: (reason?: unknown) => {
      open = false;
      onClose[0].forEach((l) => l(reason));
      onClose[1].forEach((l) => l());
    },
  };
}

function setup(checks: ChannelChecks, options: Partial<ConnectOptions> = {}) {
  const { impl, received, ticks, tick } = mathImplementation();
  const logs: string[] = [];
  const warnings: string[] = [];
  const pair = portPair();
  const server = serveChannel(description, impl, pair.server, { checks, log: (l) => logs.push(l) });
  const client = connectChannel(description, pair.client, { checks, onProtocolError: (m) => warnings.push(m), ...options });
  return { api: client.api, client, server, pair, ticks, tick, received, logs, warnings };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Listens to onTick, ticks a payload that fits (n: 1) and one that does not (n: 1.5); what the listener got. */
async function tickedThrough(s: ReturnType<typeof setup>): Promise<unknown[]> {
  const got: unknown[] = [];
  s.api.math.onTick((p) => got.push(p));
  await settle();
  s.tick({ n: 1 });
  s.tick({ n: 1.5 });
  await settle();
  assert.deepEqual(got, [{ n: 1 }], 'only the payload that fits the description is delivered');
  return got;
}

const sentToServer = (traffic: { to: string; message: unknown }[]) => traffic.filter((t) => t.to === 'server').map((t) => t.message);

describe('channel: calls and errors', () => {
  test('a call returns its result; typed arrays cross a structured-clone port as typed arrays', async () => {
    const s = setup(CHECKED_BY_CLIENT);
    assert.deepEqual(await s.api.math.add({ a: 2, b: 3 }), { sum: 5 });
    const doubled = await s.api.math.echo({ values: Float32Array.from([1, 2]) });
    assert.ok(doubled instanceof Float32Array);
    assert.deepEqual([...doubled], [2, 4]);
  });

  test('error codes survive the hop: a PowerError, an error carrying a code, anything else as internal', async () => {
    const s = setup(CHECKED_BY_SERVER);
    for (const code of ['busy', 'not-found', 'unsupported'] as const) {
      await assert.rejects(
        s.api.math.fail({ code }),
        (e: unknown) => e instanceof PowerError && e.code === code && e.message === `failed with ${code}`,
      );
    }
    await assert.rejects(
      s.api.math.failWithCodedError({}),
      (e: unknown) => e instanceof PowerError && e.code === 'device' && e.message === 'not on this device',
    );
    await assert.rejects(
      s.api.math.crash({}),
      (e: unknown) => e instanceof PowerError && e.code === 'internal' && e.message === 'undefined is not a function',
    );
  });

  test('toError shapes every failure a call rejects with', async () => {
    class Mine extends Error {
      constructor(
        readonly code: string,
        readonly member: string,
        message: string,
      ) {
        super(message);
      }
    }
    const s = setup(CHECKED_BY_CLIENT, { toError: (e, _c, member) => new Mine(e.code, member, e.message) });
    await assert.rejects(s.api.math.fail({ code: 'busy' }), (e: unknown) => e instanceof Mine && e.code === 'busy' && e.member === 'fail');
    await assert.rejects(
      s.api.math.add({ a: 'x' as unknown as number }),
      (e: unknown) => e instanceof Mine && e.code === 'bad-input' && e.member === 'add',
    );
  });

  test('unknown methods and events, and names that are not own properties, are not-found', async () => {
    const s = setup(CHECKED_BY_SERVER);
    const answers: unknown[] = [];
    s.pair.client.onMessage((m) => answers.push(m));
    s.pair.inject({ id: 90, concern: 'math', method: 'toString', input: {} });
    s.pair.inject({ id: 91, concern: '__proto__', method: 'x', input: {} });
    s.pair.inject({ id: 92, subscribe: 'math.onNothing' });
    s.pair.inject({ id: 93, what: 'ever' });
    s.pair.inject('not an envelope');
    await settle();
    const [method, proto, event, envelope, noId] = answers as { id: number | null; error: { code: string; message: string } }[];
    assert.deepEqual(method, { id: 90, error: { code: 'not-found', message: 'no method math.toString' } });
    assert.deepEqual(proto, { id: 91, error: { code: 'not-found', message: 'no method __proto__.x' } });
    assert.deepEqual(event, { id: 92, error: { code: 'not-found', message: 'no event math.onNothing' } });
    assert.deepEqual([envelope!.id, envelope!.error.code], [93, 'bad-input']);
    assert.match(envelope!.error.message, /^malformed message: /);
    assert.deepEqual([noId!.id, noId!.error.code], [null, 'bad-input']);
    assert.match(s.warnings.join('\n'), /the server refused a message: malformed message/);
  });
});

describe('channel: subscriptions', () => {
  test('reference-counted: one upstream subscription per event name however many listeners, released with the last', async () => {
    const s = setup(CHECKED_BY_SERVER);
    const a: number[] = [];
    const b: number[] = [];
    const offA = s.api.math.onTick((p) => a.push(p.n));
    const offB = s.api.math.onTick((p) => b.push(p.n));
    await settle();
    assert.equal(s.ticks.size, 1);
    assert.equal(s.server.subscriptionCount(), 1);
    assert.deepEqual(sentToServer(s.pair.traffic), [{ id: 1, subscribe: 'math.onTick' }]);
    s.tick({ n: 1 });
    await settle();
    offA();
    offA(); // twice is once
    s.tick({ n: 2 });
    await settle();
    assert.equal(sentToServer(s.pair.traffic).length, 1, 'b still listens');
    offB();
    await settle();
    s.tick({ n: 3 });
    await settle();
    assert.deepEqual([a, b], [[1], [1, 2]]);
    assert.deepEqual(sentToServer(s.pair.traffic).at(-1), { id: 2, unsubscribe: 'math.onTick' });
    assert.equal(s.ticks.size, 0);
    assert.equal(s.server.subscriptionCount(), 0);
    // and a fresh listener subscribes again
    s.api.math.onTick(() => {});
    await settle();
    assert.equal(s.ticks.size, 1);
  });

  test('the server drops every subscription of a port that closes, and sends nothing after', async () => {
    const s = setup(CHECKED_BY_SERVER);
    s.api.math.onTick(() => {});
    s.api.math.onTock(() => {});
    await settle();
    assert.equal(s.server.subscriptionCount(), 2);
    s.pair.close();
    assert.equal(s.server.subscriptionCount(), 0);
    assert.equal(s.ticks.size, 0);
  });
});

describe('channel: closing', () => {
  test('close fails every pending call and every later one with its reason', async () => {
    const s = setup(CHECKED_BY_SERVER);
    const pending = s.api.math.hang({});
    await settle();
    const reason = new Error('the other end died');
    s.pair.close(reason);
    await assert.rejects(pending, (e: unknown) => e === reason);
    await assert.rejects(s.api.math.add({ a: 1 }), (e: unknown) => e === reason);
    await s.client.closed;
    assert.deepEqual(s.warnings, [], 'a subscription abandoned by a close is no protocol error');
  });

  test('without a reason a closed channel fails calls as internal; close() from the client side does the same', async () => {
    const s = setup(CHECKED_BY_SERVER);
    s.api.math.onTick(() => {});
    const pending = s.api.math.hang({});
    s.client.close();
    await assert.rejects(pending, (e: unknown) => e instanceof PowerError && e.code === 'internal');
    await assert.rejects(s.api.math.add({ a: 1 }), (e: unknown) => e instanceof PowerError && e.code === 'internal');
    await s.client.closed;
    assert.deepEqual(s.warnings, []);
  });
});

describe('channel: each side checks only what ChannelChecks gives it', () => {
  test('CHECKED_BY_SERVER: the client sends inputs as they are, the server refuses a bad one and fills in defaults', async () => {
    const s = setup(CHECKED_BY_SERVER);
    await assert.rejects(
      s.api.math.add({ a: 'x' as unknown as number }),
      (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /^math\.add: a: /.test(e.message),
    );
    assert.deepEqual(
      sentToServer(s.pair.traffic),
      [{ id: 1, concern: 'math', method: 'add', input: { a: 'x' } }],
      'the client did not check',
    );
    assert.deepEqual(s.received, [], 'the implementation never saw it');
    await s.api.math.add({ a: 1 });
    assert.deepEqual(s.received, [{ a: 1, b: 1 }]);
  });

  test('CHECKED_BY_SERVER: the server checks outputs and payloads; the client passes on what the server sent', async () => {
    const s = setup(CHECKED_BY_SERVER);
    await assert.rejects(
      s.api.math.lie({}),
      (e: unknown) => e instanceof PowerError && e.code === 'internal' && e.message === 'math.lie produced an invalid result',
    );
    assert.match(s.logs.join('\n'), /math\.lie answered with a result that does not match the description: sum:/);
    const got = await tickedThrough(s);
    assert.match(s.logs.join('\n'), /dropped a math\.onTick payload/);
    // what reaches the client unchecked is delivered as it came (the server is trusted here)
    s.pair.injectToClient({ event: 'math.onTick', payload: { n: 'unchecked' } });
    assert.deepEqual(got.at(-1), { n: 'unchecked' });
  });

  test('CHECKED_BY_CLIENT: the client refuses a bad input before it is sent and sends the parsed one; the server takes it as it comes', async () => {
    const s = setup(CHECKED_BY_CLIENT);
    await assert.rejects(
      s.api.math.add({ a: 'x' as unknown as number }),
      (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /^math\.add: a: /.test(e.message),
    );
    assert.deepEqual(sentToServer(s.pair.traffic), [], 'nothing was sent');
    await s.api.math.add({ a: 2 });
    assert.deepEqual(
      sentToServer(s.pair.traffic),
      [{ id: 1, concern: 'math', method: 'add', input: { a: 2, b: 1 } }],
      'defaults filled in by the client',
    );
    // a message no checking client would send reaches the implementation unchecked
    s.pair.inject({ id: 50, concern: 'math', method: 'add', input: { a: 5, b: 'raw' } });
    await settle();
    assert.deepEqual(s.received.at(-1), { a: 5, b: 'raw' });
  });

  test('CHECKED_BY_CLIENT: the client checks results and payloads; the server passes them on', async () => {
    const s = setup(CHECKED_BY_CLIENT);
    await assert.rejects(
      s.api.math.lie({}),
      (e: unknown) =>
        e instanceof PowerError &&
        e.code === 'internal' &&
        /^math\.lie answered with a result that does not match the description: sum:/.test(e.message),
    );
    assert.deepEqual(s.logs, [], 'the server did not check');
    await tickedThrough(s);
    assert.match(s.warnings.join('\n'), /math\.onTick payload does not match the description/);
  });

  test('the envelope is checked on both sides whatever the checks', async () => {
    const s = setup(CHECKED_BY_CLIENT);
    s.pair.injectToClient({ id: 1, result: null, extra: true });
    s.pair.injectToClient('nonsense');
    assert.equal(s.warnings.filter((w) => w.startsWith('malformed server message')).length, 2);
  });
});
