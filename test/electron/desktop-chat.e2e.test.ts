// End to end in the real Electron app (Playwright's Electron support): launch Power on a fresh
// data folder, load a synthetic model through window.power, send a message and read the
// streamed reply; check what the page can and cannot reach; quit while a reply streams and
// find the chat saved after a restart. Needs the Electron binary (and a display: xvfb-run on a
// headless Linux box). Where the binary is absent (these build machines) the test is skipped
// with the reason; see docs/testing.md "The Electron test" for running it with internet access.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { _electron, type ElectronApplication, type Page } from 'playwright-core';

import { powerApi } from '../../app/contract/api/index.js';
import { ROOT } from '../../app/paths.js';
import { syntheticModels } from '../fixtures/models.js';
import { inCi } from '../fixtures/prerequisite.js';

const { electronBinary } = (await import(join(ROOT, 'scripts', 'electron-binary.mjs'))) as {
  electronBinary: (root?: string) => { path: string | null; reason: string | null };
};
const electron = electronBinary(ROOT);
const skip = electron.path
  ? false
  : `Electron end-to-end test not run: ${electron.reason}. With internet access: node node_modules/electron/install.js, then npm test -- desktop-chat` +
    // a plain skip, not requirePrerequisite: CI's machine cannot download the binary either
    (inCi() ? ' (CI: its machine has no Electron binary, so this test skips there too)' : '');

async function launch(dataDir: string): Promise<{ app: ElectronApplication; page: Page }> {
  const app = await _electron.launch({
    executablePath: electron.path!,
    // Chromium refuses to run as root with its OS sandbox (CI containers); the renderer's
    // sandbox option and every other rule stay on
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), ROOT],
    env: { ...process.env, POWER_DATA_DIR: dataDir },
    timeout: 60_000,
  });
  const page = await app.firstWindow();
  await page.waitForFunction(() => typeof window.power === 'object');
  return { app, page };
}

describe('Power in Electron', () => {
  let dataDir = '';
  let modelPath = '';
  before(async () => {
    if (skip) return;
    const built = spawnSync(process.execPath, ['scripts/build-app.mjs'], { cwd: ROOT, stdio: 'inherit' });
    assert.equal(built.status, 0, 'the app builds');
    modelPath = (await syntheticModels())['target.gguf'];
    dataDir = await mkdtemp(join(tmpdir(), 'power-electron-'));
  });
  after(() => (dataDir ? rm(dataDir, { recursive: true, force: true }) : undefined));

  test(
    'loads a synthetic model, streams a reply, keeps Node out of the page, and quits mid-reply without losing the chat',
    { skip },
    async () => {
      let { app, page } = await launch(dataDir);
      try {
        assert.match(page.url(), /^app:\/\/power\//);
        const reach = await page.evaluate(() => ({
          require: typeof (window as unknown as { require?: unknown }).require,
          process: typeof (window as unknown as { process?: unknown }).process,
          ipcRenderer: 'ipcRenderer' in window,
          concerns: Object.keys(window.power!).sort(),
        }));
        assert.deepEqual(reach, { require: 'undefined', process: 'undefined', ipcRenderer: false, concerns: Object.keys(powerApi).sort() });

        const reply = await page.evaluate(async (path) => {
          const { added } = await window.power!.models.add({ path });
          await window.power!.engine.load({ modelId: added[0]!.id, device: 'cpu', threads: 1, contextSize: 512 });
          const chat = await window.power!.chats.create({});
          const pieces: string[] = [];
          let id = '';
          const done = new Promise<string>((resolve, reject) => {
            const offs = [
              window.power!.generation.onRounds((e) => void (e.messageId === id && pieces.push(...e.rounds.flatMap((r) => r.texts)))),
              window.power!.generation.onDone((d) => {
                if (d.messageId !== id) return;
                offs.forEach((o) => o());
                resolve(d.digest);
              }),
              window.power!.generation.onError((e) => {
                if (e.messageId !== id) return;
                offs.forEach((o) => o());
                reject(new Error(e.error.message));
              }),
            ];
          });
          id = (await window.power!.chats.send({ chatId: chat.id, content: 'hello', sampling: { maxTokens: 24 } })).assistantMessageId;
          const digest = await done;
          const stored = await window.power!.chats.get({ chatId: chat.id });
          return { pieces, digest, stored: stored.messages.at(-1) };
        }, modelPath);
        assert.ok(reply.pieces.length > 0, 'tokens streamed to the page');
        assert.equal(reply.stored?.role, 'assistant');
        assert.equal((reply.stored as { content: string }).content, reply.pieces.join(''));

        // a long reply, then quit while it streams
        const chatId = await page.evaluate(async () => {
          const chat = await window.power!.chats.create({});
          let id = '';
          let n = 0;
          const five = new Promise<void>((resolve) => {
            const off = window.power!.generation.onRounds((e) => {
              if (e.messageId !== id || (n += e.rounds.reduce((k, r) => k + r.tokenIds.length, 0)) < 5) return;
              off();
              resolve();
            });
          });
          id = (await window.power!.chats.send({ chatId: chat.id, content: 'go on', sampling: { maxTokens: 100000 } })).assistantMessageId;
          await five;
          return chat.id;
        });
        const exited = new Promise<void>((resolve) => app.process().once('exit', () => resolve()));
        await app.close();
        await exited;

        ({ app, page } = await launch(dataDir));
        const saved = await page.evaluate((id) => window.power!.chats.get({ chatId: id }), chatId);
        const last = saved.messages.at(-1)!;
        assert.equal(last.role, 'assistant');
        assert.equal((last as { status: string }).status, 'stopped');
      } finally {
        await app.close().catch(() => {});
      }
    },
  );
});
