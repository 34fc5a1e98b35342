// Where a reply's thinking ends, counted as llama.cpp's reasoning budget counts it (by token ids,
// and by text for an end tag the model wrote in pieces); a reply split at its tags where the
// parser cannot read it; and which thinking switch and budget a chat reply takes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { ChatTemplateResult } from '../../app/engine/protocol.js';
import { thinkingSettings } from '../../app/service/chat-replies.js';
import { splitAtTags, ThinkingTracker, type ThinkingSeqs } from '../../app/service/thinking.js';

/** a template as llama.cpp's application reports it: only what the thinking reads */
function template(generationPrompt: string): ChatTemplateResult {
  return {
    prompt: '',
    format: 0,
    formatName: 'peg-native',
    grammar: '',
    grammarLazy: false,
    grammarPrefill: [],
    triggerPatterns: [],
    triggerTokens: [],
    generationPrompt,
    parser: '',
    preservedTokens: [],
    additionalStops: [],
    templateToolCalls: false,
    supportsThinking: true,
    thinkingStartTag: '<think>',
    thinkingEndTags: ['</think>'],
  };
}

const OPEN = template('<|im_start|>assistant\n<think>\n');
const CLOSED = template('<|im_start|>assistant\n');
// <think> is id 10, </think> id 11, the prefill's "\n" after <think> one counted token
const SEQS: ThinkingSeqs = { start: [10], ends: [[11]], prefill: [1, 2, 3, 10, 3], prefillAfterStart: 1 };

describe('ThinkingTracker', () => {
  test('a generation prompt that opens the thinking: it ends at the token that completes the end tag, forced where the budget ran out', () => {
    const t = new ThinkingTracker(OPEN, SEQS, 4, 1000);
    t.push([20, 21, 22], ['a', 'b', 'c'], 1010);
    assert.equal(t.thinking('abc')!.done, false);
    assert.equal(t.thinking('abc')!.tokens, 3);
    t.push([11, 30], ['</think>', 'x'], 1050);
    // three thinking tokens and the prefill's one: the budget of 4 forced the end
    assert.deepEqual(t.thinking('abc'), { text: 'abc', tokens: 4, done: true, ms: 50, forced: true });
  });

  test('a natural end within the budget is not forced; no budget, never forced', () => {
    const within = new ThinkingTracker(OPEN, SEQS, 8, 0);
    within.push([20, 11], ['a', '</think>'], 5);
    assert.equal(within.thinking('a')!.forced, false);
    const none = new ThinkingTracker(OPEN, SEQS, null, 0);
    none.push([20, 21, 22, 23, 24, 11], ['a', 'b', 'c', 'd', 'e', '</think>'], 5);
    assert.deepEqual({ ...none.thinking('abcde')!, ms: 0 }, { text: 'abcde', tokens: 6, done: true, ms: 0, forced: false });
  });

  test('an end tag written in pieces is found by its text', () => {
    const t = new ThinkingTracker(OPEN, SEQS, null, 0);
    t.push([20, 40, 41, 42, 30], ['a', '</', 'think', '>', 'x'], 0);
    assert.equal(t.thinking('a')!.tokens, 4);
  });

  test('a template that leaves the thinking to the model: it begins at the start tag; a reply without one has no thinking', () => {
    const t = new ThinkingTracker(CLOSED, { ...SEQS, prefillAfterStart: 0 }, 2, 0);
    assert.equal(t.thinking(''), undefined);
    t.push([10, 20, 21, 11, 30], ['<think>', 'a', 'b', '</think>', 'x'], 0);
    assert.deepEqual({ ...t.thinking('ab')!, ms: 0 }, { text: 'ab', tokens: 4, done: true, ms: 0, forced: true });
    const plain = new ThinkingTracker(CLOSED, SEQS, null, 0);
    plain.push([30, 31], ['x', 'y'], 0);
    assert.equal(plain.thinking(''), undefined);
  });
});

describe('splitAtTags', () => {
  test('the reasoning before the end tag, the answer after; an unfinished thinking has no answer', () => {
    assert.deepEqual(splitAtTags(OPEN, 'abc\n</think>\n\nanswer'), { reasoningContent: 'abc', content: 'answer' });
    assert.deepEqual(splitAtTags(OPEN, 'still thinking'), { reasoningContent: 'still thinking', content: '' });
    assert.deepEqual(splitAtTags(CLOSED, '<think>r</think>a'), { reasoningContent: 'r', content: 'a' });
    assert.deepEqual(splitAtTags(CLOSED, 'no thinking'), { reasoningContent: '', content: 'no thinking' });
  });
});

describe('thinkingSettings', () => {
  test('the request’s, else the chat’s, else the profile’s, else on with no budget', () => {
    const chat = { thinking: { enabled: false, budget: 100 } };
    const profile = { thinking: true, thinkingBudget: 7 };
    assert.deepEqual(thinkingSettings({ thinking: true, thinkingBudget: null }, chat, profile), { enabled: true, budget: null });
    assert.deepEqual(thinkingSettings({ thinkingBudget: 3 }, chat, profile), { enabled: false, budget: 3 });
    assert.deepEqual(thinkingSettings({}, chat, profile), { enabled: false, budget: 100 });
    assert.deepEqual(thinkingSettings(undefined, {}, profile), { enabled: true, budget: 7 });
    assert.deepEqual(thinkingSettings(undefined, {}, {}), { enabled: true, budget: null });
  });
});
