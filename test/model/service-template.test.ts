// Chat templates: the GGUF's own template, or ChatML for a model without one; load progress
// and stats snapshots as a front door sees them; a reply cut off by a stop of Power itself.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { EngineClient } from '../../app/engine/client.js';
import { Conversation } from '../../app/service/conversation.js';
import { createPowerService } from '../../app/service/index.js';
import { makeNoTemplateModel, syntheticModels } from '../fixtures/models.js';
import { ask, serviceForSuite } from '../fixtures/service.js';

describe('service templates and events', () => {
  const f = serviceForSuite();

  test('a model without a chat template is prompted with ChatML; one with a template uses its own', async () => {
    const noTemplate = await makeNoTemplateModel(join(f.dataDir, 'models'));
    const engine = EngineClient.start();
    try {
      const plain = await engine.call('loadModel', { path: noTemplate, gpuLayers: 0 });
      assert.equal(plain.info.chatTemplate, null);
      const messages = [
        { role: 'system' as const, content: 'S' },
        { role: 'user' as const, content: 'hi' },
      ];
      assert.equal(
        await new Conversation(engine, plain.modelId, plain.info).render(messages),
        '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
      );
      const own = await engine.call('loadModel', { path: (await syntheticModels())['target.gguf'], gpuLayers: 0 });
      const rendered = await new Conversation(engine, own.modelId, own.info).render(messages);
      assert.doesNotMatch(rendered, /im_start/);
      assert.match(rendered, /hi/);
    } finally {
      await engine.close();
    }
    const { added } = await f.service.models.add({ path: noTemplate });
    await f.service.engine.load({ modelId: added[0]!.id, device: 'cpu', threads: 1, contextSize: 256 });
    const chat = await f.service.chats.create({});
    assert.equal((await ask(f.service, chat.id, 'hello')).end.kind, 'done');
  });

  test('a load reports progress; a reply streams stats snapshots, then the final stats', async () => {
    const progress: number[] = [];
    const offProgress = f.service.engine.onLoadProgress((p) => progress.push(p.progress));
    const states: string[] = [];
    const offState = f.service.engine.onStateChanged((s) => states.push(s.status));
    await f.service.engine.load({ modelId: f.models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 512 });
    offProgress();
    assert.ok(progress.length >= 2 && progress.at(-1) === 1, `progress ${progress.join(',')}`);
    const snapshots: Array<number | null> = [];
    let rounds = 0;
    const offStats = f.service.generation.onRounds((e) => {
      snapshots.push(e.stats.reusedPromptTokens);
      rounds += e.rounds.length;
    });
    const chat = await f.service.chats.create({});
    const { end } = await ask(f.service, chat.id, 'count with me', { maxTokens: 12 });
    offStats();
    offState();
    assert.equal(rounds, 12, 'every round streams (autoregressive: one token each)');
    assert.ok(snapshots.length >= 1 && snapshots.length <= 12, 'one snapshot per batch of rounds');
    assert.ok(
      snapshots.every((r) => r === null),
      'reuse is known only at the end',
    );
    assert.equal(typeof end.stats!.reusedPromptTokens, 'number');
    assert.deepEqual(states.slice(0, 2), ['loading', 'ready']);
    assert.ok(states.includes('generating'));
    assert.equal(states.at(-1), 'ready');
  });

  test('a reply still streaming when Power stopped is marked as an error and keeps its tokens', async () => {
    const chat = await f.service.chats.create({});
    await ask(f.service, chat.id, 'hello');
    const file = join(f.dataDir, 'chats', `${chat.id}.json`);
    const doc = JSON.parse(await readFile(file, 'utf8'));
    const reply = doc.data.messages[1];
    reply.status = 'streaming';
    await writeFile(file, JSON.stringify(doc));
    const reopened = await createPowerService({ dataDir: f.dataDir });
    const read = await reopened.chats.get({ chatId: chat.id });
    await reopened.close();
    const m = read.messages[1]!;
    assert.ok(m.role === 'assistant');
    assert.equal(m.status, 'error');
    assert.match(m.error!.message, /Power stopped while this reply was streaming/);
    assert.equal(m.tokens.length, reply.tokens.length);
  });
});
