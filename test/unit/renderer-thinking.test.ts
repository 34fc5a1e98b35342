// The thinking in the page's logic: the live reply takes each batch's thinking, the message
// shows the answer alone, the thinking block's header, the stats' parts, and the sampling form's
// thinking switch and budget.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { ReplyThinking, RoundsEvent } from '../../app/contract/api/generation.js';
import { replyParts } from '../../app/contract/report/parts.js';
import { replyFromMessage, partStatsPart, pickReply, shownText, thinkingHeader } from '../../renderer/src/logic/reply.js';
import { checkSampling, DEFAULT_SAMPLING_FORM, samplingProblem, thinkingFormOf } from '../../renderer/src/logic/sampling.js';
import { applyLiveEvents } from '../../renderer/src/store/chats.js';
import { reply } from '../fixtures/chats.js';

const BALANCED = { id: 'balanced', name: 'Balanced' };
const IDS = [5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 13];

/** The stored reply as batches of the stream: one event per round, the thinking as it stood after it. */
async function streamed(thinkingTokens: number): Promise<{ events: RoundsEvent[]; message: Awaited<ReturnType<typeof reply>> }> {
  const message = await reply({
    id: 'm1',
    profile: BALANCED,
    strategy: 'ngram',
    k: 7,
    s: null,
    ids: IDS,
    accepted: [7, 3, 5],
    thinking: { tokens: thinkingTokens, text: 'reasoning' },
  });
  let seen = 0;
  const events = message.rounds.map((round): RoundsEvent => {
    seen += round.tokenIds.length;
    const done = seen > thinkingTokens;
    const thinking: ReplyThinking = {
      text: 'reasoning'.slice(0, Math.min(seen, thinkingTokens)),
      tokens: Math.min(seen, thinkingTokens),
      done,
      ms: done ? message.thinking!.ms : null,
      forced: false,
    };
    return {
      chatId: 'c1',
      messageId: 'm1',
      rounds: [{ ...round, texts: round.tokenIds.map(() => 'x') }],
      text: 'x'.repeat(round.tokenIds.length),
      stats: message.stats!,
      thinking,
    };
  });
  return { events, message };
}

describe('a thinking reply on the page', () => {
  test('the live reply keeps the latest thinking of its batches; a batch without one leaves it', async () => {
    const { events } = await streamed(5);
    let live = applyLiveEvents({}, events.slice(0, 1));
    assert.deepEqual([live.m1!.thinking?.tokens, live.m1!.thinking?.done], [1, false]);
    live = applyLiveEvents(live, events.slice(1, 2));
    assert.deepEqual([live.m1!.thinking?.tokens, live.m1!.thinking?.done], [5, true]);
    const { thinking: _thinking, ...plain } = events[2]!;
    live = applyLiveEvents(live, [plain]);
    assert.equal(live.m1!.thinking?.tokens, 5);
    assert.equal(live.m1!.tokens.length, 1 + 8 + 4);
  });

  test('the message shows nothing while the model thinks, then the tokens after the thinking, then the stored answer', async () => {
    const { events, message } = await streamed(5);
    const thinking = applyLiveEvents({}, events.slice(0, 1)).m1!;
    assert.equal(shownText(thinking, null), '');
    const answering = applyLiveEvents({}, events.slice(0, 2)).m1!;
    assert.equal(shownText(answering, null), 'xxxx', 'the 4 tokens of round 2 after the thinking');
    const stored = { ...message, content: 'The answer.' };
    assert.equal(shownText(pickReply('c1', stored, undefined), stored), 'The answer.');
    // a reply that does not think shows its tokens as before
    const plain = await reply({ id: 'p', profile: BALANCED, strategy: 'ngram', k: 7, s: null, ids: IDS });
    assert.equal(shownText(replyFromMessage('c1', plain), plain), 'x'.repeat(IDS.length));
  });

  test('a stored reply read back after the stream keeps its thinking in the view', async () => {
    const { events, message } = await streamed(5);
    const live = applyLiveEvents({}, events.slice(0, 1)).m1!;
    const view = pickReply('c1', message, { ...live, status: 'done' });
    assert.equal(view.thinking?.tokens, 5);
  });

  test('the thinking block says how long and how many tokens, while it streams, when the budget ended it, and when it was stopped', () => {
    const t = (over: Partial<ReplyThinking>): ReplyThinking => ({ text: '', tokens: 842, done: true, ms: 12_345, forced: false, ...over });
    assert.equal(thinkingHeader(t({}), 'done'), 'Thought for 12.3 s · 842 tokens');
    assert.equal(thinkingHeader(t({ tokens: 312, done: false, ms: null }), 'streaming'), 'Thinking… 312 tokens');
    assert.equal(thinkingHeader(t({ forced: true }), 'streaming'), 'Thought for 12.3 s · 842 tokens (budget reached)');
    assert.equal(thinkingHeader(t({ tokens: 1, done: false, ms: null }), 'stopped'), 'Thinking stopped · 1 token');
  });

  test("the stats name each part's tokens, acceptance and tok/s (no acceptance for the control)", async () => {
    const { message } = await streamed(5);
    const parts = replyParts(message)!;
    assert.equal(partStatsPart('thinking', parts.thinking, 'ngram'), 'thinking 5 tokens, 100.0% accepted, 1429 tok/s');
    assert.equal(partStatsPart('answer', parts.answer, 'ngram'), 'answer 9 tokens, 35.3% accepted, 3000 tok/s');
    assert.equal(partStatsPart('answer', parts.answer, 'none'), 'answer 9 tokens, 3000 tok/s');
  });
});

describe("the sampling form's thinking", () => {
  test('thinking is on by default with no budget; the switch and a budget are sent', () => {
    const plain = checkSampling(DEFAULT_SAMPLING_FORM);
    assert.ok(plain.ok);
    assert.deepEqual(plain.ok && [plain.sampling.thinking, plain.sampling.thinkingBudget ?? null], [true, null], 'null: no limit');
    const off = checkSampling({ ...DEFAULT_SAMPLING_FORM, thinking: 'off' });
    assert.equal(off.ok && off.sampling.thinking, false);
    const budget = checkSampling({ ...DEFAULT_SAMPLING_FORM, thinkingBudget: ' 256 ' });
    assert.equal(budget.ok && budget.sampling.thinkingBudget, 256);
    assert.equal(checkSampling({ ...DEFAULT_SAMPLING_FORM, thinkingBudget: '0' }).ok, true, 'a budget of 0 answers without thinking');
  });

  test('a budget that is not a whole number from 0 to 1,000,000 is refused with a clear message', () => {
    for (const bad of ['-1', '1.5', '1000001', 'lots']) {
      const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, thinkingBudget: bad });
      assert.equal(r.ok, false, bad);
      if (r.ok) continue;
      assert.equal(
        samplingProblem(r.errors),
        'Fix Thinking budget under Sampling: Thinking budget must be a whole number of tokens from 0 to 1000000, or empty for no limit.',
      );
    }
  });

  test('with thinking off the budget is neither checked nor sent', () => {
    const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, thinking: 'off', thinkingBudget: 'lots' });
    assert.ok(r.ok);
    assert.equal(r.ok && (r.sampling.thinkingBudget ?? null), null);
  });

  test("a chat opens with its own thinking setting, else the active profile's, else on with no limit", () => {
    const profile = { thinking: false, thinkingBudget: 64 };
    assert.deepEqual(thinkingFormOf({ thinking: { enabled: true, budget: 200 } }, profile), { thinking: 'on', thinkingBudget: '200' });
    assert.deepEqual(thinkingFormOf({ thinking: { enabled: true, budget: null } }, profile), { thinking: 'on', thinkingBudget: '' });
    assert.deepEqual(thinkingFormOf({}, profile), { thinking: 'off', thinkingBudget: '64' });
    assert.deepEqual(thinkingFormOf(null, undefined), { thinking: 'on', thinkingBudget: '' });
    // what the form then sends is what the chat asked for
    const sent = checkSampling({ ...DEFAULT_SAMPLING_FORM, ...thinkingFormOf({ thinking: { enabled: true, budget: 200 } }, profile) });
    assert.ok(sent.ok);
    assert.equal(sent.sampling.thinkingBudget, 200);
  });
});
