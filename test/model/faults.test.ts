// Faults a `power serve` must survive without losing a chat: corrupt and truncated chat files in
// the data folder (set aside with a notice, the others load), a full disk while a chat is saved
// (the error says so, the previous file is intact), and the engine host SIGKILLed at seeded
// random moments while replies stream over /ws and /v1, models load and replies are regenerated
// (each interrupted reply ends with engine-crashed and keeps its committed tokens, the next
// request works, no chat file is lost or corrupted; the time from a kill to the next served
// token is printed). POWER_FAULT_KILLS (default 50, as the issue asks) and
// POWER_FAULT_SEED run another or a longer schedule; the full disk is a 2 MiB tmpfs where this
// process may mount one (root), else a file-size limit (POWER_FAULT_DISK=ulimit forces that).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import fc from 'fast-check';
import { WebSocket } from 'ws';

import type { Chat } from '../../app/contract/api/chats.js';
import { powerApi } from '../../app/contract/api/index.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { CHAT } from '../../app/service/chat-store.js';
import { encodeDocument, readDocument, readDocumentOrSetAside } from '../../app/service/storage/document.js';
import { sampleChat } from '../fixtures/chats.js';
import { sseData } from '../fixtures/http-client.js';
import { syntheticModels } from '../fixtures/models.js';
import { engineHostPid, startPowerServe, type PowerServe } from '../fixtures/serve.js';
import { streamedTokens } from '../fixtures/service.js';

const KILLS = Number(process.env.POWER_FAULT_KILLS ?? 50);
const SEED = Number(process.env.POWER_FAULT_SEED ?? 20261203);
/** how old a freshly started engine host is before the campaign kills it */
const STARTUP_MS = 50;

let dir = '';
let modelsDir = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-faults-'));
  modelsDir = join(dir, 'models');
  await mkdir(modelsDir);
  const set = await syntheticModels();
  for (const name of ['target.gguf', 'hybrid-mtp.gguf'] as const) await symlink(set[name], join(modelsDir, name));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function connectApi(serve: PowerServe) {
  return createApiClient(powerApi, new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth }) as never);
}
type Api = ReturnType<typeof connectApi>['api'];

async function modelId(api: Api, name: string): Promise<string> {
  const entry = (await api.models.list({})).entries.find((e) => e.name === name);
  assert.ok(entry, `${name} is in the library`);
  return entry.id;
}

const chatWithId = async (id: string, title: string): Promise<Chat> => ({ ...(await sampleChat()), id, title });
const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

// the chat's messages (user, or an assistant's status) after a send that the full disk refused
let afterRefusedSend: { before: number; now: string[] } | null = null;
// the answers of loads that a kill interrupted and that blamed the model file
const loadKillsMislabelled: string[] = [];
let killCampaignRan = false;

describe('faults', () => {
  test('corrupt and truncated chat files are set aside with a notice; the other chats load', async () => {
    const data = join(dir, 'corrupt-data');
    const chats = join(data, 'chats');
    await mkdir(chats, { recursive: true });
    const good = [await chatWithId(ID(1), 'first'), await chatWithId(ID(2), 'second')];
    for (const c of good) await writeFile(join(chats, `${c.id}.json`), encodeDocument(CHAT, c));
    const whole = encodeDocument(CHAT, await chatWithId(ID(3), 'third'));
    const broken: Record<string, string> = {
      [`${ID(3)}.json`]: whole.slice(0, whole.length >> 1), // cut short by a crash of the disk, not of Power (whose writes are atomic)
      [`${ID(4)}.json`]: '',
      [`${ID(5)}.json`]: '\u0000\u0000\u0000garbage',
      [`${ID(6)}.json`]: JSON.stringify({ format: 'power.chat', version: 1, data: { id: ID(6), title: 42 } }),
      [`${ID(7)}.json`]: JSON.stringify({ format: 'power.settings', version: 1, data: {} }),
      // a copy under another chat's name would make two chats of one id
      [`${ID(8)}.json`]: encodeDocument(CHAT, good[0]!),
    };
    for (const [name, text] of Object.entries(broken)) await writeFile(join(chats, name), text);
    // a newer Power's chat is valid, only not for this one: it stays where it is, untouched
    const newer = JSON.stringify({ format: 'power.chat', version: 99, data: {} });
    await writeFile(join(chats, `${ID(9)}.json`), newer);

    const serve = await startPowerServe(['--data-dir', data]);
    const client = connectApi(serve);
    try {
      const listed = (await client.api.chats.list({})).chats.map((c) => c.title).sort();
      assert.deepEqual(listed, ['first', 'second'], 'the good chats load');
      assert.equal((await client.api.chats.get({ chatId: ID(1) })).messages.length, good[0]!.messages.length);
      const files = (await readdir(chats)).sort();
      for (const name of Object.keys(broken)) {
        assert.ok(!files.includes(name), `${name} was moved out of the way`);
        const aside = files.find((f) => f.startsWith(`${name}.corrupt-`));
        assert.ok(aside, `${name} was set aside (${files.join(', ')})`);
        assert.equal(await readFile(join(chats, aside), 'utf8'), broken[name], `${name} was renamed, not rewritten`);
        assert.match(
          serve.stderr(),
          new RegExp(`chats/${name} is corrupt \\(.+\\); it was set aside as chats/${name}\\.corrupt-`),
          `a notice for ${name}`,
        );
      }
      assert.equal(await readFile(join(chats, `${ID(9)}.json`), 'utf8'), newer, "a newer Power's chat is left alone");
      assert.match(serve.stderr(), /chats\/00000000-0000-4000-8000-000000000009\.json was not loaded \(written by a newer Power/);
      // a new chat saves next to them, and the next start loads the same set without new notices
      await client.api.chats.create({ title: 'third' });
    } finally {
      client.close();
      await serve.stop('SIGTERM');
    }
    const again = await startPowerServe(['--data-dir', data]);
    const c2 = connectApi(again);
    try {
      assert.deepEqual((await c2.api.chats.list({})).chats.map((c) => c.title).sort(), ['first', 'second', 'third']);
      assert.doesNotMatch(again.stderr(), /is corrupt/);
    } finally {
      c2.close();
      await again.stop('SIGTERM');
    }
  });

  test('a corrupt document Power must start without is set aside and read as none; a newer one still refuses', async () => {
    const folder = join(dir, 'documents');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'settings.json');
    await writeFile(file, '{"format":"power.chat","vers');
    const lines: string[] = [];
    assert.equal(await readDocumentOrSetAside(CHAT, file, (l) => lines.push(l)), null);
    const names = await readdir(folder);
    assert.equal(names.length, 1);
    assert.match(names[0]!, /^settings\.json\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    assert.equal(await readFile(join(folder, names[0]!), 'utf8'), '{"format":"power.chat","vers');
    assert.match(lines.join('\n'), /settings\.json is corrupt \(not JSON .*\); it was set aside as .*settings\.json\.corrupt-/);
    await writeFile(file, JSON.stringify({ format: 'power.chat', version: 99, data: {} }));
    await assert.rejects(
      readDocumentOrSetAside(CHAT, file, () => {}),
      /newer Power/,
    );
  });

  test('a truncated settings.json and library.json are set aside with a notice; power serve starts with defaults and an empty library', async () => {
    const data = join(dir, 'truncated-documents');
    await mkdir(data, { recursive: true });
    await writeFile(join(data, 'settings.json'), '{"format":"power.settings","version":1,"data":{"activeProf');
    await writeFile(join(data, 'library.json'), '{"format":"power.library","vers');
    const serve = await startPowerServe(['--data-dir', data]);
    const client = connectApi(serve);
    try {
      assert.deepEqual((await client.api.models.list({})).entries, []);
      assert.equal((await client.api.profiles.list({})).activeId, 'balanced');
      const files = await readdir(data);
      for (const name of ['settings.json', 'library.json']) {
        assert.ok(
          files.some((f) => f.startsWith(`${name}.corrupt-`)),
          `${name} set aside (${files.join(', ')})`,
        );
        assert.match(serve.stderr(), new RegExp(`${name.replace('.', '\\.')} is corrupt \\(.+\\); it was set aside as`));
      }
    } finally {
      client.close();
      assert.deepEqual(await serve.stop('SIGTERM'), { code: 0, signal: null });
    }
  });

  test('a full disk while a chat is saved: the error says so and the previous file is intact', async (t) => {
    const mnt = join(dir, 'small-disk');
    await mkdir(mnt);
    let mounted = false;
    let limit: 'tmpfs' | 'ulimit' = 'tmpfs';
    try {
      // POWER_FAULT_DISK=ulimit runs the fallback where a mount would work
      if (process.env.POWER_FAULT_DISK === 'ulimit') throw new Error('the file-size limit was asked for');
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { stdio: 'pipe' });
      mounted = true;
    } catch {
      // no mount without root: a file-size limit (RLIMIT_FSIZE) makes the same kind of write fail (EFBIG)
      limit = 'ulimit';
    }
    if (limit === 'ulimit' && process.platform !== 'linux') {
      t.skip('neither a tmpfs mount nor a file-size limit is available here');
      return;
    }
    const data = join(mnt, 'data');
    let serve: PowerServe | null = null;
    let client: ReturnType<typeof connectApi> | null = null;
    try {
      // under a file-size limit the first reply's file must fit and a longer one must not: 64 KiB
      serve = await startPowerServe(
        ['--data-dir', data, '--models-dir', modelsDir],
        limit === 'ulimit' ? { fileSizeLimitBlocks: 128 } : {},
      );
      client = connectApi(serve);
      const { api } = client;
      await api.engine.load({
        modelId: await modelId(api, 'target'),
        device: 'cpu',
        threads: 1,
        contextSize: 4096,
        draftMethod: { strategy: 'none' },
      });
      const chat = await api.chats.create({ title: 'full disk' });
      const first = await reply(api, () => api.chats.send({ chatId: chat.id, content: 'hello', sampling: { maxTokens: 8 } }));
      assert.equal(first.kind, 'done');
      const file = join(data, 'chats', `${chat.id}.json`);
      const before = await readFile(file, 'utf8');
      const messagesBefore = (await api.chats.get({ chatId: chat.id })).messages.length;

      let failure: string;
      if (limit === 'tmpfs') {
        fillDisk(join(mnt, 'filler'));
        failure = await sendFails(api, chat.id, 8);
      } else {
        // a reply long enough that its file passes the limit
        failure = await sendFails(api, chat.id, 1500);
      }
      assert.match(
        failure,
        limit === 'tmpfs'
          ? /the disk is full: .* could not be saved \(ENOSPC\); its previous version is kept/
          : /over the size limit: .* could not be saved \(EFBIG\); its previous version is kept/,
      );
      const onDisk = await readFile(file, 'utf8');
      if (limit === 'tmpfs') assert.equal(onDisk, before, 'the previous file is intact');
      // whatever was saved last is a whole, valid chat (a reply's end may be what did not fit)
      const saved = await readDocument(CHAT, file);
      assert.equal(saved?.id, chat.id);
      assert.deepEqual(
        (await readdir(join(data, 'chats'))).filter((f) => f.endsWith('.tmp')),
        [],
        'no temporary file is left behind',
      );
      console.log(`full disk (${limit}): ${failure}`);
      if (limit === 'tmpfs')
        afterRefusedSend = {
          before: messagesBefore,
          now: (await api.chats.get({ chatId: chat.id })).messages.map((m) => (m.role === 'assistant' ? m.status : m.role)),
        };

      if (limit === 'tmpfs') {
        await rm(join(mnt, 'filler'));
        const next = await reply(api, () => api.chats.send({ chatId: chat.id, content: 'room again', sampling: { maxTokens: 8 } }));
        assert.equal(next.kind, 'done', 'with room again, the next reply is saved');
        assert.equal((await readDocument(CHAT, file))?.messages.at(-1)?.role, 'assistant');
      }
    } finally {
      client?.close();
      await serve?.stop('SIGTERM');
      if (mounted) execFileSync('umount', [mnt]);
    }
  });

  test(`the engine host SIGKILLed ${KILLS} times at seeded moments (seed ${SEED}): replies end engine-crashed with their tokens, the next request works, no chat is lost`, async () => {
    const data = join(dir, 'kill-data');
    const serve = await startPowerServe(['--data-dir', data, '--models-dir', modelsDir]);
    const client = connectApi(serve);
    const { api } = client;
    const servePid = serve.child.pid!;
    try {
      const ids = { target: await modelId(api, 'target'), 'hybrid-mtp': await modelId(api, 'hybrid-mtp') };
      let loaded: keyof typeof ids = 'target';
      const load = (name: keyof typeof ids) =>
        api.engine.load({
          modelId: ids[name],
          device: 'cpu',
          threads: 1,
          contextSize: 4096,
          draftMethod: { strategy: name === 'hybrid-mtp' ? 'mtp' : 'ngram' },
        });
      await load(loaded);
      const chats = [
        await api.chats.create({ title: 'a' }),
        await api.chats.create({ title: 'b' }),
        await api.chats.create({ title: 'c' }),
      ];
      for (const c of chats)
        assert.equal(
          (await reply(api, () => api.chats.send({ chatId: c.id, content: 'warm up', sampling: { maxTokens: 4 } }))).kind,
          'done',
        );

      const schedule = fc.sample(
        fc.record({
          action: fc.constantFrom('ws-send', 'ws-regenerate', 'v1-stream', 'load'),
          afterTokens: fc.integer({ min: 1, max: 48 }),
          delayMs: fc.integer({ min: 0, max: 150 }),
          chat: fc.integer({ min: 0, max: chats.length - 1 }),
          model: fc.constantFrom<keyof typeof ids>('target', 'hybrid-mtp'),
        }),
        { seed: SEED, numRuns: KILLS },
      );
      const recoveries: number[] = [];
      const outcomes = new Map<string, number>();
      const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
      for (const [i, step] of schedule.entries()) {
        const label = `step ${i} (${step.action}, after ${step.action === 'load' ? `${step.delayMs} ms` : `${step.afterTokens} tokens`})`;
        let killedAt = 0;
        let host = 0;
        let asked = false;
        const running = engineHostPid(servePid);
        // whichever host runs at that moment; between the old host and the new one of a load, the
        // new one once it is STARTUP_MS old (a host killed as it starts has a test of its own below)
        const kill = (): void => {
          if (asked) return;
          asked = true;
          const deadline = performance.now() + 5000;
          let seen = 0;
          const attempt = (): void => {
            const pid = engineHostPid(servePid);
            if (pid && pid !== running) seen ||= performance.now();
            if (pid && (pid === running || performance.now() - seen >= STARTUP_MS)) {
              killedAt = performance.now();
              host = pid;
              process.kill(pid, 'SIGKILL');
            } else if (performance.now() < deadline) setTimeout(attempt, 1);
          };
          attempt();
        };
        if (step.action === 'ws-send' || step.action === 'ws-regenerate') {
          const chatId = chats[step.chat]!.id;
          const end = await reply(
            api,
            () =>
              step.action === 'ws-send'
                ? api.chats.send({ chatId, content: `message ${i}`, sampling: { maxTokens: 4000 } })
                : api.chats.regenerate({ chatId, sampling: { maxTokens: 4000 } }),
            (n) => n >= step.afterTokens && kill(),
          );
          assert.equal(end.kind, 'error', `${label}: the reply ends with an error`);
          assert.equal(end.error?.code, 'engine-crashed', `${label}: ${JSON.stringify(end.error)}`);
          const message = (await api.chats.get({ chatId })).messages.find((m) => m.id === end.messageId);
          assert.ok(message?.role === 'assistant' && message.status === 'error', `${label}: the message is marked as failed`);
          assert.deepEqual(
            message.tokens.map((t) => t.id),
            end.tokens,
            `${label}: the message keeps the tokens streamed before the kill`,
          );
          assert.ok(end.tokens.length >= step.afterTokens, `${label}: ${end.tokens.length} tokens kept`);
          count(`${step.action} crashed`);
        } else if (step.action === 'v1-stream') {
          const events = await v1Stream(serve, loaded, 4000, (n) => n >= step.afterTokens && kill());
          const last = JSON.parse(events.at(-1)!) as { error?: { code?: string } };
          assert.equal(last.error?.code, 'engine-crashed', `${label}: the stream ends with the error (${events.at(-1)})`);
          assert.ok(!events.includes('[DONE]'), `${label}: no [DONE] after the error`);
          count('v1-stream crashed');
        } else {
          // a load, killed while it runs (or, if it was quicker, just after)
          const next: keyof typeof ids = loaded === 'target' ? 'hybrid-mtp' : 'target';
          const loading = load(next).then(
            () => 'loaded',
            (e: { code?: string; message?: string }) => `failed ${e.code}${e.code === 'engine-crashed' ? '' : `: ${e.message}`}`,
          );
          await new Promise((r) => setTimeout(r, step.delayMs));
          kill();
          const outcome = await loading;
          while (!killedAt) {
            assert.ok(asked, `${label}: the kill was asked for`);
            await new Promise((r) => setTimeout(r, 5));
          }
          // a load the kill interrupts must fail engine-crashed, not as a bad model file: counted
          // here, and the test below holds the answer
          const mislabelled = /^failed bad-input: llama\.cpp crashed while loading .*signal SIGKILL/.test(outcome);
          if (mislabelled) loadKillsMislabelled.push(outcome);
          assert.ok(
            outcome === 'loaded' || outcome === 'failed engine-crashed' || mislabelled,
            `${label}: ${outcome}\n${serve.stderr().slice(-3000)}`,
          );
          count(`load ${mislabelled ? 'failed bad-input (mislabelled)' : outcome}`);
          if (outcome === 'loaded') {
            // the kill hit an idle host: the probe waits until the server has seen it die (a
            // request racing the exit fails engine-crashed itself: reported, see docs/testing.md)
            loaded = next;
            const seen = Date.now() + 10_000;
            while (!(await api.engine.state({})).reloadPending) {
              assert.ok(Date.now() < seen, `${label}: the server notices the idle host's death`);
              await new Promise((r) => setTimeout(r, 5));
            }
          } else await load(next).then(() => (loaded = next));
        }
        // the next request: served by a fresh host, and the time from the kill to its first token
        const probeChat = chats[(step.chat + 1) % chats.length]!.id;
        let firstToken = 0;
        const probe = await reply(
          api,
          () => api.chats.send({ chatId: probeChat, content: `after kill ${i}`, sampling: { maxTokens: 4 } }),
          () => {
            firstToken ||= performance.now();
          },
        );
        assert.ok(killedAt > 0, `${label}: an engine host was killed`);
        assert.equal(probe.kind, 'done', `${label}: the next request works (${JSON.stringify(probe.error)})`);
        assert.notEqual(engineHostPid(servePid), host, `${label}: a new engine host serves it`);
        recoveries.push(firstToken - killedAt);
      }

      // every chat on disk is whole, and the same as the server holds
      const served = await Promise.all(chats.map((c) => api.chats.get({ chatId: c.id })));
      client.close();
      assert.deepEqual(await serve.stop('SIGTERM'), { code: 0, signal: null });
      const files = await readdir(join(data, 'chats'));
      assert.deepEqual(files.sort(), chats.map((c) => `${c.id}.json`).sort(), 'one file per chat, none set aside, no temporary file');
      for (const chat of served) {
        const onDisk = await readDocument(CHAT, join(data, 'chats', `${chat.id}.json`));
        assert.deepEqual(
          onDisk?.messages.map((m) => [m.id, m.role, m.role === 'assistant' ? m.status : '', m.role === 'assistant' ? m.tokens.length : 0]),
          chat.messages.map((m) => [m.id, m.role, m.role === 'assistant' ? m.status : '', m.role === 'assistant' ? m.tokens.length : 0]),
          `chat ${chat.title} on disk is the one served`,
        );
      }
      killCampaignRan = true;
      const sorted = [...recoveries].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const summary = [...outcomes.entries()].map(([k, n]) => `${k}: ${n}`).join(', ');
      console.log(
        `host kills: ${KILLS} (seed ${SEED}; ${summary}); kill → next served token: median ${median.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms`,
      );
    } finally {
      client.close();
      await serve.stop('SIGKILL');
    }
  });

  test('a send that the full disk refused leaves the chat as it was', () => {
    assert.ok(afterRefusedSend, 'the full-disk test ran on a tmpfs');
    assert.equal(afterRefusedSend.now.length, afterRefusedSend.before, JSON.stringify(afterRefusedSend.now));
    assert.ok(!afterRefusedSend.now.includes('streaming'));
  });

  test('an engine host killed as it starts does not take power serve down', async () => {
    const serve = await startPowerServe(['--data-dir', join(dir, 'startup-data'), '--models-dir', modelsDir]);
    const client = connectApi(serve);
    try {
      const id = await modelId(client.api, 'target');
      for (let i = 0; i < 5; i++) {
        const loading = client.api.engine
          .load({ modelId: id, device: 'cpu', threads: 1, contextSize: 4096, draftMethod: { strategy: 'none' } })
          .catch((e: Error) => e);
        const until = Date.now() + 5000;
        let pid: number | null = null;
        while (!(pid = engineHostPid(serve.child.pid!)) && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
        if (pid) process.kill(pid, 'SIGKILL');
        await loading;
        assert.equal(serve.child.exitCode, null, `power serve is still running (${serve.stderr().slice(-600)})`);
      }
      await client.api.engine.load({ modelId: id, device: 'cpu', threads: 1, contextSize: 4096, draftMethod: { strategy: 'none' } });
    } finally {
      client.close();
      await serve.stop('SIGKILL');
    }
  });

  test('a load the host is killed during fails engine-crashed, not as a bad model file', () => {
    assert.ok(killCampaignRan, 'the kill campaign ran');
    assert.deepEqual(loadKillsMislabelled, []);
  });
});

interface End {
  kind: 'done' | 'error';
  messageId: string;
  error?: { code: string; message: string };
  tokens: number[];
}

/** Starts a reply with `start` and follows its events over /ws to its end; `onTokens` sees the running count. */
async function reply(api: Api, start: () => Promise<{ assistantMessageId: string }>, onTokens?: (n: number) => void): Promise<End> {
  let id = '';
  const tokens: number[] = [];
  const early: Parameters<Parameters<Api['generation']['onRounds']>[0]>[0][] = [];
  let settle: (end: End) => void = () => {};
  const ended = new Promise<End>((resolve) => (settle = resolve));
  let finished: End | null = null;
  const take = (e: { messageId: string; rounds: Parameters<typeof streamedTokens>[0]['rounds'] }): void => {
    for (const t of streamedTokens(e)) tokens.push(t.id);
    onTokens?.(tokens.length);
  };
  const offs = [
    api.generation.onRounds((e) => {
      if (!id) early.push(e);
      else if (e.messageId === id) take(e);
    }),
    api.generation.onDone((d) => {
      if (d.messageId === id) settle({ kind: 'done', messageId: id, tokens });
      else if (!id) finished = { kind: 'done', messageId: d.messageId, tokens };
    }),
    api.generation.onError((e) => {
      if (e.messageId === id) settle({ kind: 'error', messageId: id, error: e.error, tokens });
      else if (!id) finished = { kind: 'error', messageId: e.messageId, error: e.error, tokens };
    }),
  ];
  try {
    // the subscriptions are in place before the reply starts (a subscribe is a round trip)
    await api.generation.active({});
    id = (await start()).assistantMessageId;
    for (const e of early.splice(0)) if (e.messageId === id) take(e);
    const f = finished as End | null;
    if (f && f.messageId === id) return f;
    return await ended;
  } finally {
    offs.forEach((off) => off());
  }
}

/** A chat send that must fail (the disk is full): its error message, from the call or from the reply's end. */
async function sendFails(api: Api, chatId: string, maxTokens: number): Promise<string> {
  try {
    const end = await reply(api, () => api.chats.send({ chatId, content: 'no room', sampling: { maxTokens } }));
    assert.equal(end.kind, 'error', 'the reply cannot be saved');
    return end.error!.message;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A streamed /v1/completions on `model`; `onEvent` sees the number of data events so far. Resolves with all of them. */
async function v1Stream(serve: PowerServe, model: string, maxTokens: number, onEvent: (n: number) => void): Promise<string[]> {
  const res = await fetch(`${serve.origin}/v1/completions`, {
    method: 'POST',
    headers: { ...serve.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'one two three', max_tokens: maxTokens, stream: true }),
  });
  assert.equal(res.status, 200);
  let body = '';
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    body += Buffer.from(value).toString('utf8');
    onEvent(sseData(body).length);
  }
  return sseData(body);
}

/** Writes into `path` until the file system is full, down to the last byte. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 16, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size, 0x78);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
