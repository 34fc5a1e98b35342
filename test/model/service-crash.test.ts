// SIGKILL of the engine host mid-reply: the reply ends with an engine-crashed error and keeps
// the tokens committed before it, the chat on disk holds everything complete, and the next
// request starts a fresh host, reloads the model and works.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';

import { createPowerService } from '../../app/service/index.js';
import { ask, startedReply, startService } from '../fixtures/service.js';

test('the engine host killed mid-reply loses nothing and comes back', async () => {
  const f = await startService();
  const { service, models } = f;
  try {
    await service.engine.load({
      modelId: models['hybrid-mtp.gguf']!.id,
      device: 'cpu',
      threads: 1,
      contextSize: 2048,
      draftMethod: { strategy: 'mtp' },
    });
    const chat = await service.chats.create({});
    const first = await ask(service, chat.id, 'a complete turn');
    assert.equal(first.end.kind, 'done');

    const pid = service.enginePid();
    assert.ok(pid);
    const { end } = await startedReply(
      service,
      service.chats.send({ chatId: chat.id, content: 'this one dies', sampling: { maxTokens: 1500 } }),
      (_t, n) => {
        if (n === 30) process.kill(pid, 'SIGKILL');
      },
    );
    const crashed = await end;
    assert.equal(crashed.kind, 'error');
    assert.equal(crashed.error!.code, 'engine-crashed');
    assert.match(crashed.error!.message, /tokens before it are kept/);

    const state = await service.engine.state({});
    assert.equal(state.reloadPending, true);
    assert.equal(state.restarts, 1);
    assert.ok(state.lastCrash);

    const stored = await service.chats.get({ chatId: chat.id });
    const reply = stored.messages.at(-1)!;
    assert.ok(reply.role === 'assistant');
    assert.equal(reply.status, 'error');
    assert.ok(reply.tokens.length >= 30 && reply.tokens.length < 1500, `${reply.tokens.length} tokens kept`);
    assert.deepEqual(
      reply.tokens.map((t) => t.id),
      crashed.tokens.map((t) => t.id),
    );

    // the data folder alone has all of it (a second service reads it)
    const reader = await createPowerService({ dataDir: f.dataDir });
    const onDisk = await reader.chats.get({ chatId: chat.id });
    await reader.close();
    assert.deepEqual(onDisk, stored);

    // the next request reloads the model in a fresh host and works
    const next = await ask(service, chat.id, 'still there?');
    assert.equal(next.end.kind, 'done', JSON.stringify(next.end.error));
    assert.notEqual(service.enginePid(), pid);
    const after = await service.engine.state({});
    assert.equal(after.reloadPending, false);
    assert.equal(after.status, 'ready');
  } finally {
    await f.dispose();
    await rm(f.dataDir, { recursive: true, force: true });
  }
});
