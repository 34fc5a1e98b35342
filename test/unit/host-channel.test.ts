// The engine host's one adapter for how it was started: process.send under fork, parentPort in
// an Electron utility process (where the parent's goodbye is a message, not 'disconnect').
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';

import { ClientMessage } from '../../app/contract/channel/protocol.js';
import { connectToParent, isParentGone, PARENT_GONE } from '../../app/engine-host/host-channel.js';

/** Connects as the engine host does over a stand-in for its process, recording the messages the channel hands on and how often it closes. */
function connectAndListen(proc: EventEmitter) {
  const channel = connectToParent(proc as never);
  const heard = { messages: [] as unknown[], closes: 0 };
  channel.onMessage((m) => heard.messages.push(m));
  channel.onClose(() => heard.closes++);
  return { channel, heard };
}

describe('host channel', () => {
  test('with a parentPort: messages arrive unwrapped from { data }, replies are posted, PARENT_GONE means leave', () => {
    const port = new EventEmitter() as EventEmitter & { postMessage(m: unknown): void; posted: unknown[] };
    port.posted = [];
    port.postMessage = (m) => void port.posted.push(m);
    const proc = Object.assign(new EventEmitter(), { send: undefined, parentPort: port });
    const { channel, heard } = connectAndListen(proc);
    assert.equal(channel.kind, 'utility-process');
    port.emit('message', { data: { kind: 'request', id: 1 } });
    port.emit('message', { data: structuredClone(PARENT_GONE) });
    channel.send({ kind: 'response', id: 1 });
    proc.emit('disconnect'); // not how a utility process hears of its parent
    assert.deepEqual(heard.messages, [{ kind: 'request', id: 1 }]);
    assert.equal(heard.closes, 1);
    assert.deepEqual(port.posted, [{ kind: 'response', id: 1 }]);
  });

  test('under fork: process.send and process messages, disconnect means leave', () => {
    const sent: unknown[] = [];
    const proc = Object.assign(new EventEmitter(), { send: (m: unknown) => (sent.push(m), true) });
    const { channel, heard } = connectAndListen(proc);
    assert.equal(channel.kind, 'fork');
    proc.emit('message', { kind: 'request', id: 2 });
    proc.emit('disconnect');
    channel.send({ kind: 'response', id: 2 });
    assert.deepEqual(heard.messages, [{ kind: 'request', id: 2 }]);
    assert.equal(heard.closes, 1);
    assert.deepEqual(sent, [{ kind: 'response', id: 2 }]);
  });

  test('started by hand (no parent at all): a clear error', () => {
    assert.throws(() => connectToParent(Object.assign(new EventEmitter(), { send: undefined }) as never), /must be started by Power/);
  });

  test('PARENT_GONE is never a channel message', () => {
    assert.equal(isParentGone(PARENT_GONE), true);
    assert.equal(isParentGone({ kind: 'request' }), false);
    assert.equal(ClientMessage.safeParse(PARENT_GONE).success, false);
    assert.equal(isParentGone(null), false);
  });
});
