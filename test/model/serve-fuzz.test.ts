// /ws under fire: a seeded, reproducible corpus of frames against a real `power serve` (random
// text and bytes, invalid UTF-8, binary frames, JSON of every shape, envelopes with unknown
// concerns and methods, inputs of the wrong types generated from nothing and mutated from the
// contract's own methods, ids reused, unsubscribes of nothing, calls on a socket that closed,
// frames over the size limit). Every message that carries an id is answered under that id (or
// its connection is closed for the frame), the server stays up for /ws and HTTP, and its
// memory stays bounded. POWER_FUZZ_SEED and POWER_FUZZ_CASES run another or a longer campaign.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import fc from 'fast-check';
import { WebSocket } from 'ws';

import { powerApi } from '../../app/contract/api/index.js';
import { http } from '../fixtures/http-client.js';
import { startPowerServe, type PowerServe } from '../fixtures/serve.js';

const SEED = Number(process.env.POWER_FUZZ_SEED ?? 20261201);
const CASES = Number(process.env.POWER_FUZZ_CASES ?? 2000);

// every method of the contract, except the one that would reach the network
const METHODS = Object.entries(powerApi).flatMap(([concern, c]) =>
  Object.keys(c.methods)
    .filter((m) => !(concern === 'downloads' && m === 'start'))
    .map((method) => ({ concern, method })),
);
const EVENTS = Object.entries(powerApi).flatMap(([concern, c]) => Object.keys(c.events).map((e) => `${concern}.${e}`));

type Frame = { kind: 'text'; text: string; id: number | null } | { kind: 'binary'; bytes: Uint8Array };

/** The corpus: each frame, and the id the server must answer it under (null: no id to answer). */
function corpus(): Frame[] {
  const id = fc.integer({ min: 1, max: 50 }); // small: ids are reused all the time
  const text = (t: string): Frame => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(t);
    } catch {
      return { kind: 'text', text: t, id: null };
    }
    const maybe = (parsed as { id?: unknown } | null)?.id;
    return { kind: 'text', text: t, id: typeof maybe === 'number' && Number.isInteger(maybe) ? maybe : null };
  };
  const envelope = fc.oneof(
    // a real method with an input of any shape
    fc.record({ id, m: fc.constantFrom(...METHODS), input: fc.anything() }).map(({ id, m, input }) => ({ id, ...m, input })),
    // a real method with an object input whose keys are random
    fc
      .record({
        id,
        m: fc.constantFrom(...METHODS),
        input: fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null))),
      })
      .map(({ id, m, input }) => ({ id, ...m, input })),
    // unknown concerns and methods
    fc.record({ id, concern: fc.string(), method: fc.string(), input: fc.anything() }),
    // subscriptions to real, unknown and repeated events, and unsubscribes of nothing
    fc.record({ id, subscribe: fc.oneof(fc.constantFrom(...EVENTS), fc.string()) }),
    fc.record({ id, unsubscribe: fc.oneof(fc.constantFrom(...EVENTS), fc.string()) }),
    // ids of the wrong type, and no id
    fc.record({
      id: fc.oneof(fc.string(), fc.double(), fc.constant(null), fc.array(fc.integer())),
      concern: fc.constant('models'),
      method: fc.constant('list'),
      input: fc.constant({}),
    }),
    fc.record({ concern: fc.constant('chats'), method: fc.constant('list') }),
  );
  const frame: fc.Arbitrary<Frame> = fc.oneof(
    { weight: 6, arbitrary: envelope.map((e) => text(JSON.stringify(e))) },
    { weight: 2, arbitrary: fc.anything().map((v) => text(JSON.stringify(v) ?? 'undefined')) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map(text) },
    // bytes that are not UTF-8, sent as a text frame (the server closes that connection: 1007)
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({ kind: 'binary' as const, bytes })) },
  );
  return fc.sample(frame, { seed: SEED, numRuns: CASES });
}

/** A connection that answers by id; `closed` resolves with the close code. */
function connect(serve: PowerServe) {
  const ws = new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth, skipUTF8Validation: true });
  const waiting = new Map<number, () => void>();
  let answers = 0;
  ws.on('message', (data) => {
    answers++;
    const id = (JSON.parse(data.toString()) as { id?: unknown }).id;
    if (typeof id === 'number') waiting.get(id)?.();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('error', () => {});
  const opened = new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  return { ws, opened, closed, waiting, answers: () => answers };
}

describe('/ws fuzzing against power serve', () => {
  let serve: PowerServe;
  let dir = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-fuzz-'));
    serve = await startPowerServe(['--data-dir', join(dir, 'data')]);
  });
  after(async () => {
    await serve?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test(`${CASES} seeded frames (seed ${SEED}): each gets an answer or its connection is closed; the server stays up`, async () => {
    const rssBefore = rssOf(serve.child.pid!);
    let conn = connect(serve);
    await conn.opened;
    let answered = 0;
    let closes = 0;
    for (const [i, frame] of corpus().entries()) {
      if (conn.ws.readyState !== WebSocket.OPEN) {
        conn = connect(serve);
        await conn.opened;
      }
      const c = conn;
      if (frame.kind === 'binary') {
        // as a text frame: the bytes are rarely UTF-8, and then the server must close with 1007
        const valid = isUtf8(frame.bytes);
        c.ws.send(frame.bytes, { binary: false });
        if (!valid) {
          assert.equal(await c.closed, 1007, `case ${i}: invalid UTF-8 closes with 1007`);
          closes++;
          continue;
        }
        await roundTrip(c);
        continue;
      }
      if (frame.id === null) {
        c.ws.send(frame.text);
        await roundTrip(c); // whatever it was, the connection still answers
        continue;
      }
      const answer = new Promise<void>((resolve) => c.waiting.set(frame.id!, resolve));
      c.ws.send(frame.text);
      const outcome = await Promise.race([answer.then(() => 'answered'), c.closed.then(() => 'closed'), timeout(10_000)]);
      c.waiting.delete(frame.id);
      assert.notEqual(outcome, 'timeout', `case ${i}: no answer to ${frame.text.slice(0, 200)}`);
      if (outcome === 'answered') answered++;
      else closes++;
    }
    // a call on a socket that has closed fails on the client's side, and the server goes on
    conn.ws.close();
    await conn.closed;
    const late = await new Promise<Error | undefined>((resolve) =>
      conn.ws.send('{"id":1,"concern":"models","method":"list","input":{}}', resolve),
    );
    assert.match(String(late), /WebSocket is not open/);
    // one frame over the size limit
    const big = connect(serve);
    await big.opened;
    big.ws.send('x'.repeat(17 * 1024 * 1024));
    assert.equal(await big.closed, 1009);

    const check = connect(serve);
    await check.opened;
    const listed = new Promise<void>((resolve) => check.waiting.set(7, resolve));
    check.ws.send(JSON.stringify({ id: 7, concern: 'models', method: 'list', input: {} }));
    await listed;
    check.ws.close();
    assert.equal((await http(serve.origin, '/v1/models', { headers: serve.auth })).status, 200);
    const rssAfter = rssOf(serve.child.pid!);
    console.log(
      `fuzz: ${CASES} frames, ${answered} answered by id, ${closes} connections closed by the server; rss ${mb(rssBefore)} → ${mb(rssAfter)} MB`,
    );
    assert.ok(answered > CASES / 4, 'most envelopes were answered');
    assert.ok(rssAfter < rssBefore + 200 * 2 ** 20, `memory stays bounded (${mb(rssBefore)} → ${mb(rssAfter)} MB)`);
  });
});

/** A frame whose answer shows the connection still serves (a ping by id). */
async function roundTrip(c: ReturnType<typeof connect>): Promise<void> {
  const ping = 1_000_000 + c.answers();
  const answer = new Promise<void>((resolve) => c.waiting.set(ping, resolve));
  c.ws.send(JSON.stringify({ id: ping, concern: 'profiles', method: 'list', input: {} }));
  const outcome = await Promise.race([answer.then(() => 'answered'), c.closed.then(() => 'closed'), timeout(10_000)]);
  c.waiting.delete(ping);
  assert.equal(outcome, 'answered', 'the connection answers after the frame');
}

function timeout(ms: number): Promise<'timeout'> {
  return new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
