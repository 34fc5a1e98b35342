// A chat's versions without an engine: what Regenerate and Edit keep, switching between versions
// (branches inside a version come back with it), the order the report reads them in, the A/B
// read from them, and a chat saved before versions (document version 3) opening unchanged.
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { AssistantMessage, Chat, ChatMessage } from '../../app/contract/api/chats.js';
import { everyMessage, everyVersion, keepVersion, switchVersion, versionOf } from '../../app/contract/branches.js';
import { chatReport, chatReplies, type Machine } from '../../app/contract/report/chat.js';
import { ChatStore } from '../../app/service/chat-store.js';
import { abPairs } from '../../renderer/src/logic/ab.js';
import { asVersion3, reply, sampleChat } from '../fixtures/chats.js';
import { pngImage } from '../fixtures/images.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const user = (id: string, content = id): ChatMessage => ({ id, role: 'user', content, createdAt: '2026-01-01T00:00:00.000Z' });
const answer = (id: string) => reply({ id, profile: null, strategy: 'none', k: null, s: null, ids: [1, 2, 3] });
const ids = (chat: Chat) => chat.messages.map((m) => m.id);
const empty = (): Chat => ({ id: 'c', title: 't', createdAt: '', updatedAt: '', systemPrompt: null, messages: [] });

describe('versions of a conversation', () => {
  test('regenerating twice keeps three versions of the reply, the newest shown; switching shows another', async () => {
    const chat = empty();
    chat.messages.push(user('u1'), await answer('a'));
    keepVersion(chat, 1);
    chat.messages.push(await answer('b'));
    keepVersion(chat, 1);
    chat.messages.push(await answer('c'));
    assert.deepEqual(ids(chat), ['u1', 'c']);
    assert.deepEqual(versionOf(chat, 1), { shown: 2, count: 3 });
    assert.equal(versionOf(chat, 0), null, 'the question has one version');

    assert.equal(switchVersion(chat, 1, 0), null);
    assert.deepEqual(ids(chat), ['u1', 'a']);
    assert.deepEqual(versionOf(chat, 1), { shown: 0, count: 3 });
    // the versions keep the order they were made in, whichever is shown
    assert.deepEqual(
      chat.branches![0]!.tails.map((t) => t.map((m) => m.id)),
      [['b'], ['c']],
    );
    assert.equal(switchVersion(chat, 1, 2), null);
    assert.deepEqual(ids(chat), ['u1', 'c']);
    assert.match(switchVersion(chat, 1, 3)!, /has 3 versions: pick 0 to 2/);
    assert.match(switchVersion(chat, 0, 0)!, /no other version/);
    assert.deepEqual(ids(chat), ['u1', 'c'], 'a refused switch changes nothing');
  });

  test('an edit keeps the old message and what followed it; a branch inside it comes back with it', async () => {
    const chat = empty();
    chat.messages.push(user('u1'), await answer('a1'), user('u2'), await answer('a2'));
    // a second version of the second reply, then an edit of the first question
    keepVersion(chat, 3);
    chat.messages.push(await answer('a2b'));
    keepVersion(chat, 0);
    chat.messages.push(user('u1b', 'edited'), await answer('x'));
    assert.deepEqual(ids(chat), ['u1b', 'x']);
    assert.deepEqual(versionOf(chat, 0), { shown: 1, count: 2 });

    assert.equal(switchVersion(chat, 0, 0), null);
    assert.deepEqual(ids(chat), ['u1', 'a1', 'u2', 'a2b']);
    assert.deepEqual(versionOf(chat, 3), { shown: 1, count: 2 }, 'the inner versions are back');
    assert.equal(switchVersion(chat, 3, 0), null);
    assert.deepEqual(ids(chat), ['u1', 'a1', 'u2', 'a2']);
    assert.equal(switchVersion(chat, 0, 1), null);
    assert.deepEqual(ids(chat), ['u1b', 'x']);
    assert.equal(versionOf(chat, 3), null);
    assert.equal(everyMessage(chat).length, 7, 'nothing lost');

    // the report reads every reply: at each branch the versions not shown there first (a2 was
    // shown in the old version when it was left), each along its own turns
    assert.deepEqual(
      chatReplies(chat).map((r) => [r.message.id, r.turn, r.superseded, r.replyTo]),
      [
        ['a1', 1, true, 'u1'],
        ['a2b', 2, true, 'u2'],
        ['a2', 2, true, 'u2'],
        ['x', 1, false, 'u1b'],
      ],
    );
    assert.deepEqual(
      everyVersion(chat).map((v) => v.message.id),
      ['u1', 'a1', 'u2', 'a2b', 'a2', 'u1b', 'x'],
    );
  });

  test('a file whose branch loops is read once, not forever', async () => {
    const chat = empty();
    chat.messages.push(user('u1'), await answer('a'));
    chat.branches = [{ after: 'u1', tails: [[user('u1'), await answer('b')]], shown: 1 }];
    assert.deepEqual(
      everyVersion(chat).map((v) => v.message.id),
      ['u1', 'u1', 'b', 'a'],
    );
  });

  test('the A/B is the control shown and the speculative version made before it; another version shown has none', async () => {
    const chat = await sampleChat();
    assert.deepEqual([...abPairs(chat).keys()], ['c1']);
    assert.equal(abPairs(chat).get('c1')!.speculative.id, 's1');
    assert.equal(switchVersion(chat, 1, 0), null);
    assert.equal(chat.messages[1]!.id, 's1');
    assert.equal(abPairs(chat).size, 0);
    assert.equal(switchVersion(chat, 1, 1), null);
    assert.equal(abPairs(chat).get('c1')!.speculative.id, 's1');
  });

  test('replies to an edited question are another task in the report than replies to the first one', async () => {
    const chat = empty();
    chat.messages.push(user('u1'), await answer('a'));
    keepVersion(chat, 0);
    chat.messages.push(user('u1b'), await answer('b'));
    const r = chatReport({ chat, machine: MACHINE, models: [], command: 'test' });
    assert.deepEqual(
      r.chat!.replies.map((x) => [x.messageId, x.task, x.superseded]),
      [
        ['a', 'turn 1', true],
        ['b', 'turn 1 (2)', false],
      ],
    );
  });
});

const MACHINE: Machine = {
  os: { platform: 'linux', release: '6.1', arch: 'x64' },
  cpu: { model: 'Test CPU', logicalCores: 2 },
  memoryBytes: 8 * 2 ** 30,
  gpuDriver: null,
  llamaCppRelease: 'b9999',
  powerVersion: '0.1.0',
  nodeVersion: 'v20.19.0',
};

describe('a chat saved before versions', () => {
  const dir = suiteTempDir('power-chat-branches-');

  test('opens unchanged: the same messages, its replaced replies now versions of their replies, the A/B and the report the same', async () => {
    const chat = await sampleChat();
    const old = asVersion3(chat);
    assert.deepEqual(
      old.superseded.map((s) => [s.replyTo, s.message.id]),
      [
        ['u1', 's1'],
        ['u2', 's2'],
      ],
    );
    await mkdir(join(dir(), 'chats'), { recursive: true });
    const file = join(dir(), 'chats', `${chat.id}.json`);
    await writeFile(file, JSON.stringify({ format: 'power.chat', version: 3, data: old }, null, 1));

    const store = await ChatStore.open(dir(), { log: (line) => assert.fail(line) });
    const opened = store.get(chat.id);
    assert.deepEqual(opened.messages, old.messages, 'the conversation shown is the one saved');
    assert.deepEqual(opened, chat);
    assert.deepEqual(
      opened.branches!.map((b) => [b.after, b.shown, b.tails.map((t) => t.map((m) => m.id))]),
      [
        ['u1', 1, [['s1']]],
        ['u2', 1, [['s2']]],
      ],
    );
    const pair = abPairs(opened).get('c1')!;
    assert.deepEqual([pair.speculative.id, pair.control.id, pair.result?.digestsMatch], ['s1', 'c1', true]);
    const report = chatReport({ chat: opened, machine: MACHINE, models: [], command: 'test' });
    assert.deepEqual(
      report.chat!.replies.map((x) => [x.messageId, x.task, x.superseded]),
      [
        ['s1', 'turn 1', true],
        ['c1', 'turn 1', false],
        ['s2', 'turn 2', true],
        ['p2', 'turn 2 (2)', false],
      ],
    );
    assert.deepEqual(
      report.requests.map((q) => [q.task, q.profile, q.matchesControl]),
      [
        ['turn 1', 'Balanced', true],
        ['turn 1', 'control', null],
        ['turn 2', 'Balanced', null],
        ['turn 2 (2)', 'Peak', null],
      ],
    );
    // the file is left as it was until the chat changes
    assert.equal(JSON.parse(await readFile(file, 'utf8')).version, 3);
    await store.save(opened);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { version: number; data: Chat & { superseded?: unknown } };
    assert.equal(saved.version, 4);
    assert.equal(saved.data.superseded, undefined);
    assert.deepEqual(saved.data.branches, opened.branches);
  });

  test('the images of a message kept in another version stay in the data folder', async () => {
    const chat = empty();
    chat.id = '00000000-0000-4000-8000-0000000000b1';
    const store = await ChatStore.open(join(dir(), 'images'), { log: () => {} });
    const png = pngImage(4, 4, 1);
    const image = await store.addImage(png, 'dot.png');
    chat.messages.push({ ...user('u1'), images: [image] } as ChatMessage, (await answer('a')) as AssistantMessage);
    keepVersion(chat, 0);
    chat.messages.push(user('u1b'), await answer('b'));
    await store.add(chat);
    store.imagesUsed([image]);
    const reopened = await ChatStore.open(join(dir(), 'images'), { log: () => {} });
    assert.deepEqual(new Uint8Array(await reopened.image(image.sha256)), png);
  });
});
