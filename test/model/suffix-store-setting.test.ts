// "Remember earlier replies for suffix drafting" in the app's service (engine.suffixStore and
// engine.setSuffixStore): on by default, kept in settings.json; off, the loaded model's store of
// earlier replies stops growing in memory and on disk; Clear empties it, the engine's store and
// its file, including the reply on screen when it was pressed, and removes the file of a store
// the engine has not read yet. The real service over the real engine host and a synthetic model.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ask, startService, type ServiceFixture } from '../fixtures/service.js';

const HEADER_BYTES = 12; // the store file's magic, version and vocabulary size

async function suffixService(): Promise<ServiceFixture & { modelId: string; file: string; say: (content: string) => Promise<void> }> {
  const f = await startService();
  const modelId = f.models['target.gguf']!.id;
  await f.service.engine.load({ modelId, device: 'cpu', threads: 1, contextSize: 1024, draftMethod: { strategy: 'suffix' } });
  const chat = await f.service.chats.create({});
  const say = async (content: string) => {
    const { end } = await ask(f.service, chat.id, content, { maxTokens: 24 });
    assert.equal(end.kind, 'done');
  };
  return { ...f, modelId, file: join(f.dataDir, 'suffix-store', `${modelId}.bin`), say };
}

test('turned off, the store of earlier replies stops growing in memory and on disk, and the setting is kept', async () => {
  const first = await suffixService();
  let f = first;
  try {
    const fresh = await f.service.engine.suffixStore({});
    assert.deepEqual(
      fresh,
      { remember: true, modelId: f.modelId, tokens: null, bytes: 0, problem: null },
      'on by default, nothing read yet',
    );
    await f.say('one two three four five');
    await f.say('six seven eight nine ten'); // the first reply goes to the store as this one starts
    const on = await f.service.engine.suffixStore({});
    assert.ok(on.tokens! > 0 && on.bytes > HEADER_BYTES, `remembered: ${JSON.stringify(on)}`);
    assert.equal(on.bytes, statSync(f.file).size);

    const off = await f.service.engine.setSuffixStore({ remember: false });
    assert.equal(off.remember, false);
    assert.equal(JSON.parse(readFileSync(join(f.dataDir, 'settings.json'), 'utf8')).data.rememberReplies, false);
    // the next reply opens a session without the store; the one before adds its last reply, made while it was on
    await f.say('eleven twelve thirteen');
    const settled = await f.service.engine.suffixStore({});
    assert.ok(settled.tokens! > on.tokens!, `the reply made while on was added: ${settled.tokens} after ${on.tokens}`);
    await f.say('fourteen fifteen sixteen');
    await f.say('one two three four five');
    assert.deepEqual(await f.service.engine.suffixStore({}), settled, 'replies made while off are not added');
    assert.equal(statSync(f.file).size, settled.bytes);

    await f.service.close();
    f = { ...f, ...(await startService(first.dataDir)) };
    assert.equal((await f.service.engine.suffixStore({})).remember, false, 'the setting outlives the service');
    assert.equal((await f.service.engine.setSuffixStore({ remember: true })).remember, true);
  } finally {
    await f.dispose();
    await first.dispose(); // its data folder (the service is closed already)
  }
});

test("Clear empties the loaded model's store in memory and on disk, the reply on screen included", async () => {
  const f = await suffixService();
  try {
    await f.say('one two three four five');
    await f.say('six seven eight nine ten');
    assert.ok((await f.service.engine.suffixStore({})).tokens! > 0);
    const cleared = await f.service.engine.setSuffixStore({ clear: true });
    assert.deepEqual(cleared, { remember: true, modelId: f.modelId, tokens: 0, bytes: HEADER_BYTES, problem: null });
    assert.equal(statSync(f.file).size, HEADER_BYTES, 'the file holds its header alone');
    // the reply shown when Clear was pressed would go in as the next request starts: it does not
    await f.say('eleven twelve thirteen');
    assert.equal((await f.service.engine.suffixStore({})).tokens, 0, 'the reply from before the clear is not added');
    await f.say('fourteen fifteen sixteen');
    const after = await f.service.engine.suffixStore({});
    assert.ok(after.tokens! > 0, `replies after the clear are remembered: ${after.tokens}`);

    // a fresh engine host has not read the file yet: Clear removes it
    await f.service.engine.load({ modelId: f.modelId, device: 'cpu', threads: 1, contextSize: 1024, draftMethod: { strategy: 'suffix' } });
    assert.ok(existsSync(f.file));
    assert.deepEqual(await f.service.engine.setSuffixStore({ clear: true }), {
      remember: true,
      modelId: f.modelId,
      tokens: null,
      bytes: 0,
      problem: null,
    });
    assert.equal(existsSync(f.file), false);
  } finally {
    await f.dispose();
  }
});

test('the store setting refuses what the contract does not know, and says nothing of a model when none is loaded', async () => {
  const f = await startService();
  try {
    assert.deepEqual(await f.service.engine.suffixStore({}), { remember: true, modelId: null, tokens: null, bytes: 0, problem: null });
    await assert.rejects(
      f.service.engine.setSuffixStore({ remember: 'no' } as unknown as { remember: boolean }),
      (e: { code?: string }) => e.code === 'bad-input',
    );
    assert.equal((await f.service.engine.suffixStore({})).remember, true, 'a refused change changes nothing');
  } finally {
    await f.dispose();
  }
});
