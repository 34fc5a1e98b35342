// Coalesced round batches (the native layer's flat layout) and their expansion into round records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ServerMessage } from '../../app/contract/channel/protocol.js';
import { engineApi, RoundBatch, expandRoundBatch } from '../../app/engine/protocol.js';
import { twoRounds } from '../fixtures/round-batch.js';

describe('round batches', () => {
  test('expand into every round record, in order, with their tokens, origins and pieces', () => {
    const rounds = expandRoundBatch(RoundBatch.parse(twoRounds()));
    assert.equal(rounds.length, 2);
    assert.deepEqual(
      rounds[0]!.tokens.map((t) => [t.id, t.origin]),
      [[7, 'target']],
    );
    assert.deepEqual([rounds[0]!.proposed, rounds[0]!.clampedTo, rounds[0]!.replay, rounds[0]!.endUs], [0, null, false, 900]);
    const r = rounds[1]!;
    assert.deepEqual(
      [r.proposed, r.accepted, r.replay, r.clampedTo, r.startUs, r.endUs, r.proposeUs, r.verifyUs, r.commitUs],
      [4, 2, true, 3, 900, 2000, 300, 700, 20],
    );
    assert.deepEqual([r.draftSource, r.expectedAccepted], ['store', 1.5], 'where the draft came from, and what its drafter expected');
    assert.ok(!('draftSource' in rounds[0]!) && !('expectedAccepted' in rounds[0]!), 'a round without a draft names no source');
    assert.deepEqual(
      r.tokens.map((t) => [t.id, t.origin]),
      [
        [8, 'accepted'],
        [9, 'accepted'],
        [10, 'correction'],
      ],
    );
    const text = new TextDecoder().decode(Buffer.concat(rounds.flatMap((x) => x.tokens.map((t) => t.piece))));
    assert.equal(text, 'Hello world');
  });

  test('log-probabilities: each token gets its own and its top entries with their pieces; a batch whose arrays disagree is refused', () => {
    const enc = new TextEncoder();
    const tops = ['He', 'A', 'llo', 'lo', ' wor', ' w', 'ld', 'l'];
    let end = 0;
    const withProbs = {
      ...twoRounds(),
      logprobs: Float32Array.from([-0.5, -0.25, -1, -2]),
      topIds: Int32Array.from([7, 1, 8, 2, 9, 3, 10, 4]),
      topLogprobs: Float32Array.from([-0.5, -1, -0.25, -2, -1, -1.5, -0.75, -2]),
      topBytes: enc.encode(tops.join('')),
      topPieceEnds: Uint32Array.from(tops.map((p) => (end += enc.encode(p).length))),
    };
    const tokens = expandRoundBatch(RoundBatch.parse(withProbs)).flatMap((r) => r.tokens);
    const dec = new TextDecoder();
    assert.deepEqual(
      tokens.map((t) => [
        dec.decode(t.logprobs!.piece),
        t.logprobs!.logprob,
        ...t.logprobs!.top.map((e) => [e.id, e.logprob, dec.decode(e.piece)]),
      ]),
      [
        // each token's piece and log-probability, then its top entries: id, log-probability, piece
        ['He', -0.5, [7, -0.5, 'He'], [1, -1, 'A']],
        ['llo', -0.25, [8, -0.25, 'llo'], [2, -2, 'lo']],
        [' wor', -1, [9, -1, ' wor'], [3, -1.5, ' w']],
        ['ld', -2, [10, -0.75, 'ld'], [4, -2, 'l']],
      ],
    );
    assert.ok(!RoundBatch.safeParse({ ...withProbs, logprobs: Float32Array.from([-1]) }).success, 'one per token');
    assert.ok(!RoundBatch.safeParse({ ...withProbs, topIds: Int32Array.from([7, 1, 8]) }).success, 'the same number per token');
    assert.ok(
      !RoundBatch.safeParse({ ...withProbs, topPieceEnds: Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 99]) }).success,
      'pieces in range',
    );
    assert.equal(expandRoundBatch(RoundBatch.parse(twoRounds()))[0]!.tokens[0]!.logprobs, undefined, 'absent unless asked for');
  });

  test('an engine event carries a batch', () => {
    const message = ServerMessage.parse(structuredClone({ event: 'engine.onRounds', payload: { requestId: 'r1', batch: twoRounds() } }));
    assert.ok('event' in message);
    const payload = engineApi.engine.events.onRounds.parse(message.payload);
    assert.ok(payload.batch.ids instanceof Int32Array, 'typed arrays survive the clone');
    assert.equal(expandRoundBatch(payload.batch).length, 2);
    assert.equal(engineApi.engine.events.onRounds.safeParse({ requestId: 'r1', batch: { ...twoRounds(), rounds: 3 } }).success, false);
  });

  test('inconsistent batches are refused', () => {
    const bad = [
      { ...twoRounds(), rounds: 3 }, // numbers for 2 rounds
      { ...twoRounds(), ids: Int32Array.from([7, 8, 9]) }, // fewer tokens than the rounds name
      { ...twoRounds(), origins: Uint8Array.from([0, 1, 1, 9]) }, // unknown origin
      { ...twoRounds(), pieceEnds: Uint32Array.from([2, 1, 5, 11]) }, // pieces out of order
      { ...twoRounds(), pieceEnds: Uint32Array.from([2, 5, 9, 99]) }, // past the bytes
      {
        ...twoRounds(),
        numbers: Float64Array.from([0, 0, 0, -1, 0, 900, 0, 0, 0, 1, -1, -1, -1, -4, 2, 1, 3, 900, 2000, 300, 700, 20, 3, -1, 1, 1.5]),
      },
      {
        ...twoRounds(),
        numbers: Float64Array.from([0, 0, 0, -1, 0, 900, 0, 0, 0, 1, -1, -1, -1, 4, 2, 1, 3, 900, 2000, 300, 700, 20, 3, -2, 1, 1.5]),
      }, // bad member
      {
        ...twoRounds(),
        numbers: Float64Array.from([0, 0, 0, -1, 0, 900, 0, 0, 0, 1, -1, -1, -1, 4, 2, 1, 3, 900, 2000, 300, 700, 20, 3, -1, 2, 1.5]),
      }, // bad source
      {
        ...twoRounds(),
        numbers: Float64Array.from([0, 0, 0, -1, 0, 900, 0, 0, 0, 1, -1, -1, -1, 4, 2, 1, 3, 900, 2000, 300, 700, 20, 3, -1, 1, 4.5]),
      }, // expected more than proposed
      { ...twoRounds(), ids: [7, 8, 9, 10] }, // not a typed array
    ];
    for (const b of bad) assert.equal(RoundBatch.safeParse(b).success, false);
  });
});
