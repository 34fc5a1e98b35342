// A thinking reply's figures per part (app/contract/report/parts.ts): the thinking and the answer
// split at ReplyThinking.tokens, a round that straddles the boundary split by position.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { replyParts, splitParts, type PartFigures } from '../../app/contract/report/parts.js';
import { reply } from '../fixtures/chats.js';

const IDS = [5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 13];
const BALANCED = { id: 'balanced', name: 'Balanced' };

/**
 * 14 tokens at K7 accepting 7, 3, then 0 (the fixture's rounds): round 1 emits position 0 at
 * 2 ms, round 2 positions 1-8 at 3.5 ms, round 3 positions 9-12 at 5 ms, round 4 position 13 at 6.5 ms.
 */
function thinkingReply(thinking: { tokens: number; ms?: number | null; forced?: boolean }) {
  return reply({ id: 'r1', profile: BALANCED, strategy: 'ngram', k: 7, s: null, ids: IDS, accepted: [7, 3, 5], thinking });
}

function sum(a: PartFigures, b: PartFigures, key: 'tokens' | 'rounds' | 'verifyRounds' | 'proposed' | 'accepted'): number {
  return a[key] + b[key];
}

describe('a reply split into its thinking and its answer', () => {
  test('a reply that did not think has no parts', async () => {
    const m = await reply({ id: 'r0', profile: BALANCED, strategy: 'ngram', k: 7, s: null, ids: IDS, accepted: [7, 3, 5] });
    assert.equal(m.thinking, undefined);
    assert.equal(replyParts(m), null);
  });

  test('a round that straddles the end of the thinking: its tokens and proposals split by position, the round goes to its first token', async () => {
    const m = await thinkingReply({ tokens: 5 });
    const parts = replyParts(m)!;
    // round 2 starts at position 1: its proposals 1-4 stood for positions 1-4 (thinking), 5-7 for the answer
    assert.deepEqual(parts.thinking, {
      tokens: 5,
      rounds: 2,
      verifyRounds: 1,
      proposed: 4,
      accepted: 4,
      acceptanceRate: 1,
      tokensPerRound: 2.5,
      ms: 3.5,
      tokensPerSecond: 5000 / 3.5,
    });
    assert.deepEqual(parts.answer, {
      tokens: 9,
      rounds: 2,
      verifyRounds: 2,
      proposed: 3 + 7 + 7,
      accepted: 3 + 3,
      acceptanceRate: 6 / 17,
      tokensPerRound: 4.5,
      ms: 3,
      tokensPerSecond: 3000,
    });
    assert.deepEqual([parts.done, parts.forced], [true, false]);
  });

  test("the parts add up to the reply's tokens, rounds, proposals and acceptances", async () => {
    for (const tokens of [0, 1, 5, 9, 13, 14]) {
      const m = await thinkingReply({ tokens });
      const parts = replyParts(m)!;
      const { thinking, answer } = parts;
      assert.equal(thinking.tokens, tokens, `${tokens}: the thinking's tokens are thinking.tokens`);
      assert.equal(sum(thinking, answer, 'tokens'), m.tokens.length);
      assert.equal(sum(thinking, answer, 'rounds'), m.rounds.length);
      assert.equal(sum(thinking, answer, 'verifyRounds'), m.stats!.rounds);
      assert.equal(sum(thinking, answer, 'proposed'), m.stats!.proposed);
      assert.equal(sum(thinking, answer, 'accepted'), m.stats!.accepted);
    }
  });

  test("a rejected proposal, and those drafted after it, count in the part of the mismatch's position", async () => {
    // round 3 (positions 9-12) accepted 3 of 7: its mismatch is at position 12
    const answerSide = replyParts(await thinkingReply({ tokens: 11 }))!;
    assert.deepEqual([answerSide.thinking.proposed, answerSide.thinking.accepted], [7 + 2, 7 + 2]);
    const thinkingSide = replyParts(await thinkingReply({ tokens: 13 }))!;
    assert.deepEqual([thinkingSide.thinking.proposed, thinkingSide.thinking.accepted], [7 + 7, 7 + 3]);
    assert.deepEqual([thinkingSide.answer.proposed, thinkingSide.answer.accepted], [7, 0]);
  });

  test('a boundary between two rounds gives each round wholly to one part', async () => {
    const parts = replyParts(await thinkingReply({ tokens: 9 }))!;
    assert.deepEqual([parts.thinking.tokens, parts.thinking.rounds, parts.thinking.proposed, parts.thinking.accepted], [9, 2, 7, 7]);
    assert.deepEqual([parts.answer.tokens, parts.answer.rounds, parts.answer.proposed, parts.answer.accepted], [5, 2, 14, 3]);
    assert.equal(parts.thinking.ms, 3.5);
    assert.equal(parts.answer.ms, 3);
  });

  test('while it still thinks every token is the thinking, timed to the last round, and the answer has no time', async () => {
    const parts = replyParts(await thinkingReply({ tokens: 14, ms: null }))!;
    assert.equal(parts.done, false);
    assert.deepEqual([parts.thinking.tokens, parts.thinking.ms], [14, 6.5]);
    assert.deepEqual(parts.answer, {
      tokens: 0,
      rounds: 0,
      verifyRounds: 0,
      proposed: 0,
      accepted: 0,
      acceptanceRate: null,
      tokensPerRound: null,
      ms: null,
      tokensPerSecond: null,
    });
  });

  test('a thinking that the budget ended says so; an answer with no token yet has no rate', async () => {
    const parts = replyParts(await thinkingReply({ tokens: 14, ms: 6.5, forced: true }))!;
    assert.equal(parts.forced, true);
    assert.deepEqual([parts.answer.tokens, parts.answer.ms, parts.answer.tokensPerSecond], [0, 0, null]);
  });

  test("the engine's rounds and a report's samples split the same way (emitted counts stand for the tokens)", async () => {
    const m = await thinkingReply({ tokens: 5 });
    const samples = m.rounds.map((r) => ({ emitted: r.tokenIds.length, proposed: r.proposed, accepted: r.accepted, endUs: r.endUs }));
    assert.deepEqual(splitParts(samples, m.thinking), replyParts(m));
    assert.equal(splitParts(samples, undefined), null);
  });
});
