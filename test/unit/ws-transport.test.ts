// The WebSocket transport, generated from a description: a small description implemented by a
// plain object, served over a real `ws` server and called through the browser-safe client;
// the server checks inputs, outputs and payloads, the client envelopes.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { WebSocket, WebSocketServer } from 'ws';

import { PowerError } from '../../app/contract/api/errors.js';
import { createApiClient, type ApiClient } from '../../app/contract/transport/ws-client.js';
import { serveApiOnSocket } from '../../app/serve/ws-transport.js';
import { mathDescription, mathImplementation } from '../fixtures/channel.js';

const description = mathDescription;
const { impl, ticks: tickListeners, tick } = mathImplementation();
const logs: string[] = [];

let server: Server;
let url = '';
before(async () => {
  server = createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => serveApiOnSocket(description, impl, socket, { log: (l) => logs.push(l) }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function connect(): Promise<ApiClient<typeof description>> {
  const client = createApiClient(description, new WebSocket(url), { onProtocolError: (m) => logs.push(m) });
  await client.ready;
  return client;
}

async function rejection(p: Promise<unknown>): Promise<PowerError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof PowerError, String(error));
    return error;
  }
  assert.fail('resolved');
}

/** Sends one raw message and returns the first reply. */
function raw(data: string | Buffer): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.on('open', () => socket.send(data));
    socket.on('message', (reply) => {
      resolve(JSON.parse(reply.toString()));
      socket.close();
    });
    socket.on('error', reject);
  });
}

describe('WebSocket transport', () => {
  test('a call goes through and its result is the output schema applied (defaults filled on the server)', async () => {
    const client = await connect();
    assert.deepEqual(await client.api.math.add({ a: 2 }), { sum: 3 });
    assert.deepEqual(await client.api.math.add({ a: 2, b: 5 }), { sum: 7 });
    client.close();
  });

  test('a failure crosses as its ApiError code; an unexpected throw is internal', async () => {
    const client = await connect();
    const busy = await rejection(client.api.math.fail({ code: 'busy' }));
    assert.deepEqual([busy.code, busy.message], ['busy', 'failed with busy']);
    assert.equal((await rejection(client.api.math.fail({ code: 'not-found' }))).code, 'not-found');
    const crash = await rejection(client.api.math.crash({}));
    assert.deepEqual([crash.code, crash.message], ['internal', 'undefined is not a function']);
    client.close();
  });

  test('the server refuses a bad input, from the client and sent around it', async () => {
    const client = await connect();
    const e = await rejection(client.api.math.add({ a: 'x' as unknown as number }));
    assert.equal(e.code, 'bad-input');
    assert.match(e.message, /^math\.add: a: /);
    assert.deepEqual(await raw(JSON.stringify({ id: 7, concern: 'math', method: 'add', input: { a: 'x' } })), {
      id: 7,
      error: { code: 'bad-input', message: 'math.add: a: Invalid input: expected number, received string' },
    });
    client.close();
  });

  test('unknown methods, malformed envelopes and non-JSON get an error reply and the connection lives on', async () => {
    assert.deepEqual(await raw(JSON.stringify({ id: 1, concern: 'math', method: 'toString', input: {} })), {
      id: 1,
      error: { code: 'not-found', message: 'no method math.toString' },
    });
    assert.deepEqual(await raw(JSON.stringify({ id: 2, concern: '__proto__', method: 'x', input: {} })), {
      id: 2,
      error: { code: 'not-found', message: 'no method __proto__.x' },
    });
    const envelope = (await raw(JSON.stringify({ id: 3, what: 'ever' }))) as { id: number; error: { code: string } };
    assert.deepEqual([envelope.id, envelope.error.code], [3, 'bad-input']);
    assert.deepEqual(await raw('{nope'), { id: null, error: { code: 'bad-input', message: 'the message is not JSON' } });
    assert.deepEqual(await raw(Buffer.from(JSON.stringify({ id: 4, concern: 'math', method: 'add', input: { a: 1 } }))), {
      id: null,
      error: { code: 'bad-input', message: 'binary messages are not part of the protocol; send JSON text' },
    });
    const client = await connect();
    assert.deepEqual(await client.api.math.add({ a: 1, b: 1 }), { sum: 2 });
    client.close();
  });

  test('an output that breaks the description is not passed on: internal error, logged', async () => {
    const client = await connect();
    const e = await rejection(client.api.math.lie({}));
    assert.deepEqual([e.code, e.message], ['internal', 'math.lie produced an invalid result']);
    assert.ok(logs.some((l) => l.startsWith('math.lie answered with a result that does not match the description: sum:')));
    client.close();
  });

  test('events: subscribe by name, payloads checked, unsubscribe stops them; a socket that closes unsubscribes', async () => {
    const client = await connect();
    const got: number[] = [];
    const stop = client.api.math.onTick((p) => got.push(p.n));
    const other: number[] = [];
    const stopOther = client.api.math.onTick((p) => other.push(p.n));
    await client.api.math.add({ a: 0 }); // the subscription is acknowledged before this reply
    assert.equal(tickListeners.size, 1, 'one server subscription per socket and event');
    tick({ n: 1 });
    tick({ n: 1.5 }); // breaks the description: dropped by the server
    tick({ n: 2 });
    await client.api.math.add({ a: 0 });
    assert.deepEqual(got, [1, 2]);
    assert.deepEqual(other, [1, 2]);
    assert.ok(logs.some((l) => l.startsWith('dropped a math.onTick payload')));
    stop();
    tick({ n: 3 });
    await client.api.math.add({ a: 0 });
    assert.deepEqual(got, [1, 2]);
    assert.deepEqual(other, [1, 2, 3]);
    stopOther();
    await client.api.math.add({ a: 0 });
    assert.equal(tickListeners.size, 0);

    client.api.math.onTick(() => {});
    await client.api.math.add({ a: 0 });
    assert.equal(tickListeners.size, 1);
    client.close();
    await client.closed;
    for (let i = 0; i < 50 && tickListeners.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(tickListeners.size, 0);
  });

  test('calls made before the socket opens are queued; a closed connection fails pending and later calls', async () => {
    const client = createApiClient(description, new WebSocket(url));
    const early = client.api.math.add({ a: 40, b: 2 });
    assert.deepEqual(await early, { sum: 42 });
    client.close();
    await client.closed;
    const e = await rejection(client.api.math.add({ a: 1 }));
    assert.equal(e.code, 'internal');
    assert.match(e.message, /connection to Power/);
  });
});
