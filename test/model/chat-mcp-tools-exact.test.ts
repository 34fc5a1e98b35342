// Each turn of a tool loop equals its autoregressive control (issue 51, item 5). The same
// loop (a message, the reply that calls server-filesystem's list_allowed_directories, the call
// allowed once, the reply that goes on from its result by itself) runs under Balanced with every
// proposer family: draft-model and n-gram on the synthetic target, MTP and an n-gram → MTP chain
// on the synthetic hybrid (neither template has tool turns: calls and results are Power's generic
// JSON, and greedy or seeded both models call the one tool offered). Each turn is regenerated
// under the autoregressive profile from the same conversation, and must be the speculative turn's
// tokens and digest, greedy and seeded (the loop's next reply keeps the seed the calling reply
// used); each speculative turn must have drafted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { AssistantMessage, ChatSampling } from '../../app/contract/api/chats.js';
import type { McpServerConfig } from '../../app/contract/api/mcp.js';
import type { LoadOptions } from '../../app/contract/api/engine.js';
import type { z } from 'zod';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { filesystemServer } from '../fixtures/mcp-servers.js';
import { chatWhen, ended, replies, serviceForSuite } from '../fixtures/service.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

type DraftMethod = NonNullable<z.input<typeof LoadOptions>['draftMethod']>;

describe('each turn of a tool loop equals its autoregressive control', () => {
  const f = serviceForSuite();
  const folder = suiteTempDir('power-mcp-exact-');
  let added = false;

  async function load(model: string, draftMethod: DraftMethod): Promise<void> {
    await f.service.engine.load({ modelId: f.models[model]!.id, device: 'cpu', threads: 1, contextSize: 2048, draftMethod });
  }

  /** a chat with the server on, and the message sent under `profileId` */
  async function asked(profileId: string, sampling: Partial<ChatSampling>): Promise<{ chatId: string; messageId: string }> {
    const { service } = f;
    const server: McpServerConfig = { ...filesystemServer(folder(), 'files'), enabledTools: ['list_allowed_directories'] };
    if (!added) await service.mcp.add({ server });
    added = true;
    const { id: chatId } = await service.chats.create({});
    await service.mcp.setChatServers({ chatId, servers: ['files'] });
    const sent = await service.chats.send({ chatId, content: 'Which folders can you read?', sampling, profileId });
    return { chatId, messageId: sent.assistantMessageId };
  }

  /** the reply `messageId` once it has ended, which called the tool once */
  async function called(chatId: string, messageId: string, label: string): Promise<AssistantMessage> {
    const chat = await chatWhen(f.service, chatId, (c) => ended(replies(c).find((m) => m.id === messageId)));
    const m = replies(chat).find((r) => r.id === messageId)!;
    assert.equal(m.status, 'done', `${label}: ${JSON.stringify(m.error)}`);
    assert.equal(m.toolCalls?.length, 1, `${label}: the reply calls the tool: ${m.content}`);
    return m;
  }

  /** allows the call of the chat's one reply and waits for the reply that goes on from its result */
  async function goneOn(chatId: string, call: AssistantMessage, label: string): Promise<AssistantMessage> {
    const { service } = f;
    await service.mcp.answerToolCall({ chatId, messageId: call.id, callId: call.toolCalls![0]!.id, decision: 'once' });
    const chat = await chatWhen(service, chatId, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    assert.equal(replies(chat)[0]!.toolCalls![0]!.state, 'done', `${label}: ${JSON.stringify(replies(chat)[0]!.toolCalls)}`);
    const next = replies(chat)[1]!;
    assert.equal(next.status, 'done', `${label}: ${JSON.stringify(next.error)}`);
    return next;
  }

  /**
   * The loop's two turns under Balanced with `method`, and their controls. A call's id is new in
   * every reply and the next turn's prompt holds it, so the second turn's control goes on from a
   * fork of the speculative chat at the calling reply (the same call, the same id), with the
   * model loaded for no drafting: the loop goes on under the calling reply's profile, which then
   * drafts nothing.
   */
  async function loop(
    model: string,
    method: DraftMethod,
    sampling: Partial<ChatSampling>,
    label: string,
  ): Promise<{ spec: AssistantMessage[]; control: AssistantMessage[] }> {
    const { service } = f;
    await load(model, method);
    const a = await asked('balanced', sampling);
    const spec1 = await called(a.chatId, a.messageId, label);
    const fork = await service.chats.fork({ chatId: a.chatId, messageId: spec1.id });
    await service.mcp.setChatServers({ chatId: fork.id, servers: ['files'] });
    const spec2 = await goneOn(a.chatId, spec1, label);
    const c = await asked('autoregressive', sampling);
    const control1 = await called(c.chatId, c.messageId, `${label} control`);

    await load(model, { strategy: 'none' });
    const control2 = await goneOn(fork.id, replies(fork)[0]!, `${label} control`);
    for (const m of [control1, control2]) assert.equal(m.strategy, 'none', `${label}: the control drafted nothing`);
    return { spec: [spec1, spec2], control: [control1, control2] };
  }

  const configs: { label: string; model: string; method: DraftMethod }[] = [
    { label: 'draft-model', model: 'target.gguf', method: { strategy: 'draft-model', draftId: '' } },
    { label: 'ngram', model: 'target.gguf', method: { strategy: 'ngram' } },
    { label: 'mtp', model: 'hybrid-mtp.gguf', method: { strategy: 'mtp' } },
    { label: 'ngram,mtp', model: 'hybrid-mtp.gguf', method: { strategy: 'ngram', fallbacks: ['mtp'] } },
  ];
  for (const c of configs) {
    for (const [mode, sampling] of [
      ['greedy', { temperature: 0 }],
      ['seeded', { temperature: 0.8, seed: 11 }],
    ] as const) {
      test(`${c.label} (${mode}): the calling reply and the reply after the result equal the control's`, async () => {
        const method = c.method.strategy === 'draft-model' ? { ...c.method, draftId: f.models['draft-close.gguf']!.id } : c.method;
        const label = `${c.label} ${mode}`;
        const { spec, control } = await loop(c.model, method, { ...sampling, maxTokens: 160 }, label);
        const run = (m: AssistantMessage) => ({ digest: m.digest!, tokens: m.tokens.map((t) => t.id), stats: m.stats });
        assertDraftedSameAsControl(spec.map(run), control.map(run), { label, each: true });
        assert.deepEqual(
          spec.map((m) => m.content),
          control.map((m) => m.content),
          `${label}: the same text`,
        );
        assert.deepEqual(
          [spec[0]!.toolCalls![0]!.name, spec[0]!.toolCalls![0]!.arguments],
          [control[0]!.toolCalls![0]!.name, control[0]!.toolCalls![0]!.arguments],
          `${label}: the same call`,
        );
      });
    }
  }
});
