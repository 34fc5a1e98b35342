// A model without a chat template ends its turn: Gemma 3 270M (base) has none, so chat replies
// and /v1/chat/completions prompt it with the ChatML fallback, whose end-of-turn marker
// `<|im_end|>` is no token of Gemma's; the model writes it as text. The reply stops there, the
// marker not shown (stop reason 'stop', finish_reason 'stop'), before its 64 tokens: a chat
// reply over /ws's service (and its next turn, which reuses the first one's tokens), and /v1
// whole and streamed. The /v1 prompt is the one llama-server would build (its token count is
// power-chat-template's, test/model/chat-prompt-matches-llama-server.test.ts compares the tokens).
// Skipped, with the reason, where the real model could not be installed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CHATML_END } from '../../app/service/conversation.js';
import { chatTemplateTool, referencePrompt } from '../fixtures/chat-template-reference.js';
import { http, sseData } from '../fixtures/http-client.js';
import { REAL_DIR, REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { startServeInProcess, type InProcessServe } from '../fixtures/serve-in-process.js';
import { ask } from '../fixtures/service.js';

const MAX_TOKENS = 64;
// a conversation the base model continues in kind: short answers, each closed by the marker
const MESSAGES = [
  { role: 'system', content: 'You answer with the name of a capital city, nothing else.' },
  { role: 'user', content: 'France?' },
  { role: 'assistant', content: 'Paris.' },
  { role: 'user', content: 'Germany?' },
  { role: 'assistant', content: 'Berlin.' },
  { role: 'user', content: 'Italy?' },
];

interface ChatCompletion {
  choices: { message: { content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number };
  power: { stopReason: string };
}

describe('Gemma 3 270M under the ChatML fallback stops at the end of its turn', { skip: realModelSkip() }, () => {
  let dir = '';
  let serve: InProcessServe;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-end-of-turn-'));
    serve = await startServeInProcess({ dataDir: dir, modelsDirs: [REAL_DIR] });
  });
  after(async () => {
    await serve?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (body: object) =>
    http(serve.origin, '/v1/chat/completions', {
      method: 'POST',
      headers: { ...serve.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'gemma-3-270m-q4_k_m', messages: MESSAGES, max_tokens: MAX_TOKENS, temperature: 0, ...body }),
    });

  const clean = (text: string): void => {
    assert.ok(!text.includes(CHATML_END) && !text.includes('<|im_start|>'), `the marker is not shown: ${JSON.stringify(text)}`);
  };

  test('/v1/chat/completions, whole and streamed: finish_reason stop before max_tokens, no marker', async () => {
    const r = await post({});
    assert.equal(r.status, 200, r.body);
    const whole = JSON.parse(r.body) as ChatCompletion;
    const content = whole.choices[0]!.message.content;
    clean(content);
    assert.equal(whole.choices[0]!.finish_reason, 'stop', JSON.stringify(content));
    assert.equal(whole.power.stopReason, 'stop');
    assert.ok(whole.usage.completion_tokens < MAX_TOKENS, `${whole.usage.completion_tokens} tokens: ${JSON.stringify(content)}`);
    assert.ok(content.trim().length > 0, 'the reply says something before its end of turn');
    const tool = chatTemplateTool();
    if (!('missing' in tool))
      assert.equal(whole.usage.prompt_tokens, referencePrompt(REAL_MODEL, MESSAGES).tokens.length, "llama-server's prompt");

    const s = await post({ stream: true });
    assert.equal(s.status, 200, s.body);
    const events = sseData(s.body);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events
      .slice(0, -1)
      .map((e) => JSON.parse(e) as { choices: { delta: { content?: string }; finish_reason: string | null }[] });
    const streamed = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(streamed, content);
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
  });

  test('a chat reply ends with stop reason stop, its text without the marker; the next turn reuses it', async () => {
    const { service } = serve;
    const entry = (await service.models.list({})).entries.find((e) => e.path === REAL_MODEL);
    assert.ok(entry, 'the real model is in the library');
    await service.engine.load({ modelId: entry.id, device: 'cpu', threads: 2, contextSize: 1024 });
    const chat = await service.chats.create({ systemPrompt: MESSAGES[0]!.content });
    /** One turn of the chat, whose reply must stop at its end of turn with the marker not shown. */
    const turnEndingInStop = async (content: string) => {
      const turn = await ask(service, chat.id, content, { maxTokens: MAX_TOKENS });
      assert.equal(turn.end.kind, 'done', JSON.stringify(turn.end.error));
      assert.equal(turn.end.stopReason, 'stop');
      const reply = turn.chat.messages.at(-1)!;
      assert.ok(reply.role === 'assistant');
      clean(reply.content);
      return { ...turn, reply };
    };

    const first = await turnEndingInStop('France?');
    const { reply } = first;
    assert.equal(reply.status, 'done');
    assert.ok(reply.tokens.length < MAX_TOKENS, `${reply.tokens.length} tokens: ${JSON.stringify(reply.content)}`);
    // what streamed is what was saved: every token's text adds up to the reply
    assert.equal(first.end.tokens.map((t) => t.text).join(''), reply.content);
    assert.equal(reply.tokens.map((t) => t.text).join(''), reply.content);

    const second = await turnEndingInStop('Germany?');
    // the first turn's prompt and reply were found in the engine's state
    assert.ok(second.end.stats!.reusedPromptTokens! > first.end.stats!.promptTokens, JSON.stringify(second.end.stats));
  });
});
