// The service over the real engine host: multi-turn chats that reuse the conversation's
// KV/recurrent state, every strategy the synthetic set offers (each reply identical to the
// control's), stop and regenerate, edit and continue, and the defined outcome of bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Report } from '../../app/contract/report/schema.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { ask, startedReply, startService, streamingReply, type ReplyEnd, type ServiceFixture } from '../fixtures/service.js';

describe('service chats', () => {
  let f: ServiceFixture;
  before(async () => {
    f = await startService();
  });
  after(() => f.dispose());

  for (const name of ['target.gguf', 'hybrid-mtp.gguf']) {
    test(`a multi-turn chat on ${name} reuses the conversation prefix`, async () => {
      const { service, models } = f;
      await service.engine.load({ modelId: models[name]!.id, device: 'cpu', threads: 1, contextSize: 1024 });
      await service.profiles.select({ profileId: 'autoregressive' });
      const chat = await service.chats.create({ systemPrompt: 'be brief' });
      const first = await ask(service, chat.id, 'hello there');
      assert.equal(first.end.kind, 'done', JSON.stringify(first.end.error));
      const s1 = first.end.stats!;
      assert.equal(s1.reusedPromptTokens! + s1.evaluatedPromptTokens!, s1.promptTokens);

      const second = await ask(service, chat.id, 'and again');
      assert.equal(second.end.kind, 'done');
      const s2 = second.end.stats!;
      // everything of turn one (its prompt and the reply the model generated) is still in the state
      assert.ok(
        s2.reusedPromptTokens! >= s1.promptTokens + first.end.tokens.length - 1,
        `reused ${s2.reusedPromptTokens} of ${s2.promptTokens}`,
      );
      assert.ok(s2.evaluatedPromptTokens! < s2.promptTokens - s1.promptTokens, `evaluated ${s2.evaluatedPromptTokens}`);

      const stored = second.chat;
      assert.deepEqual(
        stored.messages.map((m) => m.role),
        ['user', 'assistant', 'user', 'assistant'],
      );
      const reply = stored.messages[3]!;
      assert.ok(reply.role === 'assistant');
      assert.equal(reply.status, 'done');
      assert.equal(reply.tokens.length, second.end.tokens.length);
      assert.equal(reply.content, reply.tokens.map((t) => t.text).join(''));
      assert.equal(reply.digest, second.end.digest);
      assert.equal(reply.model.name, name.replace('.gguf', ''));
      assert.equal(reply.profile?.id, 'autoregressive');
      assert.equal(reply.strategy, 'none');
    });
  }

  const cases = [
    { target: 'target.gguf', strategy: 'ngram' as const },
    { target: 'target.gguf', strategy: 'draft-model' as const, draft: 'draft-close.gguf' },
    { target: 'hybrid-mtp.gguf', strategy: 'mtp' as const },
    { target: 'hybrid-mtp.gguf', strategy: 'ngram' as const },
  ];
  for (const c of cases) {
    test(`${c.strategy} on ${c.target} replies exactly what the control replies, K7/S7 and K7/S6`, async () => {
      const { service, models } = f;
      await service.engine.load({
        modelId: models[c.target]!.id,
        device: 'cpu',
        threads: 1,
        contextSize: 1024,
        draftMethod: { strategy: c.strategy, ...(c.draft ? { draftId: models[c.draft]!.id } : {}) },
      });
      const chat = await service.chats.create({});
      const control = await ask(service, chat.id, 'one two three one two three', { maxTokens: 40, profileId: 'autoregressive' });
      assert.equal(control.end.kind, 'done');
      for (const profileId of ['balanced', 'peak']) {
        const { end } = await startedReply(service, service.chats.regenerate({ chatId: chat.id, profileId, sampling: { maxTokens: 40 } }));
        const spec = await end;
        assert.equal(spec.kind, 'done', JSON.stringify(spec.error));
        assert.equal(spec.digest, control.end.digest, `${profileId}: same tokens as the control`);
        assert.ok(spec.stats!.proposed > 0, 'it proposed');
        const stored = await service.chats.get({ chatId: chat.id });
        const reply = stored.messages.at(-1)!;
        assert.ok(reply.role === 'assistant');
        assert.equal(stored.messages.length, 2, 'regenerate replaced the reply');
        assert.equal(reply.strategy, c.strategy);
        assert.equal(reply.k, 7);
        assert.equal(reply.s, c.target === 'hybrid-mtp.gguf' ? (profileId === 'peak' ? 6 : 7) : null);
        assert.ok(reply.tokens.some((t) => t.origin === 'accepted' || t.origin === 'bonus' || t.origin === 'correction'));
        assert.equal(reply.rounds.length, Math.max(...reply.tokens.map((t) => t.round)));
      }
      // the same profile again, same session: an attention-only target cuts its KV back to the
      // prompt for free; a recurrent state cannot go back 40 tokens (S = 6), so the prompt is
      // evaluated again, and the stats say so
      const { end } = await startedReply(
        service,
        service.chats.regenerate({ chatId: chat.id, profileId: 'peak', sampling: { maxTokens: 40 } }),
      );
      const again = await end;
      assert.equal(again.digest, control.end.digest);
      const recurrent = c.target === 'hybrid-mtp.gguf';
      assert.equal(again.stats!.reusedPromptTokens, recurrent ? 0 : again.stats!.promptTokens - 1);
      assert.equal(again.stats!.evaluatedPromptTokens, recurrent ? again.stats!.promptTokens : 1);

      // the replaced replies are kept as the other versions of the reply, for the chat's
      // report, whose every speculative request matches the control it was regenerated from
      const kept = await service.chats.get({ chatId: chat.id });
      assert.deepEqual(
        kept.branches!.map((b) => [b.after, b.shown, b.tails.map((t) => t.map((m) => (m.role === 'assistant' ? m.profile?.id : m.role)))]),
        [[kept.messages[0]!.id, 3, [['autoregressive'], ['balanced'], ['peak']]]],
      );
      const last = kept.messages[1]!;
      assert.ok(last.role === 'assistant');
      assert.equal(last.environment?.backend.kind, 'cpu');
      assert.equal(last.environment?.threads, 1);
      const file = await service.reports.exportChat({ chatId: chat.id, format: 'json' });
      const report = Report.parse(JSON.parse(Buffer.from(file.base64, 'base64').toString('utf8')));
      assert.deepEqual(
        report.requests.map((r) => [r.task, r.profile, r.matchesControl]),
        [
          ['turn 1', 'control', null],
          ['turn 1', 'Balanced K7/S7', true],
          ['turn 1', 'Peak K7/S6 (guarded)', true],
          ['turn 1', 'Peak K7/S6 (guarded)', true],
        ],
      );
      assert.equal(report.environment.backend?.kind, 'cpu');
      assert.equal(report.environment.models[0]!.name, c.target);
    });
  }

  test('a model loaded for a chain, with a custom profile of FR, p-min and adaptive K, replies what the control replies and records each round’s member', async () => {
    const { service, models } = f;
    await service.engine.load({
      modelId: models['hybrid-mtp.gguf']!.id,
      device: 'cpu',
      threads: 1,
      contextSize: 1024,
      draftMethod: { strategy: 'ngram-mod', fallbacks: ['mtp'] },
    });
    assert.deepEqual((await service.engine.state({})).options?.draftMethod.fallbacks, ['mtp']);
    const policy = await service.profiles.create({ name: 'chain policy', k: 5, s: 4, frVocab: 400, pMin: 0.2, adaptiveK: true });
    const chat = await service.chats.create({});
    const prompt = 'the cat sat on the mat and the cat sat on the mat';
    const control = await ask(service, chat.id, prompt, { maxTokens: 60, profileId: 'autoregressive' });
    assert.equal(control.end.kind, 'done');
    const { end } = await startedReply(
      service,
      service.chats.regenerate({ chatId: chat.id, profileId: policy.id, sampling: { maxTokens: 60 } }),
    );
    const spec = await end;
    assert.equal(spec.kind, 'done', JSON.stringify(spec.error));
    assert.equal(spec.digest, control.end.digest, 'same tokens as the control');
    const reply = (await service.chats.get({ chatId: chat.id })).messages.at(-1)!;
    assert.ok(reply.role === 'assistant');
    assert.deepEqual(
      [reply.strategy, reply.fallbacks, reply.k, reply.s, reply.frVocab, reply.pMin, reply.adaptiveK],
      ['ngram-mod', ['mtp'], 5, 4, 400, 0.2, true],
    );
    const drafted = reply.rounds.filter((r) => r.proposed > 0);
    assert.ok(drafted.length > 0, 'the chain drafted');
    assert.ok(
      drafted.every((r) => r.member === 0 || r.member === 1),
      'each drafted round names the member that drafted it',
    );
    // the chat's report: the chain's profile records the chain and its policy, and counts each member's rounds
    const file = await service.reports.exportChat({ chatId: chat.id, format: 'json' });
    const report = Report.parse(JSON.parse(Buffer.from(file.base64, 'base64').toString('utf8')));
    const profile = report.profiles.find((p) => p.name === 'chain policy')!;
    assert.deepEqual([profile.fallbacks, profile.frVocab, profile.pMin, profile.adaptiveK], [['mtp'], 400, 0.2, true]);
    const members = profile.members!;
    assert.deepEqual(
      members.map((m) => m.strategy),
      ['ngram-mod', 'mtp'],
    );
    assert.equal(
      members.reduce((n, m) => n + m.rounds, 0),
      drafted.length,
    );
    assert.equal(
      members.reduce((n, m) => n + m.proposed, 0),
      profile.proposed,
    );
    assert.equal(
      members.reduce((n, m) => n + m.accepted, 0),
      profile.accepted,
    );
    // a chain the app cannot load is refused with the reason; a profile cannot start a chain from the loaded one
    await assert.rejects(
      service.engine.load({ modelId: models['hybrid-mtp.gguf']!.id, device: 'cpu', draftMethod: { strategy: 'mtp', fallbacks: ['mtp'] } }),
      /'mtp' appears twice/,
    );
    await assert.rejects(service.profiles.create({ name: 'x', k: 3, fallbacks: ['ngram'] }), /names its first strategy/);
  });

  test('a chat that asks for JSON gets a reply of its schema, the same under draft-model speculation; the reply keeps the format', async () => {
    const { service, models } = f;
    await service.engine.load({
      modelId: models['target.gguf']!.id,
      device: 'cpu',
      threads: 1,
      contextSize: 1024,
      draftMethod: { strategy: 'draft-model', draftId: models['draft-close.gguf']!.id },
    });
    const schema = JSON.stringify({
      type: 'object',
      properties: { pet: { type: 'string', maxLength: 8 }, legs: { type: 'integer', minimum: 0, maximum: 8 } },
      required: ['pet', 'legs'],
      additionalProperties: false,
    });
    const sampling = { maxTokens: 64, format: 'json' as const, jsonSchema: schema };
    const chat = await service.chats.create({});
    const control = await startedReply(
      service,
      service.chats.send({ chatId: chat.id, content: 'a pet', profileId: 'autoregressive', sampling }),
    );
    const ar = await control.end;
    assert.equal(ar.kind, 'done', JSON.stringify(ar.error));
    const { end } = await startedReply(service, service.chats.regenerate({ chatId: chat.id, profileId: 'balanced', sampling }));
    const spec = await end;
    assertDraftedSameAsControl(
      { digest: spec.digest!, stats: spec.stats },
      { digest: ar.digest!, stats: ar.stats },
      {
        label: 'draft-model (draft-close) K7 under a JSON schema',
        accepted: true,
      },
    );
    const reply = (await service.chats.get({ chatId: chat.id })).messages.at(-1)!;
    assert.ok(reply.role === 'assistant');
    assert.deepEqual([reply.sampling.format, reply.sampling.jsonSchema], ['json', schema]);
    assert.equal(reply.stopReason, 'eos', reply.content);
    assert.deepEqual(Object.keys(JSON.parse(reply.content) as object).sort(), ['legs', 'pet']);
    await assert.rejects(
      service.chats.send({ chatId: chat.id, content: 'x', sampling: { format: 'json', jsonSchema: '{"type": ' } }),
      /the JSON schema must be a JSON object/,
    );
  });

  test('stop keeps what was generated; regenerate replaces it; a message meanwhile is busy', async () => {
    const { service, models } = f;
    await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 2048 });
    const chat = await service.chats.create({});
    // the reply holds after 20 rounds (one token each on the control) until it is stopped: the
    // messages sent meanwhile find it busy and the stop lands in flight however fast the engine is
    await service.holdRepliesForTest(20);
    let stopped: ReplyEnd;
    let stopping: unknown;
    try {
      const { end } = await streamingReply(
        service,
        service.chats.send({ chatId: chat.id, content: 'go on', sampling: { maxTokens: 1500 } }),
        20,
      );
      await assert.rejects(service.chats.send({ chatId: chat.id, content: 'me too' }), (e: { code: string }) => e.code === 'busy');
      const other = await service.chats.create({});
      await assert.rejects(service.chats.send({ chatId: other.id, content: 'me too' }), (e: { code: string }) => e.code === 'busy');
      stopping = await service.chats.stop({ chatId: chat.id });
      stopped = await end;
    } finally {
      await service.holdRepliesForTest(null);
    }
    assert.deepEqual(stopping, { stopped: true });
    assert.equal(stopped.stopReason, 'cancelled');
    const saved = (await service.chats.get({ chatId: chat.id })).messages.at(-1)!;
    assert.ok(saved.role === 'assistant');
    assert.equal(saved.status, 'stopped');
    assert.ok(saved.tokens.length >= 20 && saved.tokens.length < 1500);

    const again = await ask(service, chat.id, 'unused', {}).catch((e) => e);
    assert.equal(again.end?.kind, 'done'); // the chat is free again
  });

  test('a stop that arrives while the reply is still being set up stops it', async () => {
    const { service, models } = f;
    await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 2048 });
    const chat = await service.chats.create({});
    const sending = startedReply(service, service.chats.send({ chatId: chat.id, content: 'stop me early', sampling: { maxTokens: 1500 } }));
    const stopping = service.chats.stop({ chatId: chat.id }); // before send has answered
    const { end } = await sending;
    assert.deepEqual(await stopping, { stopped: true });
    const stopped = await end;
    assert.equal(stopped.stopReason, 'cancelled');
    assert.ok(stopped.tokens.length < 1500);
    const saved = (await service.chats.get({ chatId: chat.id })).messages.at(-1)!;
    assert.ok(saved.role === 'assistant' && saved.status === 'stopped');
  });

  test('edit a user message and continue from it', async () => {
    const { service, models } = f;
    await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 1024 });
    const chat = await service.chats.create({});
    const one = await ask(service, chat.id, 'first question');
    await ask(service, chat.id, 'second question');
    const firstUser = one.chat.messages[0]!;
    const regenerated = await startedReply(service, service.chats.regenerate({ chatId: chat.id, sampling: { maxTokens: 16 } }));
    assert.equal((await regenerated.end).kind, 'done');
    assert.equal((await service.chats.get({ chatId: chat.id })).branches?.[0]?.tails.length, 1, 'the replaced reply is kept');
    const edited = await startedReply(
      service,
      service.chats.editAndContinue({
        chatId: chat.id,
        messageId: firstUser.id,
        content: 'a different question',
        sampling: { maxTokens: 16 },
      }),
    );
    assert.equal((await edited.end).kind, 'done');
    const after = await service.chats.get({ chatId: chat.id });
    assert.deepEqual(
      after.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.equal(after.messages[0]!.content, 'a different question');
    // the old question, with its two turns and the version of its second reply, is the other version
    const atStart = after.branches!.find((b) => b.after === null)!;
    assert.deepEqual(
      atStart.tails.map((t) => t.map((m) => (m.role === 'user' ? m.content : m.role))),
      [['first question', 'assistant', 'second question', 'assistant']],
    );
    assert.equal(atStart.tails[0]![0]!.id, firstUser.id, 'the old message keeps its id; the new version has its own');
    assert.notEqual(after.messages[0]!.id, firstUser.id);
    await assert.rejects(
      service.chats.editAndContinue({ chatId: chat.id, messageId: after.messages[1]!.id, content: 'x' }),
      (e: { code: string }) => e.code === 'bad-input',
    );
  });

  test('deleting a streaming chat stops the reply, then deletes it', async () => {
    const { service, models } = f;
    await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 2048 });
    const chat = await service.chats.create({});
    // the reply holds after its second round until it is cancelled: the delete lands in flight
    // however fast the engine is
    await service.holdRepliesForTest(2);
    try {
      const { end } = await streamingReply(
        service,
        service.chats.send({ chatId: chat.id, content: 'long', sampling: { maxTokens: 1500 } }),
        1,
      );
      await service.chats.delete({ chatId: chat.id });
      const ended = await end;
      assert.equal(ended.stopReason, 'cancelled');
      assert.ok(ended.tokens.length >= 1 && ended.tokens.length < 1500, `${ended.tokens.length} tokens`);
    } finally {
      await service.holdRepliesForTest(null);
    }
    await assert.rejects(service.chats.get({ chatId: chat.id }), (e: { code: string }) => e.code === 'not-found');
    assert.ok(!(await service.chats.list({})).chats.some((c) => c.id === chat.id));
  });

  test('bad input has defined outcomes and changes nothing', async () => {
    const { service, models } = f;
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code: string; message: string }) => `${e.code}: ${e.message}`,
      );
    // a draft with another vocabulary
    assert.match(
      await code(
        service.engine.load({
          modelId: models['target.gguf']!.id,
          device: 'cpu',
          draftMethod: { strategy: 'draft-model', draftId: models['draft-badvocab.gguf']!.id },
        }),
      ),
      /^unsupported: strategy 'draft-model' is not available .*incompatible: vocabulary size differs/,
    );
    // mtp on a model without NextN layers
    assert.match(
      await code(service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', draftMethod: { strategy: 'mtp' } })),
      /^unsupported: .*no NextN\/MTP layers/,
    );
    // a profile that asks for a strategy the loaded model set cannot serve
    await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 512 });
    const mtp = await service.profiles.create({ name: 'mtp K3', strategy: 'mtp', k: 3 });
    const chat = await service.chats.create({});
    assert.match(
      await code(service.chats.send({ chatId: chat.id, content: 'hi', profileId: mtp.id })),
      /^unsupported: strategy 'mtp' needs the model loaded for it/,
    );
    assert.equal((await service.chats.get({ chatId: chat.id })).messages.length, 0, 'the refused message was not added');
    // S on an attention-only target
    assert.match(await code(service.profiles.create({ name: 'x', k: 4, s: 2 })), /^bad-input: S .*does not apply/);
    // malformed input
    assert.match(await code(service.chats.send({ chatId: chat.id, content: '' })), /^bad-input: chats\.send: content/);
    assert.match(await code(service.chats.get({ chatId: 'nope' })), /^not-found/);
    assert.match(await code(service.models.add({ path: '/no/such/file.gguf' })), /^not-found/);
    // the conversation must fit the context
    assert.match(
      await code(service.chats.send({ chatId: chat.id, content: 'word '.repeat(2000) })),
      /^bad-input: the conversation is \d+ tokens but the context holds/,
    );
    assert.equal((await service.chats.get({ chatId: chat.id })).messages.length, 0);
    const ok = await ask(service, chat.id, 'hi');
    assert.equal(ok.end.kind, 'done');
  });
});
