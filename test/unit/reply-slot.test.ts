// The engine's one reply slot: take refuses busy naming the holder, wait queues first come
// first served, stop cancels the request once it is attached (also when the stop came first),
// close refuses waiters and stops the holder.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PowerError } from '../../app/contract/api/errors.js';
import { ReplySlot } from '../../app/service/reply-slot.js';

describe('reply slot', () => {
  test('take refuses busy while a reply, a load or a completion holds the slot, naming it', async () => {
    const slot = new ReplySlot();
    const reply = slot.take({ kind: 'reply', chatId: 'c1', messageId: null });
    assert.throws(
      () => slot.take({ kind: 'load' }),
      (e: unknown) => e instanceof PowerError && e.code === 'busy' && /reply is streaming in chat c1/.test(e.message),
    );
    reply.release();
    const load = slot.take({ kind: 'load' });
    assert.throws(() => slot.take({ kind: 'reply', chatId: 'c2', messageId: null }), /a model is loading/);
    load.release();
    assert.equal(slot.holder(), null);
  });

  test('wait queues in order and hands the slot over on release', async () => {
    const slot = new ReplySlot();
    const first = slot.take({ kind: 'reply', chatId: 'c', messageId: 'm' });
    const order: string[] = [];
    const a = slot.wait({ kind: 'completion' }).then((l) => (order.push('a'), l));
    const b = slot.wait({ kind: 'completion' }).then((l) => (order.push('b'), l));
    assert.throws(() => slot.take({ kind: 'load' }), /busy|running|streaming/, 'a take does not jump the queue');
    first.release();
    const la = await a;
    assert.deepEqual(order, ['a']);
    la.release();
    (await b).release();
    assert.deepEqual(order, ['a', 'b']);
    assert.equal(slot.holder(), null);
  });

  test('a waiter whose signal aborts leaves the queue with cancelled', async () => {
    const slot = new ReplySlot();
    const held = slot.take({ kind: 'load' });
    const abort = new AbortController();
    const waiting = slot.wait({ kind: 'completion' }, abort.signal);
    abort.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof PowerError && e.code === 'cancelled');
    held.release();
    assert.equal(slot.holder(), null, 'the aborted waiter never got the slot');
  });

  test('stop cancels the attached request once and resolves when the holder releases', async () => {
    const slot = new ReplySlot();
    const lease = slot.take({ kind: 'reply', chatId: 'c', messageId: 'm' });
    let cancels = 0;
    lease.attach(() => cancels++);
    let stopped = false;
    const stopping = lease.stop().then(() => (stopped = true));
    void lease.stop();
    assert.equal(cancels, 1);
    await Promise.resolve();
    assert.equal(stopped, false, 'stop waits for the reply to end');
    lease.release();
    await stopping;
    assert.equal(stopped, true);
  });

  test('a stop that comes before the request reaches the engine cancels it as it is attached', () => {
    const slot = new ReplySlot();
    const lease = slot.take({ kind: 'completion' });
    void lease.stop();
    assert.equal(lease.stopRequested, true);
    let cancels = 0;
    lease.attach(() => cancels++);
    assert.equal(cancels, 1);
    lease.release();
  });

  test('close refuses waiters and later claims, and stops the holder', async () => {
    const slot = new ReplySlot();
    const lease = slot.take({ kind: 'reply', chatId: 'c', messageId: 'm' });
    let cancelled = false;
    lease.attach(() => {
      cancelled = true;
      setTimeout(() => lease.release(), 5);
    });
    const refused = assert.rejects(slot.wait({ kind: 'completion' }), /shutting down/);
    await slot.close();
    assert.equal(cancelled, true);
    await refused;
    assert.throws(() => slot.take({ kind: 'load' }), /shutting down/);
  });
});
