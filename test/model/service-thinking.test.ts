// Thinking in the chat: a reply of a model whose template has thinking tags is read by llama.cpp's
// parser as it streams, its thinking apart from its answer (the tokens through the end tag, the
// time, whether the budget ended it), and the budget is llama.cpp's reasoning budget. The prompt
// is llama.cpp's application of the template (enable_thinking as the reply asks; earlier thinking
// given back as reasoning_content, kept or dropped as the template does), checked here against
// applyChat itself. A random-weight model never ends its thinking by itself: the budget or
// maxTokens does. A budgeted reply with every proposer family equals its autoregressive control.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { AssistantMessage, Chat, ChatSampling } from '../../app/contract/api/chats.js';
import type { RoundsEvent } from '../../app/contract/api/generation.js';
import { EngineClient } from '../../app/engine/client.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { makePoisonedModels } from '../fixtures/hostile-gguf.js';
import { thinkingModels, type ThinkingModels } from '../fixtures/models.js';
import { serviceForSuite, startedReply, type ReplyEnd } from '../fixtures/service.js';

type Sampling = Partial<ChatSampling>;

describe('thinking in the chat', () => {
  const f = serviceForSuite();
  let models: ThinkingModels;
  /** library ids by the fixture's names */
  const ids: Record<'target' | 'draft' | 'hybrid' | 'deepseekR1', string> = { target: '', draft: '', hybrid: '', deepseekR1: '' };
  /** an engine of the test's own, for llama.cpp's application of the templates */
  let engine: EngineClient;
  const engineIds: Record<string, string> = {};

  before(async () => {
    models = await thinkingModels();
    for (const key of Object.keys(ids) as (keyof typeof ids)[]) {
      ids[key] = (await f.service.models.add({ path: models[key] })).added[0]!.id;
    }
    engine = EngineClient.start();
  });
  after(() => engine?.close());

  async function load(key: keyof typeof ids, draftMethod?: { strategy: 'draft-model' | 'ngram' | 'mtp'; fallbacks?: 'mtp'[] }) {
    await f.service.engine.load({
      modelId: ids[key],
      device: 'cpu',
      threads: 1,
      contextSize: 1024,
      ...(draftMethod
        ? { draftMethod: { ...draftMethod, ...(draftMethod.strategy === 'draft-model' ? { draftId: ids.draft } : {}) } }
        : {}),
    });
  }

  /** llama.cpp's application of a model's template, and the prompt's tokens as the service tokenizes it */
  async function applied(key: 'target' | 'deepseekR1', messages: object[], enableThinking: boolean) {
    engineIds[key] ??= (await engine.call('loadModel', { path: models[key], gpuLayers: 0 })).modelId;
    const modelId = engineIds[key];
    const result = await engine.call('applyChat', { modelId, messages, tools: [], toolChoice: 'auto', enableThinking });
    const tokens = await engine.call('tokenize', { modelId, text: result.prompt, addSpecial: true, parseSpecial: true });
    const end = await engine.call('tokenize', { modelId, text: result.thinkingEndTags[0] ?? '', addSpecial: false, parseSpecial: true });
    // the generation prompt's tokens after its <think>: llama.cpp's budget counts them
    const gp = await engine.call('tokenize', { modelId, text: result.generationPrompt, addSpecial: false, parseSpecial: true });
    const start = await engine.call('tokenize', { modelId, text: result.thinkingStartTag, addSpecial: false, parseSpecial: true });
    const at = Array.from(gp).lastIndexOf(start[0]!);
    return { result, promptTokens: tokens.length, endTag: Array.from(end), prefillAfterStart: at < 0 ? 0 : gp.length - at - start.length };
  }

  /** A reply to `content` (or a regenerated one), its end, the stored message and the events' last thinking. */
  async function reply(
    chatId: string,
    how: { content: string } | { regenerate: true },
    sampling: Sampling = {},
    profileId?: string,
  ): Promise<{ end: ReplyEnd; message: AssistantMessage; chat: Chat; streamed: RoundsEvent['thinking'][] }> {
    const streamed: RoundsEvent['thinking'][] = [];
    const off = f.service.generation.onRounds((e) => {
      if (e.chatId === chatId) streamed.push(e.thinking);
    });
    const options = { chatId, sampling: { maxTokens: 20, ...sampling }, ...(profileId ? { profileId } : {}) };
    const { end } = await startedReply(
      f.service,
      'content' in how ? f.service.chats.send({ ...options, content: how.content }) : f.service.chats.regenerate(options),
    );
    const ended = await end;
    off();
    assert.equal(ended.kind, 'done', JSON.stringify(ended.error));
    const chat = await f.service.chats.get({ chatId });
    const message = chat.messages.at(-1)!;
    assert.ok(message.role === 'assistant');
    return { end: ended, message, chat, streamed };
  }

  /** the thinking of a reply the budget ended: through the forced end tag, the answer after it */
  function assertBudgeted(message: AssistantMessage, budget: number, prefillAfterStart: number, endTag: number[]): void {
    const thinking = message.thinking;
    assert.ok(thinking, 'the reply has its thinking');
    // llama.cpp's budget counts the thinking's tokens from its start tag (the generation
    // prompt's after it too), then forces the end tag
    assert.equal(thinking.tokens, budget - prefillAfterStart + endTag.length, JSON.stringify(thinking));
    assert.deepEqual(
      message.tokens.slice(thinking.tokens - endTag.length, thinking.tokens).map((t) => t.id),
      endTag,
      'the thinking ends with the end tag',
    );
    assert.equal(thinking.done, true);
    assert.equal(thinking.forced, true);
    assert.ok(thinking.ms !== null && thinking.ms >= 0, 'the thinking is timed');
    const thought = message.tokens
      .slice(0, thinking.tokens - endTag.length)
      .map((t) => t.text)
      .join('');
    assert.equal(thinking.text.trim(), thought.trim(), 'the thinking is the text before the end tag');
    const answer = message.tokens
      .slice(thinking.tokens)
      .map((t) => t.text)
      .join('');
    assert.equal(message.content.trim(), answer.trim(), 'the content is the answer alone');
    assert.ok(!message.content.includes('</think>'));
  }

  test('a Qwen 3.5-template chat with a budget: the thinking (forced at the budget, timed) apart from the answer, as it streams', async () => {
    await load('target');
    const chat = await f.service.chats.create({});
    const { message, chat: after, streamed } = await reply(chat.id, { content: 'Why is the sky blue?' }, { thinkingBudget: 6 });
    const { prefillAfterStart, endTag } = await applied('target', [{ role: 'user', content: 'Why is the sky blue?' }], true);
    assertBudgeted(message, 6, prefillAfterStart, endTag);
    assert.ok(message.content.length > 0, 'an answer after the thinking');
    assert.equal(message.tokens.length, 20);
    // the stream carried the thinking: unfinished first, then as stored
    assert.ok(
      streamed.every((t) => t !== undefined),
      'every batch carries the thinking',
    );
    assert.deepEqual(streamed.at(-1), message.thinking);
    assert.equal(streamed[0]!.done, streamed.length === 1);
    assert.deepEqual(after.thinking, { enabled: true, budget: 6 }, 'the chat remembers the budget');
    assert.deepEqual([message.sampling.thinking, message.sampling.thinkingBudget], [true, 6]);
  });

  test('the second turn gives the first thinking back as reasoning_content: the prompt is llama.cpp’s, which drops it as Qwen 3.5’s template does', async () => {
    await load('target');
    const chat = await f.service.chats.create({});
    const first = await reply(chat.id, { content: 'Why is the sky blue?' }, { thinkingBudget: 4 });
    // no sampling: the chat's budget applies
    const second = await reply(chat.id, { content: 'And the sunset?' });
    const history = [
      { role: 'user', content: 'Why is the sky blue?' },
      { role: 'assistant', content: first.message.content, reasoning_content: first.message.thinking!.text },
      { role: 'user', content: 'And the sunset?' },
    ];
    const withThinking = await applied('target', history, true);
    assert.equal(second.message.stats!.promptTokens, withThinking.promptTokens, 'the prompt is llama.cpp’s application of the history');
    const without = await applied('target', [history[0]!, { role: 'assistant', content: first.message.content }, history[2]!], true);
    assert.equal(withThinking.result.prompt, without.result.prompt, 'Qwen 3.5’s template drops an earlier turn’s thinking');
    assertBudgeted(second.message, 4, withThinking.prefillAfterStart, withThinking.endTag);
  });

  test('thinking off: no thinking block, and the prompt ends with the template’s closed thinking; the chat remembers it', async () => {
    await load('target');
    const chat = await f.service.chats.create({});
    const off = await reply(chat.id, { content: 'Why is the sky blue?' }, { thinking: false, thinkingBudget: 5 });
    const { result, promptTokens } = await applied('target', [{ role: 'user', content: 'Why is the sky blue?' }], false);
    assert.ok(result.generationPrompt.endsWith('<think>\n\n</think>\n\n'), JSON.stringify(result.generationPrompt));
    assert.equal(off.message.stats!.promptTokens, promptTokens);
    assert.equal(off.message.thinking, undefined);
    assert.ok(
      off.streamed.every((t) => t === undefined),
      'no batch carries a thinking',
    );
    assert.equal(off.message.content, off.message.tokens.map((t) => t.text).join(''), 'the content is the reply’s text');
    assert.deepEqual(off.chat.thinking, { enabled: false, budget: 5 });
    const again = await reply(chat.id, { regenerate: true });
    assert.equal(again.message.thinking, undefined, 'the chat’s switch applies to the next reply');
    assert.equal(again.message.sampling.thinking, false);
  });

  test('a reply cut by maxTokens inside its thinking keeps it unfinished, with no answer', async () => {
    await load('target');
    const chat = await f.service.chats.create({});
    const { message, end } = await reply(chat.id, { content: 'Why is the sky blue?' }, { maxTokens: 5 });
    assert.equal(end.stopReason, 'max-tokens');
    assert.deepEqual({ ...message.thinking, text: undefined }, { text: undefined, tokens: 5, done: false, ms: null, forced: false });
    assert.equal(message.thinking!.text, message.tokens.map((t) => t.text).join(''));
    assert.equal(message.content, '');
  });

  test('a profile’s thinking budget and switch apply where the chat has none', async () => {
    await load('target');
    const profile = await f.service.profiles.importToml({ name: 'short thoughts', toml: 'spec_mode = "none"\nthinking_budget = 3\n' });
    assert.equal(profile.thinkingBudget, 3);
    assert.match((await f.service.profiles.exportToml({ profileId: profile.id })).toml, /thinking_budget = 3/);
    const chat = await f.service.chats.create({});
    const { message, chat: after } = await reply(chat.id, { content: 'Why is the sky blue?' }, {}, profile.id);
    const { prefillAfterStart, endTag } = await applied('target', [{ role: 'user', content: 'Why is the sky blue?' }], true);
    assertBudgeted(message, 3, prefillAfterStart, endTag);
    assert.equal(after.thinking, undefined, 'the chat was not asked: it keeps no setting');
    // a profile made in the app may switch thinking off
    const quiet = await f.service.profiles.create({ name: 'no thoughts', strategy: 'none', k: 1, thinking: false });
    const other = await f.service.chats.create({});
    const off = await reply(other.id, { content: 'Why is the sky blue?' }, {}, quiet.id);
    assert.equal(off.message.thinking, undefined);
    assert.equal(off.message.sampling.thinking, false);
  });

  test('a DeepSeek-R1-template chat thinks (its template reads enable_thinking) and the budget ends it', async () => {
    await load('deepseekR1');
    const chat = await f.service.chats.create({});
    const { message } = await reply(chat.id, { content: 'Why is the sky blue?' }, { thinkingBudget: 5 });
    const { result, promptTokens, prefillAfterStart, endTag } = await applied(
      'deepseekR1',
      [{ role: 'user', content: 'Why is the sky blue?' }],
      true,
    );
    assert.ok(result.prompt.endsWith('<think>\n'), 'the generation prompt opens the thinking');
    assert.equal(message.stats!.promptTokens, promptTokens);
    assertBudgeted(message, 5, prefillAfterStart, endTag);
    const off = await reply(chat.id, { regenerate: true }, { thinking: false });
    assert.equal(off.message.thinking, undefined);
    assert.equal(
      off.message.stats!.promptTokens,
      (await applied('deepseekR1', [{ role: 'user', content: 'Why is the sky blue?' }], false)).promptTokens,
    );
  });

  test('a template that loops is refused by the bounded rendering before llama.cpp applies it; the engine goes on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'power-loop-template-'));
    try {
      const { templateLoop } = await makePoisonedModels(dir);
      const { added } = await f.service.models.add({ path: templateLoop });
      await f.service.engine.load({ modelId: added[0]!.id, device: 'cpu', threads: 1, contextSize: 256 });
      const chat = await f.service.chats.create({});
      await assert.rejects(f.service.chats.send({ chatId: chat.id, content: 'hi', sampling: { maxTokens: 4 } }), (error: Error) => {
        assert.match(error.message, /chat template (did not finish within 5 s|ran out of its 128 MB of memory)/);
        return true;
      });
      assert.equal((await f.service.chats.get({ chatId: chat.id })).messages.length, 0, 'the refused reply left the chat as it was');
      assert.equal((await f.service.engine.state({})).status, 'ready');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  const configs = [
    { label: 'draft-model', model: 'target' as const, method: { strategy: 'draft-model' as const } },
    { label: 'ngram', model: 'target' as const, method: { strategy: 'ngram' as const } },
    { label: 'mtp', model: 'hybrid' as const, method: { strategy: 'mtp' as const } },
    { label: 'ngram,mtp', model: 'hybrid' as const, method: { strategy: 'ngram' as const, fallbacks: ['mtp' as const] } },
  ];
  for (const c of configs) {
    for (const [mode, sampling] of [
      ['greedy', {}],
      ['seeded', { temperature: 0.8, seed: 11 }],
    ] as const) {
      test(`a budgeted reply with ${c.label} (${mode}) equals its autoregressive control, thinking and all`, async () => {
        await load(c.model, c.method);
        const chat = await f.service.chats.create({});
        // a passage said twice: prompt lookup finds its n-grams
        const content = 'the sky is blue because the sky is blue because the sky is blue';
        // prompt lookup needs a reply that repeats itself: the random model's does where sampling
        // keeps close to its top token (a cooler temperature, still sampled with its seed)
        const lookup = c.label === 'ngram' && mode === 'seeded';
        const asked = { ...sampling, ...(lookup ? { temperature: 0.1 } : {}), maxTokens: lookup ? 64 : 24, thinkingBudget: 8 };
        const control = await reply(chat.id, { content }, asked, 'autoregressive');
        const spec = await reply(chat.id, { regenerate: true }, asked, 'balanced');
        const run = (r: typeof control) => ({ digest: r.end.digest!, tokens: r.message.tokens.map((t) => t.id), stats: r.end.stats });
        assertDraftedSameAsControl(run(spec), run(control), { label: `${c.label} ${mode}, budget 8` });
        assert.ok(control.message.thinking?.forced, 'the budget ended the control’s thinking');
        assert.deepEqual({ ...spec.message.thinking, ms: 0 }, { ...control.message.thinking, ms: 0 }, 'the same thinking');
        assert.equal(spec.message.content, control.message.content, 'the same answer');
      });
    }
  }
});
