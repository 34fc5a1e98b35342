// Chats with images through the service and the real engine, on the synthetic gemma3 target and
// its projector (mmproj-swa-target.gguf): a reply to a message with an image equals the
// autoregressive control's with ngram and with a draft model (and with the Gemma 4 assistant on
// the gemma4 target and its projector), greedy and seeded, on the first
// turn and on a second one in the same chat (Regenerate is how the app's A/B reruns a turn); an
// edit keeps the message's images; a model without a projector answers with the reason and the
// chat keeps the message and its images; bad images and unknown ones are refused before
// anything changes.
import assert from 'node:assert/strict';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { ChatImage } from '../../app/contract/images.js';
import { pngImage, ppmImage } from '../fixtures/images.js';
import { syntheticModels } from '../fixtures/models.js';
import { serviceForSuite, startedReply, type ReplyEnd } from '../fixtures/service.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const TEXT = 'Describe this picture, then describe it again:';
const SEEDED = { temperature: 0.9, seed: 99 };

describe('chats with images', { timeout: 15 * 60_000 }, () => {
  const f = serviceForSuite();
  const dir = suiteTempDir('power-chat-images-');

  const load = (model: string, strategy: 'none' | 'ngram' | 'draft-model' | 'mtp', draft?: string) =>
    f.service.engine.load({
      modelId: f.models[model]!.id,
      device: 'cpu',
      threads: 1,
      contextSize: 1024,
      draftMethod: { strategy, ...(draft ? { draftId: f.models[draft]!.id } : {}) },
    });

  /** a reply started by `request`, to its end */
  const replied = async (request: Promise<{ assistantMessageId: string }>): Promise<ReplyEnd> =>
    (await startedReply(f.service, request)).end;

  for (const how of [
    { strategy: 'ngram' as const, model: 'swa-target.gguf' },
    { strategy: 'draft-model' as const, model: 'swa-target.gguf', draft: 'swa-draft-close.gguf' },
    // a strategy that reads the target's hidden rows: the Gemma 4 assistant, with the gemma4
    // target's own projector (mmproj-gemma4-target.gguf beside it)
    { strategy: 'mtp' as const, model: 'gemma4-target.gguf', draft: 'gemma4-assistant.gguf' },
  ]) {
    test(`${how.strategy}: a reply after an image equals the control's, greedy and seeded, on two turns`, async () => {
      const { service } = f;
      await load(how.model, how.strategy, how.draft);
      for (const sampling of [{ maxTokens: 40 }, { maxTokens: 40, ...SEEDED }]) {
        // added anew each time: the chat deleted at the end of the last round took them
        const image = await service.chats.addImage({ data: b64(pngImage(64, 64, 1)), name: 'one.png' });
        const second = await service.chats.addImage({ data: b64(ppmImage(48, 40, 2)) });
        const chat = await service.chats.create({});
        // each turn: the control, then the speculative reply in its place (as Regenerate and the A/B run it)
        const turn = async (send: Promise<{ assistantMessageId: string }>, what: string): Promise<ReplyEnd> => {
          const control = await replied(send);
          assert.equal(control.kind, 'done', JSON.stringify(control.error));
          const spec = await replied(service.chats.regenerate({ chatId: chat.id, profileId: 'balanced', sampling }));
          assert.equal(spec.kind, 'done', JSON.stringify(spec.error));
          assert.equal(spec.digest, control.digest, `${what} ${JSON.stringify(sampling)}: the speculative reply equals the control's`);
          assert.ok(spec.stats!.proposed > 0, `${what}: it drafted after the image`);
          return spec;
        };
        const first = await turn(
          service.chats.send({
            chatId: chat.id,
            content: TEXT,
            images: [{ sha256: image.sha256, name: 'one.png' }],
            sampling,
            profileId: 'autoregressive',
          }),
          'turn 1',
        );
        // a second turn in the same chat: its prompt holds turn 1, the image included
        const then = await turn(
          service.chats.send({ chatId: chat.id, content: 'And now?', sampling, profileId: 'autoregressive' }),
          'turn 2',
        );
        assert.ok(then.stats!.promptTokens > first.stats!.promptTokens, 'turn 2 reads turn 1');
        const third = await turn(
          service.chats.send({
            chatId: chat.id,
            content: 'And this one?',
            images: [{ sha256: second.sha256 }],
            sampling,
            profileId: 'autoregressive',
          }),
          'turn 3, a second image',
        );
        assert.ok(third.stats!.promptTokens > then.stats!.promptTokens);

        const stored = await service.chats.get({ chatId: chat.id });
        const users = stored.messages.filter((m) => m.role === 'user');
        assert.deepEqual(
          users.map((m) => (m.role === 'user' ? (m.images ?? []).map((i: ChatImage) => [i.sha256, i.type, i.name]) : [])),
          [[[image.sha256, 'image/png', 'one.png']], [], [[second.sha256, 'image/x-portable-anymap', undefined]]],
        );
        await service.chats.delete({ chatId: chat.id });
      }
    });
  }

  test('a second turn reuses the first, image included, and encodes no image again; an edit keeps the message’s images; the images stay in the data folder until no chat holds them', async () => {
    const { service, dataDir } = f;
    await load('swa-target.gguf', 'none');
    const image = await service.chats.addImage({ data: b64(pngImage(64, 64, 3)) });
    const chat = await service.chats.create({});
    const sent = await startedReply(
      service,
      service.chats.send({ chatId: chat.id, content: 'What is it?', images: [{ sha256: image.sha256 }], sampling: { maxTokens: 8 } }),
    );
    const pictured = await sent.end;
    assert.equal(pictured.kind, 'done');
    // the next turn keeps the state of the first, its image included: nothing encoded again
    const next = await replied(service.chats.send({ chatId: chat.id, content: 'And again?', sampling: { maxTokens: 8 } }));
    assert.equal(next.kind, 'done', JSON.stringify(next.error));
    assert.ok(
      next.stats!.reusedPromptTokens! >= pictured.stats!.promptTokens,
      `reused ${next.stats!.reusedPromptTokens} of ${next.stats!.promptTokens} (turn 1: ${pictured.stats!.promptTokens})`,
    );
    // the reply's stats say so: the projector encoded the image for turn 1 and not for turn 2
    assert.equal(pictured.stats!.imagesEncoded, 1);
    assert.equal(next.stats!.imagesEncoded, 0);
    // the image is in the prompt: the same text alone is a shorter prompt and another reply
    const alone = await replied(
      service.chats.send({ chatId: (await service.chats.create({})).id, content: 'What is it?', sampling: { maxTokens: 8 } }),
    );
    assert.ok(pictured.stats!.promptTokens > alone.stats!.promptTokens);
    assert.equal(alone.stats!.imagesEncoded, undefined, 'a prompt without images has no such figure');
    assert.notEqual(pictured.digest, alone.digest);
    const userId = (await service.chats.get({ chatId: chat.id })).messages[0]!.id;
    // an edit of the first message drops the second turn
    const edited = await replied(
      service.chats.editAndContinue({ chatId: chat.id, messageId: userId, content: 'What is it, really?', sampling: { maxTokens: 8 } }),
    );
    assert.equal(edited.kind, 'done', JSON.stringify(edited.error));
    const after = (await service.chats.get({ chatId: chat.id })).messages[0]!;
    assert.ok(after.role === 'user' && after.content === 'What is it, really?');
    assert.deepEqual(
      after.images?.map((i) => i.sha256),
      [image.sha256],
    );
    // the chat's JSON records the image, its bytes are the file named by its sha256
    const back = await service.chats.image({ sha256: image.sha256 });
    assert.deepEqual(back, { type: 'image/png', data: b64(pngImage(64, 64, 3)) });
    await service.chats.delete({ chatId: chat.id });
    assert.equal((await readdir(join(dataDir, 'chat-images'))).includes(image.sha256), false, 'gone with its chat');
  });

  test('a model without a projector answers with the reason; the chat keeps the message and its image', async () => {
    const { service } = f;
    await load('target.gguf', 'ngram');
    const image = await service.chats.addImage({ data: b64(pngImage(32, 32, 4)), name: 'cat.png' });
    const chat = await service.chats.create({});
    const end = await replied(
      service.chats.send({ chatId: chat.id, content: 'What is on it?', images: [{ sha256: image.sha256, name: 'cat.png' }] }),
    );
    assert.equal(end.kind, 'error');
    assert.equal(end.error!.code, 'unsupported');
    assert.match(end.error!.message, /target reads text only: images need its projector \(an mmproj-\*\.gguf beside the model file/);
    const stored = await service.chats.get({ chatId: chat.id });
    assert.deepEqual(
      stored.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    const [user, reply] = stored.messages;
    assert.ok(user!.role === 'user' && user!.content === 'What is on it?');
    assert.deepEqual(user!.images, [{ sha256: image.sha256, type: 'image/png', bytes: pngImage(32, 32, 4).length, name: 'cat.png' }]);
    assert.ok(reply!.role === 'assistant' && reply!.status === 'error' && reply!.tokens.length === 0);

    // the refused turn left nothing behind for the text chats on this model: a text prompt
    // after it is the one a fresh load gets (its BOS included)
    const textReply = async (): Promise<ReplyEnd> =>
      replied(service.chats.send({ chatId: (await service.chats.create({})).id, content: 'plain words', sampling: { maxTokens: 8 } }));
    const afterRefusal = await textReply();
    await load('target.gguf', 'none');
    const fresh = await textReply();
    assert.equal(afterRefusal.stats!.promptTokens, fresh.stats!.promptTokens);
    assert.equal(afterRefusal.digest, fresh.digest);

    // with the projector's model loaded, Regenerate answers the same message
    await load('swa-target.gguf', 'none');
    const again = await replied(service.chats.regenerate({ chatId: chat.id, sampling: { maxTokens: 8 } }));
    assert.equal(again.kind, 'done', JSON.stringify(again.error));
  });

  test('a projector the engine cannot use answers with the reason; the chat keeps the message and its image', async () => {
    const { service } = f;
    // the qwen35 hybrid target (width 128) beside a copy of the gemma3 projector of the same
    // width: the library pairs them, the engine refuses the pair (the model places images by M-RoPE)
    const set = await syntheticModels();
    await copyFile(set['hybrid-mtp.gguf'], join(dir(), 'hybrid-mtp.gguf'));
    await copyFile(join(set['swa-target.gguf'], '..', 'mmproj-swa-target.gguf'), join(dir(), 'mmproj-hybrid-mtp.gguf'));
    const { added } = await service.models.add({ path: join(dir(), 'hybrid-mtp.gguf') });
    const entry = added[0]!;
    assert.equal(entry.projector?.compatible, true, JSON.stringify(entry.projector));
    await service.engine.load({ modelId: entry.id, device: 'cpu', threads: 1, contextSize: 1024, draftMethod: { strategy: 'mtp' } });
    const image = await service.chats.addImage({ data: b64(pngImage(64, 64, 6)) });
    const chat = await service.chats.create({});
    const end = await replied(
      service.chats.send({ chatId: chat.id, content: 'What is it?', images: [{ sha256: image.sha256 }], sampling: { maxTokens: 8 } }),
    );
    assert.equal(end.kind, 'error');
    assert.match(end.error!.message, /places images with M-RoPE positions/);
    const stored = await service.chats.get({ chatId: chat.id });
    assert.deepEqual(
      stored.messages.map((m) => (m.role === 'user' ? m.images?.map((i) => i.sha256) : m.status)),
      [[image.sha256], 'error'],
    );
    // the model still answers text
    const text = await replied(
      service.chats.send({ chatId: (await service.chats.create({})).id, content: 'hello', sampling: { maxTokens: 8 } }),
    );
    assert.equal(text.kind, 'done', JSON.stringify(text.error));
  });

  test('bad and unknown images are refused before the chat changes', async () => {
    const { service } = f;
    await load('swa-target.gguf', 'none');
    const chat = await service.chats.create({});
    await assert.rejects(service.chats.addImage({ data: b64(Buffer.from('not a picture at all')) }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'bad-input');
      assert.match(e.message, /not an image format Power reads \(PNG, JPEG, GIF, BMP, PPM\/PGM\)/);
      return true;
    });
    // decodes as no image although it starts like a PNG: the engine says so, as the reply's error
    const broken = pngImage(16, 16, 5).slice(0, 40);
    const torn = await service.chats.addImage({ data: b64(broken) });
    const end = await replied(service.chats.send({ chatId: chat.id, content: 'and this?', images: [{ sha256: torn.sha256 }] }));
    assert.equal(end.kind, 'error');
    assert.match(end.error!.message, /image/i);
    const unknown = 'f'.repeat(64);
    await assert.rejects(
      service.chats.send({ chatId: chat.id, content: 'x', images: [{ sha256: unknown }] }),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'not-found');
        assert.match(e.message, /is not in the data folder \(add it again/);
        return true;
      },
    );
    assert.equal((await service.chats.get({ chatId: chat.id })).messages.length, 2, 'the refused send added nothing');
  });
});
