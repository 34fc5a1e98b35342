// Crash-safe storage: a writer SIGKILLed at random moments always leaves the last complete
// state (never a torn or empty file); documents are versioned and migrated; the data folder
// follows the OS convention unless overridden.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { z } from 'zod';

import { CHAT } from '../../app/service/chat-store.js';
import { defaultDataDir } from '../../app/service/data-dir.js';
import { SETTINGS } from '../../app/service/settings.js';
import { decodeDocument, readDocument, writeDocument } from '../../app/service/storage/document.js';
import { asVersion3, ENVIRONMENT, sampleChat } from '../fixtures/chats.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

describe('storage', () => {
  const dir = suiteTempDir('power-storage-');

  test('a writer killed at random moments always leaves the last complete state', async () => {
    const kind = { format: 'crash-test', version: 1, schema: z.object({ n: z.number(), body: z.string() }) };
    const path = join(dir(), 'state.json');
    for (let run = 0; run < 5; run++) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/storage-writer.ts', path], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let reported = 0;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (s: string) => {
        for (const line of s.split('\n')) if (line) reported = Number(line);
      });
      // wait for a few writes, then kill at a random moment
      while (reported < 3) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, Math.random() * 60));
      // 'close': every line the child wrote has been read
      const exited = new Promise((r) => child.once('close', r));
      child.kill('SIGKILL');
      await exited;
      const doc = await readDocument(kind, path);
      assert.ok(doc, 'the file exists');
      // the reported write is complete; one more may have completed between report and kill
      assert.ok(doc.n === reported || doc.n === reported + 1, `run ${run}: file holds ${doc.n}, last reported ${reported}`);
      assert.equal(doc.body, `${doc.n}:`.padEnd(200_000, String(doc.n % 10)));
    }
    // leftover temporary files are never the live file
    const names = await readdir(dir());
    assert.ok(names.includes('state.json'));
  });

  test('documents are versioned: older ones migrate, newer ones are refused', async () => {
    const v2 = {
      format: 'thing',
      version: 2,
      schema: z.object({ title: z.string() }),
      migrations: { 1: (d: unknown) => ({ title: (d as { name: string }).name }) },
    };
    const path = join(dir(), 'thing.json');
    await writeFile(path, JSON.stringify({ format: 'power.thing', version: 1, data: { name: 'old' } }));
    assert.deepEqual(await readDocument(v2, path), { title: 'old' });
    await writeDocument(v2, path, { title: 'new' });
    assert.equal(JSON.parse(await readFile(path, 'utf8')).version, 2);
    assert.throws(() => decodeDocument(v2, JSON.stringify({ format: 'power.thing', version: 3, data: {} }), 'x'), /newer Power/);
    assert.throws(() => decodeDocument(v2, '{"format":"power.other","version":1}', 'x'), /not a power.thing document/);
    assert.throws(() => decodeDocument(v2, '{', 'x'), /not JSON/);
    assert.equal(await readDocument(v2, join(dir(), 'missing.json')), null);
  });

  test("a chat saved when a reply's environment was called `runtime` (version 1) loads with it as `environment`", async () => {
    const chat = await sampleChat();
    const old = JSON.parse(JSON.stringify(asVersion3(chat))) as {
      messages: Record<string, unknown>[];
      superseded?: { message: Record<string, unknown> }[];
    };
    const replies = [...old.messages, ...(old.superseded ?? []).map((s) => s.message)].filter((m) => m.role === 'assistant');
    assert.ok(replies.length > 0 && replies.every((m) => 'environment' in m));
    for (const m of replies) {
      m.runtime = m.environment;
      delete m.environment;
    }
    const loaded = decodeDocument(CHAT, JSON.stringify({ format: 'power.chat', version: 1, data: old }), 'chat.json');
    assert.deepEqual(loaded, chat);
    const reply = loaded.messages.find((m) => m.role === 'assistant');
    assert.deepEqual(reply?.role === 'assistant' ? reply.environment : null, ENVIRONMENT);
  });

  test("settings saved when the last load's draft method was called `method` (version 1) load with it as `draftMethod`", () => {
    const lastLoad = { modelId: 'a'.repeat(8), device: 'cpu', gpuLayers: -1, method: { strategy: 'draft-model', draftId: 'b'.repeat(8) } };
    const text = JSON.stringify({ format: 'power.settings', version: 1, data: { activeProfileId: 'balanced', profiles: [], lastLoad } });
    const loaded = decodeDocument(SETTINGS, text, 'settings.json');
    assert.deepEqual(loaded.lastLoad?.draftMethod, { strategy: 'draft-model', fallbacks: [], draftId: 'b'.repeat(8) });
    assert.equal(Object.hasOwn(loaded.lastLoad ?? {}, 'method'), false);
    const none = decodeDocument(
      SETTINGS,
      JSON.stringify({ format: 'power.settings', version: 1, data: { lastLoad: null } }),
      'settings.json',
    );
    assert.equal(none.lastLoad, null);
  });

  test('the data folder follows the OS convention; POWER_DATA_DIR overrides', () => {
    assert.equal(defaultDataDir({ POWER_DATA_DIR: '/d' }, 'linux'), '/d');
    assert.equal(defaultDataDir({ HOME: '/h' }, 'linux'), join('/h', '.local', 'share', 'power'));
    assert.equal(defaultDataDir({ HOME: '/h', XDG_DATA_HOME: '/x' }, 'linux'), join('/x', 'power'));
    assert.equal(defaultDataDir({ HOME: '/h', APPDATA: 'C:/AppData' }, 'win32'), join('C:/AppData', 'Power'));
    assert.equal(defaultDataDir({ HOME: '/h' }, 'darwin'), join('/h', 'Library', 'Application Support', 'Power'));
  });
});
