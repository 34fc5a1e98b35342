// Branches in the service over the real engine host on target.gguf: Regenerate keeps every
// version, the conversation (and the next reply's prompt) goes on from the version shown, an
// edit keeps the old question, a fork is a chat of its own that outlives its source, and a
// switch while the chat's reply streams is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { Chat } from '../../app/contract/api/chats.js';
import { versionOf } from '../../app/contract/branches.js';
import { pngImage } from '../fixtures/images.js';
import { ask, serviceForSuite, startedReply, streamingReply } from '../fixtures/service.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('service branches', () => {
  const f = serviceForSuite();
  const load = () => f.service.engine.load({ modelId: f.models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 1024 });
  const replyOf = async (request: Promise<{ assistantMessageId: string }>) => (await startedReply(f.service, request)).end;

  test('regenerate twice keeps three versions; the conversation and the next prompt go on from the one shown', async () => {
    const { service } = f;
    await load();
    const chat = await service.chats.create({ title: 'versions' });
    await ask(service, chat.id, 'tell me a story', { maxTokens: 2 });
    for (const maxTokens of [6, 12]) {
      const end = await replyOf(service.chats.regenerate({ chatId: chat.id, sampling: { maxTokens } }));
      assert.equal(end.kind, 'done', JSON.stringify(end.error));
    }
    let shown = await service.chats.get({ chatId: chat.id });
    assert.equal(shown.messages.length, 2);
    assert.deepEqual(versionOf(shown, 1), { shown: 2, count: 3 });
    const lengths = (c: Chat) =>
      [c.branches![0]!.tails, [c.messages.slice(1)]].flat().map((t) => t[0]!.role === 'assistant' && t[0]!.tokens.length);
    assert.deepEqual(lengths(shown), [2, 6, 12]);

    // a fork of each version: the same conversation in a chat of its own
    const forkOf = async (to: number): Promise<Chat> => {
      const c = await service.chats.switchBranch({ chatId: chat.id, messageId: shown.messages[1]!.id, to });
      shown = c;
      return service.chats.fork({ chatId: chat.id, messageId: c.messages[1]!.id });
    };
    const late = await forkOf(2);
    const early = await forkOf(0);
    assert.deepEqual(versionOf(shown, 1), { shown: 0, count: 3 });
    assert.equal(shown.messages[1]!.role === 'assistant' && shown.messages[1]!.tokens.length, 2);
    assert.equal(early.title, 'versions (fork)');
    assert.deepEqual(
      early.messages.map((m) => m.content),
      shown.messages.map((m) => m.content),
    );
    assert.ok(
      early.messages.every((m, i) => m.id !== shown.messages[i]!.id),
      'a fork has ids of its own',
    );
    assert.equal(early.branches, undefined, 'a fork holds the conversation shown, not the other versions');

    // the next turn reads the version shown: its prompt is the early fork's, not the late one's
    const next = await ask(service, chat.id, 'and then?', { maxTokens: 4 });
    const inEarly = await ask(service, early.id, 'and then?', { maxTokens: 4 });
    const inLate = await ask(service, late.id, 'and then?', { maxTokens: 4 });
    assert.equal(next.end.stats!.promptTokens, inEarly.end.stats!.promptTokens);
    assert.equal(next.end.digest, inEarly.end.digest);
    assert.ok(inLate.end.stats!.promptTokens > next.end.stats!.promptTokens, 'the late version is the longer prompt');
    assert.deepEqual(
      next.chat.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );

    // the turn after it went with the early version: the late one shows without it
    shown = await service.chats.switchBranch({ chatId: chat.id, messageId: next.chat.messages[1]!.id, to: 2 });
    assert.equal(shown.messages.length, 2);
    shown = await service.chats.switchBranch({ chatId: chat.id, messageId: shown.messages[1]!.id, to: 0 });
    assert.equal(shown.messages.length, 4);
    await assert.rejects(
      service.chats.switchBranch({ chatId: chat.id, messageId: shown.messages[1]!.id, to: 3 }),
      (e: { code: string; message: string }) => e.code === 'bad-input' && /3 versions/.test(e.message),
    );
    await assert.rejects(
      service.chats.switchBranch({ chatId: chat.id, messageId: shown.messages[0]!.id, to: 0 }),
      (e: { code: string }) => e.code === 'bad-input',
    );
    await assert.rejects(
      service.chats.fork({ chatId: chat.id, messageId: crypto.randomUUID() }),
      (e: { code: string }) => e.code === 'not-found',
    );

    // the report holds every reply: three versions of the first, and the next turn's
    const file = await service.reports.exportChat({ chatId: chat.id, format: 'json' });
    const report = JSON.parse(Buffer.from(file.base64, 'base64').toString('utf8')) as { chat: { replies: { superseded: boolean }[] } };
    assert.deepEqual(
      report.chat.replies.map((r) => r.superseded),
      [true, true, false, false],
    );
  });

  test('an edit keeps the old question and its reply as the other version', async () => {
    const { service } = f;
    await load();
    const chat = await service.chats.create({});
    const first = await ask(service, chat.id, 'first question');
    const end = await replyOf(
      service.chats.editAndContinue({
        chatId: chat.id,
        messageId: first.chat.messages[0]!.id,
        content: 'other question',
        sampling: { maxTokens: 4 },
      }),
    );
    assert.equal(end.kind, 'done');
    const edited = await service.chats.get({ chatId: chat.id });
    assert.equal(edited.messages[0]!.content, 'other question');
    assert.deepEqual(versionOf(edited, 0), { shown: 1, count: 2 });
    const back = await service.chats.switchBranch({ chatId: chat.id, messageId: edited.messages[0]!.id, to: 0 });
    assert.deepEqual(back.messages, first.chat.messages, 'the old question and its reply, as they were');
  });

  test('a fork outlives its source, its images included', async () => {
    const { service } = f;
    await load();
    const image = await service.chats.addImage({ data: b64(pngImage(16, 16, 7)), name: 'dot.png' });
    const chat = await service.chats.create({ systemPrompt: 'be brief' });
    // target.gguf reads no images: the reply is an error reply, the message and its image stay
    await replyOf(service.chats.send({ chatId: chat.id, content: 'look', images: [{ sha256: image.sha256 }] }));
    const source = await service.chats.get({ chatId: chat.id });
    const fork = await service.chats.fork({ chatId: chat.id, messageId: source.messages[1]!.id });
    assert.equal(fork.systemPrompt, 'be brief');
    assert.deepEqual(
      fork.messages.map((m) => [m.role, m.content]),
      source.messages.map((m) => [m.role, m.content]),
    );
    assert.equal(fork.messages[0]!.role === 'user' && fork.messages[0]!.images?.[0]?.sha256, image.sha256);

    await service.chats.delete({ chatId: chat.id });
    assert.deepEqual(await service.chats.get({ chatId: fork.id }), fork);
    assert.equal((await service.chats.image({ sha256: image.sha256 })).type, 'image/png', "the fork's image stays");
  });

  test("a switch while the chat's reply streams is busy; a fork of what came before it is not", async () => {
    const { service } = f;
    await load();
    const chat = await service.chats.create({});
    await ask(service, chat.id, 'words', { maxTokens: 2 });
    await replyOf(service.chats.regenerate({ chatId: chat.id, sampling: { maxTokens: 3 } }));
    const source = await service.chats.get({ chatId: chat.id });
    await service.holdRepliesForTest(2);
    try {
      const { end } = await streamingReply(
        service,
        service.chats.send({ chatId: chat.id, content: 'long', sampling: { maxTokens: 1500 } }),
        1,
      );
      await assert.rejects(
        service.chats.switchBranch({ chatId: chat.id, messageId: source.messages[1]!.id, to: 0 }),
        (e: { code: string }) => e.code === 'busy',
      );
      const streaming = (await service.chats.get({ chatId: chat.id })).messages.at(-1)!;
      await assert.rejects(service.chats.fork({ chatId: chat.id, messageId: streaming.id }), (e: { code: string }) => e.code === 'busy');
      const fork = await service.chats.fork({ chatId: chat.id, messageId: source.messages[1]!.id });
      assert.equal(fork.messages.length, 2);
      await service.chats.stop({ chatId: chat.id });
      assert.equal((await end).stopReason, 'cancelled');
    } finally {
      await service.holdRepliesForTest(null);
    }
    const after = await service.chats.switchBranch({ chatId: chat.id, messageId: source.messages[1]!.id, to: 0 });
    assert.equal(after.messages.length, 2, 'once the reply has ended the switch is made');
  });
});
