// Power for Windows under Wine when a reply or a file does not go as planned (docs/windows.md): a
// reply stopped over /ws is cancelled through the engine's messages (Windows has no signals) and
// saved as stopped; the engine host killed mid-reply is detected, the reply ends with
// engine-crashed and the next one starts a new host; a loaded model is locked as Windows locks it,
// and `power quantize` told to write over it says why it cannot and leaves it whole; a model that
// another program holds without sharing gets a clear error; a chat file that a scanner or a sync
// client holds for a moment is saved once it lets go.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { WebSocket } from 'ws';

import { powerApi } from '../../app/contract/api/index.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { ROOT } from '../../app/paths.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';
import { syntheticModels } from '../fixtures/models.js';
import {
  holdOnWindows,
  powerOnWindows,
  runOnWindows,
  serveOnWindows,
  stageWindowsInstall,
  windowsEngineHostPid,
  WIN_NODE,
  windowsMissing,
  winPath,
} from '../fixtures/wine.js';

const missing = requirePrerequisite(windowsMissing());
// the server's own copies: a quantize that wrongly got through would write over them
const MODELS = join(ROOT, '.cache', 'windows', 'fault models');
const DATA = join(MODELS, '..', 'fault data');
const TOKEN = 'wine-faults-token';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('Power for Windows under Wine: cancel, crash and locked files', { skip: missing }, () => {
  let serve: { url: string; stop(): void };
  let api: ReturnType<typeof createApiClient<typeof powerApi>>['api'];
  let closeApi = () => {};
  let targetId = '';
  let stage = '';

  before(async () => {
    stage = stageWindowsInstall();
    const set = await syntheticModels();
    rmSync(MODELS, { recursive: true, force: true });
    rmSync(DATA, { recursive: true, force: true });
    mkdirSync(MODELS, { recursive: true });
    copyFileSync(set['target.gguf'], join(MODELS, 'target.gguf'));
    serve = await serveOnWindows(['--port', '0', '--token', TOKEN, '--models-dir', winPath(MODELS), '--data-dir', winPath(DATA)]);
    const ws = new WebSocket(`${new URL(serve.url).origin.replace('http', 'ws')}/ws`, { headers: { authorization: `Bearer ${TOKEN}` } });
    ({ api, close: closeApi } = createApiClient(powerApi, ws));
    targetId = (await api.models.list({})).entries.find((e) => e.name === 'target')!.id;
  });
  after(() => {
    closeApi();
    serve?.stop();
  });

  /** A reply of `maxTokens` in a new chat; `whileStreaming` runs at its first rounds. */
  async function reply(maxTokens: number, whileStreaming?: (chatId: string) => void | Promise<void>) {
    await api.engine.load({ modelId: targetId, threads: 2 });
    const chat = await api.chats.create({});
    let acted = false;
    const offRounds = api.generation.onRounds((e) => {
      if (e.chatId !== chat.id || acted) return;
      acted = true;
      void whileStreaming?.(chat.id);
    });
    const offEnds: (() => void)[] = [];
    const ended = new Promise<{ stopReason?: string; error?: { code: string; message: string } }>((resolve) => {
      offEnds.push(api.generation.onDone((e) => e.chatId === chat.id && resolve({ stopReason: e.stopReason })));
      offEnds.push(api.generation.onError((e) => e.chatId === chat.id && resolve({ error: e.error })));
    });
    await api.chats.send({ chatId: chat.id, content: 'one two three', sampling: { maxTokens } });
    const end = await ended;
    for (const off of [offRounds, ...offEnds]) off();
    const saved = (await api.chats.get({ chatId: chat.id })).messages.at(-1)!;
    assert.equal(saved.role, 'assistant');
    return { end, saved: saved as Extract<typeof saved, { role: 'assistant' }> };
  }

  test('a reply stopped over /ws is cancelled through the engine and saved as stopped; the next one runs', async () => {
    const { end, saved } = await reply(2000, async (chatId) => assert.deepEqual(await api.chats.stop({ chatId }), { stopped: true }));
    assert.equal(end.stopReason, 'cancelled', JSON.stringify(end));
    assert.equal(saved.status, 'stopped');
    assert.ok(saved.tokens.length > 0 && saved.tokens.length < 2000, `${saved.tokens.length} tokens kept`);
    const next = await reply(8);
    assert.equal(next.end.stopReason, 'max-tokens', JSON.stringify(next.end));
    assert.equal(next.saved.tokens.length, 8);
  });

  test('the engine host killed mid-reply: the reply ends with engine-crashed, its tokens kept, and a new host answers the next', async () => {
    let killed: number | null = null;
    const { end, saved } = await reply(2000, () => {
      killed = windowsEngineHostPid();
      assert.ok(killed, 'the engine host runs');
      process.kill(killed, 'SIGKILL');
    });
    assert.equal(end.error?.code, 'engine-crashed', JSON.stringify(end));
    assert.match(end.error!.message, /the engine process stopped/);
    assert.equal(saved.status, 'error');
    assert.ok(saved.tokens.length > 0 && saved.tokens.length < 2000, `${saved.tokens.length} tokens kept`);
    const next = await reply(8);
    assert.equal(next.end.stopReason, 'max-tokens', JSON.stringify(next.end));
    const host = windowsEngineHostPid();
    assert.ok(host !== null && host !== killed, 'a new engine host');
  });

  test('the engine host dies of an illegal instruction: Windows ends it with STATUS_ILLEGAL_INSTRUCTION, and Power gives the advice Linux gives for SIGILL', () => {
    const run = runOnWindows(WIN_NODE, [winPath(join(ROOT, 'test', 'fixtures', 'windows-engine-trap.mjs')), winPath(stage)]);
    const end = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
      name?: string;
      message?: string;
      exit?: { code: number | null };
    };
    assert.equal(end.name, 'EngineCrashedError', `${run.stdout}\n${run.stderr}`);
    assert.equal((end.exit?.code ?? 0) >>> 0, 0xc000001d, 'the exit code is the exception');
    assert.match(
      end.message!,
      /\(exit code 0xC000001D, STATUS_ILLEGAL_INSTRUCTION\): the cpu flavour's llama\.cpp ran an instruction this CPU does not execute; .*POWER_FLAVOUR=cpu-prebuilt/,
    );
  });

  test('power quantize cannot write over a model the server has loaded: it says why and the model stays whole', async () => {
    await api.engine.load({ modelId: targetId, threads: 2 });
    const loaded = join(MODELS, 'target.gguf');
    const before = sha256(loaded);
    const source = join(MODELS, '..', 'quantize source.gguf');
    copyFileSync((await syntheticModels())['target.gguf'], source);
    const run = powerOnWindows(['quantize', winPath(source), winPath(loaded), '--recipe', 'q8_0', '--force']);
    assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
    assert.match(
      run.stderr,
      /cannot write .*target\.gguf: operation not permitted \(on Windows also what a file open in another program gives/,
    );
    assert.equal(sha256(loaded), before, 'the loaded model is untouched');
    assert.deepEqual(
      readdirSync(MODELS).filter((f) => f.endsWith('.tmp') || f.includes('.part')),
      [],
      'no temporary file is left',
    );
  });

  test('a chat file another program holds for a moment (a virus scanner, a sync client) is saved once it lets go', async () => {
    const chat = await api.chats.create({ title: 'before' });
    const file = join(DATA, 'chats', `${chat.id}.json`);
    const holder = await holdOnWindows(file);
    const holdMs = 2000;
    const since = Date.now();
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        holder.release();
        resolve();
      }, holdMs),
    );
    try {
      const renamed = await api.chats.rename({ chatId: chat.id, title: 'after' });
      assert.equal(renamed.title, 'after');
      assert.ok(Date.now() - since >= holdMs, 'the save waited for the holder');
    } finally {
      await released;
    }
    assert.equal(
      (JSON.parse(readFileSync(file, 'utf8')) as { data: { title: string } }).data.title,
      'after',
      'the file holds the new title',
    );
  });

  test('a model another program holds without sharing: power generate says the file is in use', async () => {
    const model = join(MODELS, '..', 'held model.gguf');
    copyFileSync((await syntheticModels())['target.gguf'], model);
    const holder = await holdOnWindows(model);
    try {
      const run = powerOnWindows(['generate', '--model', winPath(model), '--prompt-tokens', '1,300,301', '--max-tokens', '4']);
      assert.equal(run.code, 2, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stderr, /cannot read the model file .*held model\.gguf: the file is in use by another program/);
    } finally {
      holder.release();
    }
    const after = powerOnWindows(['generate', '--model', winPath(model), '--prompt-tokens', '1,300,301', '--max-tokens', '4']);
    assert.equal(after.code, 0, `released, it loads: ${after.stderr}`);
  });
});
