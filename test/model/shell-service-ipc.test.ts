// The desktop app's whole path except Electron itself, under Node: window.power as the preload
// builds it (main/ipc/client.ts) → the main side's dispatcher with the sender policy → the real
// PowerService → an engine host started through a utility-process style launcher (parentPort),
// on a synthetic model. Then quitting while a reply streams, as the shell's before-quit does:
// the reply stops, the chat is saved, the engine host exits, and the sequence ends with 0.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { ConcernSpec } from '../../app/contract/api/describe.js';
import { powerApi, type PowerApi } from '../../app/contract/api/index.js';
import { createIpcClient, type IpcRendererPort } from '../../main/ipc/client.js';
import { getDefaultEngineLauncher, setDefaultEngineLauncher } from '../../app/engine/launcher.js';
import { createIpcDispatcher, type SenderInfo } from '../../main/ipc/dispatcher.js';
import { createPowerService } from '../../app/service/index.js';
import type { PowerService } from '../../app/service/types.js';
import { createQuitSequence } from '../../main/policy/quit.js';
import { isTrustedSender } from '../../main/policy/sender.js';
import { emulatedUtilityLauncher } from '../fixtures/launchers.js';
import { syntheticModels } from '../fixtures/models.js';

const PAGE: SenderInfo = { id: 1, url: 'app://power/index.html', isMainFrame: true };

/**
 * window.power over an in-memory ipcRenderer/ipcMain pair on POWER_CHANNEL: each message is
 * cloned when it is sent and arrives on a later turn, as Electron delivers it.
 */
function windowPower(service: PowerService): { power: PowerApi; subscriptions: () => number } {
  const dispatcher = createIpcDispatcher(powerApi as Record<string, ConcernSpec>, service as never, { isTrustedSender });
  const listeners = new Set<(message: unknown) => void>();
  const later = (message: unknown, deliver: (copy: unknown) => void): void => {
    const copy = structuredClone(message);
    setImmediate(() => deliver(copy));
  };
  const toPage = (message: unknown): void => later(message, (copy) => listeners.forEach((l) => l(copy)));
  const port: IpcRendererPort = {
    send: (message) => later(message, (copy) => dispatcher.receive(PAGE, copy, toPage)),
    onMessage: (listener) => void listeners.add(listener),
  };
  return { power: createIpcClient(powerApi, port, { errorsAsData: true }), subscriptions: () => dispatcher.subscriptionCount() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the desktop path under Node: window.power → IPC → service → utility-process engine', () => {
  const original = getDefaultEngineLauncher();
  let dataDir = '';
  let service: PowerService;
  let power: PowerApi;
  let subscriptions: () => number;
  let modelsDir = '';

  before(async () => {
    setDefaultEngineLauncher(emulatedUtilityLauncher());
    modelsDir = dirname((await syntheticModels())['target.gguf']);
    dataDir = await mkdtemp(join(tmpdir(), 'power-shell-'));
    service = await createPowerService({ dataDir });
    ({ power, subscriptions } = windowPower(service));
  });
  after(async () => {
    setDefaultEngineLauncher(original);
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('load a synthetic model, send a message, read the streamed reply', async () => {
    const { added } = await power.models.add({ path: join(modelsDir, 'target.gguf') });
    const target = added[0]!;
    const state = await power.engine.load({ modelId: target.id, device: 'cpu', threads: 1, contextSize: 512 });
    assert.equal(state.status, 'ready');
    const chat = await power.chats.create({});
    const pieces: string[] = [];
    let messageId = '';
    const ended = new Promise<{ digest: string }>((resolve, reject) => {
      const offs = [
        power.generation.onRounds((e) => {
          if (e.messageId === messageId) pieces.push(...e.rounds.flatMap((r) => r.texts));
        }),
        power.generation.onDone((d) => {
          if (d.messageId !== messageId) return;
          offs.forEach((off) => off());
          resolve(d);
        }),
        power.generation.onError((e) => {
          if (e.messageId !== messageId) return;
          offs.forEach((off) => off());
          reject(new Error(e.error.message));
        }),
      ];
    });
    const started = await power.chats.send({ chatId: chat.id, content: 'hello', sampling: { maxTokens: 24 } });
    messageId = started.assistantMessageId;
    const done = await ended;
    assert.ok(pieces.length > 0, 'tokens streamed');
    const stored = await power.chats.get({ chatId: chat.id });
    const reply = stored.messages.at(-1)!;
    assert.ok(reply.role === 'assistant');
    assert.equal(reply.status, 'done');
    assert.equal(reply.content, pieces.join(''));
    assert.equal(reply.digest, done.digest);
    assert.equal(subscriptions(), 0, 'every subscription was released');
  });

  test('downloads are a concern of the service, so the desktop app has them too', async () => {
    assert.ok((await power.downloads.recommended({})).pairs.length > 0);
    assert.deepEqual(await power.downloads.list({}), { downloads: [] });
    await assert.rejects(power.downloads.cancel({ downloadId: 'none' }), (e: unknown) => (e as { code: string }).code === 'not-found');
  });

  test('errors reach the page as data with their code', async () => {
    await assert.rejects(power.chats.get({ chatId: 'no-such-chat' }), (e: unknown) => {
      assert.equal((e as { code: string }).code, 'not-found');
      return true;
    });
  });

  test('quitting while a reply streams stops it, saves the chat, ends the engine host and exits 0', async () => {
    const chat = await power.chats.create({});
    const enginePid = service.enginePid()!;
    assert.ok(enginePid > 0 && alive(enginePid));
    let tokens = 0;
    let messageId = '';
    const streaming = new Promise<void>((resolve) => {
      const off = power.generation.onRounds((e) => {
        if (e.messageId === messageId && (tokens += e.rounds.reduce((n, r) => n + r.tokenIds.length, 0)) >= 5) {
          off();
          resolve();
        }
      });
    });
    const started = await power.chats.send({ chatId: chat.id, content: 'tell me everything', sampling: { maxTokens: 100_000 } });
    messageId = started.assistantMessageId;
    await streaming;

    const exits: number[] = [];
    const quit = createQuitSequence({ close: () => service.close(), exit: (code) => exits.push(code), timeoutMs: 60_000 });
    let prevented = 0;
    quit.onBeforeQuit({ preventDefault: () => void prevented++ });
    assert.equal(prevented, 1, 'the first quit is held until the service has closed');
    assert.equal(await quit.done, 0, 'closed before the timeout');
    assert.deepEqual(exits, [0]);
    assert.equal(alive(enginePid), false, 'the engine host is gone');

    // what a restart finds on disk
    const again = await createPowerService({ dataDir });
    try {
      const saved = await again.chats.get({ chatId: chat.id });
      const reply = saved.messages.at(-1)!;
      assert.ok(reply.role === 'assistant');
      assert.equal(reply.status, 'stopped');
      assert.ok(reply.tokens.length >= 5, `${reply.tokens.length} tokens kept`);
      assert.equal(reply.content, reply.tokens.map((t) => t.text).join(''));
    } finally {
      await again.close();
    }
  });
});
