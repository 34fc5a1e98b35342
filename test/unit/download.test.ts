// Model downloads against a local HTTP server serving a synthetic GGUF: whole, interrupted and
// resumed, checked (size, SHA-256, GGUF header), refused (404, not a GGUF, disk full), cancelled.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { RECOMMENDED_PAIRS, RecommendedPair } from '../../app/contract/recommended-models.js';
import type { DownloadEntry } from '../../app/contract/api/downloads.js';
import { DownloadError, downloadModel, partialPath, type DownloadProgress } from '../../app/models/download.js';
import { DownloadManager } from '../../app/models/downloads.js';
import { startFileServer, type FileServer } from '../fixtures/file-server.js';
import { syntheticModels } from '../fixtures/models.js';

let dir = '';
let model: Buffer;
let sha = '';
let server: FileServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-download-'));
  model = await readFile((await syntheticModels())['draft-far.gguf']);
  sha = createHash('sha256').update(model).digest('hex');
  server = await startFileServer({
    '/model.gguf': { body: model },
    '/cut.gguf': { body: model, cutAfter: 700_000 },
    '/no-range.gguf': { body: model, cutAfter: 300_000, ignoreRange: true },
    '/slow.gguf': { body: model, trickle: { chunk: 16_384, delayMs: 20 } },
    '/page.gguf': {
      body: Buffer.from('<!doctype html><title>Sign in</title>\n'.repeat(50_000)),
      trickle: { chunk: 65_536, delayMs: 20 },
      contentType: 'text/html',
    },
    '/fake-header.gguf': { body: Buffer.concat([model.subarray(0, 64), Buffer.alloc(1000)]) },
  });
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<DownloadError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof DownloadError, `expected a DownloadError, got ${String(error)}`);
    return error;
  }
  assert.fail('the download succeeded');
}

describe('downloadModel', () => {
  test('downloads a GGUF whole, with progress, and returns its size and SHA-256', async () => {
    const dest = join(dir, 'whole.gguf');
    const seen: DownloadProgress[] = [];
    const r = await downloadModel({
      url: server.url('/model.gguf'),
      dest,
      sha256: sha,
      sizeBytes: model.length,
      onProgress: (p) => seen.push(p),
      progressIntervalMs: 0,
    });
    assert.deepEqual(r, { path: dest, sizeBytes: model.length, sha256: sha, resumedFromBytes: 0 });
    assert.ok((await readFile(dest)).equals(model));
    assert.equal(existsSync(partialPath(dest)), false);
    assert.ok(seen.length >= 2);
    assert.equal(seen.at(-1)!.receivedBytes, model.length);
    assert.ok(seen.every((p) => p.totalBytes === model.length));
    assert.ok(seen.every((p, i) => i === 0 || p.receivedBytes >= seen[i - 1]!.receivedBytes));
  });

  test('an interrupted transfer keeps its partial file and the next attempt resumes it with a Range request', async () => {
    const dest = join(dir, 'resumed.gguf');
    const first = await rejection(downloadModel({ url: server.url('/cut.gguf'), dest, sha256: sha }));
    assert.equal(first.code, 'network');
    assert.equal(first.resumable, true);
    assert.match(first.message, /interrupted|ended/);
    const kept = (await stat(partialPath(dest))).size;
    assert.ok(kept > 0 && kept <= 700_000, `kept ${kept} bytes`);
    assert.equal(existsSync(dest), false);

    const r = await downloadModel({ url: server.url('/cut.gguf'), dest, sha256: sha });
    assert.equal(r.resumedFromBytes, kept);
    assert.equal(r.sha256, sha);
    assert.ok((await readFile(dest)).equals(model));
    assert.deepEqual(
      server.requests.filter((q) => q.path === '/cut.gguf').map((q) => q.range),
      [null, `bytes=${kept}-`],
    );
  });

  test('a server that ignores Range makes the resume start over, still correct', async () => {
    const dest = join(dir, 'no-range.gguf');
    await rejection(downloadModel({ url: server.url('/no-range.gguf'), dest }));
    // what reached the disk before the cut: the server sends 300,000 bytes, the last of them may
    // still be in flight when the socket closes
    const kept = (await stat(partialPath(dest))).size;
    assert.ok(kept > 0 && kept <= 300_000, `kept ${kept} bytes`);
    const r = await downloadModel({ url: server.url('/no-range.gguf'), dest, sha256: sha });
    assert.equal(r.resumedFromBytes, 0);
    assert.deepEqual(
      server.requests.filter((q) => q.path === '/no-range.gguf').map((q) => q.range),
      [null, `bytes=${kept}-`],
    );
    assert.equal(r.sizeBytes, model.length);
    assert.ok((await readFile(dest)).equals(model));
  });

  test('a wrong SHA-256 fails and leaves neither the file nor a partial', async () => {
    const dest = join(dir, 'bad-sha.gguf');
    const e = await rejection(downloadModel({ url: server.url('/model.gguf'), dest, sha256: '0'.repeat(64) }));
    assert.equal(e.code, 'sha256-mismatch');
    assert.match(e.message, new RegExp(`got ${sha}, expected 0{64}`));
    assert.equal(existsSync(dest), false);
    assert.equal(existsSync(partialPath(dest)), false);
  });

  test('a size the server contradicts fails before any byte is written', async () => {
    const dest = join(dir, 'bad-size.gguf');
    const e = await rejection(downloadModel({ url: server.url('/model.gguf'), dest, sizeBytes: 12345 }));
    assert.equal(e.code, 'size-mismatch');
    assert.match(e.message, new RegExp(`${model.length} bytes, expected 12345`));
    assert.equal(existsSync(partialPath(dest)), false);
  });

  test('an HTTP error is reported with its status and the URL', async () => {
    const dest = join(dir, 'missing.gguf');
    const e = await rejection(downloadModel({ url: server.url('/missing.gguf'), dest }));
    assert.equal(e.code, 'http');
    assert.match(e.message, /^HTTP 404 Not Found from http:\/\/127\.0\.0\.1:\d+\/missing\.gguf$/);
    assert.equal(existsSync(partialPath(dest)), false);
  });

  test('a body that is not a GGUF is refused at its first bytes, before the transfer ends', async () => {
    const dest = join(dir, 'page.gguf');
    const e = await rejection(downloadModel({ url: server.url('/page.gguf'), dest }));
    assert.equal(e.code, 'not-gguf');
    assert.match(e.message, /not a GGUF file \(it starts with "<!do", expected "GGUF"\)/);
    assert.equal(server.requests.find((q) => q.path === '/page.gguf')!.finished, false, 'the server was still sending');
    assert.equal(existsSync(partialPath(dest)), false);
  });

  test('a body with a GGUF magic but a broken header is refused after the transfer', async () => {
    const dest = join(dir, 'fake.gguf');
    const e = await rejection(downloadModel({ url: server.url('/fake-header.gguf'), dest }));
    assert.equal(e.code, 'not-gguf');
    assert.match(e.message, /is not a usable GGUF file: /);
    assert.equal(existsSync(dest), false);
  });

  test('cancel stops the transfer and removes the partial; keepPartialOnCancel keeps it to resume', async () => {
    const dest = join(dir, 'cancelled.gguf');
    const controller = new AbortController();
    const e = await rejection(
      downloadModel({
        url: server.url('/slow.gguf'),
        dest,
        signal: controller.signal,
        progressIntervalMs: 0,
        onProgress: (p) => p.receivedBytes > 100_000 && controller.abort(),
      }),
    );
    assert.equal(e.code, 'cancelled');
    assert.equal(existsSync(partialPath(dest)), false);
    assert.equal(existsSync(dest), false);

    const again = new AbortController();
    await rejection(
      downloadModel({
        url: server.url('/slow.gguf'),
        dest,
        signal: again.signal,
        keepPartialOnCancel: true,
        progressIntervalMs: 0,
        onProgress: (p) => p.receivedBytes > 100_000 && again.abort(),
      }),
    );
    const kept = (await stat(partialPath(dest))).size;
    assert.ok(kept > 100_000);
    const r = await downloadModel({ url: server.url('/model.gguf'), dest, sha256: sha });
    assert.equal(r.resumedFromBytes, kept);
  });

  test('a full disk is reported as such and the partial is kept to resume', { skip: process.platform !== 'linux' }, async () => {
    const dest = join(dir, 'full.gguf');
    // /dev/full fails every write with ENOSPC, as a full disk does
    await symlink('/dev/full', partialPath(dest));
    const e = await rejection(downloadModel({ url: server.url('/model.gguf'), dest }));
    assert.equal(e.code, 'disk-full');
    assert.match(e.message, /^disk full after 0 bytes while writing .*full\.gguf\.part; free some space/);
    assert.equal(e.resumable, true);
    await rm(partialPath(dest));
  });

  test('bad requests are refused before anything is fetched', async () => {
    const before = server.requests.length;
    const existing = join(dir, 'existing.gguf');
    await writeFile(existing, 'x');
    assert.equal((await rejection(downloadModel({ url: server.url('/model.gguf'), dest: existing }))).code, 'exists');
    assert.equal((await rejection(downloadModel({ url: 'ftp://example.invalid/m.gguf', dest: join(dir, 'a.gguf') }))).code, 'bad-input');
    assert.equal((await rejection(downloadModel({ url: 'not a url', dest: join(dir, 'a.gguf') }))).code, 'bad-input');
    assert.equal(
      (await rejection(downloadModel({ url: server.url('/model.gguf'), dest: join(dir, 'a.gguf'), sha256: 'abc' }))).code,
      'bad-input',
    );
    assert.equal(server.requests.length, before);
  });
});

describe('recommended pairs', () => {
  test('are valid data: https sources, a .gguf file name each, a draft exactly for draft-model', () => {
    assert.ok(RECOMMENDED_PAIRS.length >= 3);
    for (const pair of RECOMMENDED_PAIRS) {
      RecommendedPair.parse(pair);
      assert.equal(pair.draft !== null, pair.strategy === 'draft-model', pair.id);
    }
    assert.ok(RECOMMENDED_PAIRS.some((p) => p.strategy === 'mtp' && /Qwen3\.[56]/.test(p.title)));
    assert.ok(RECOMMENDED_PAIRS.some((p) => p.strategy === 'draft-model' && /Llama 3/.test(p.title) && /1B/.test(p.draft?.fileName ?? '')));
    assert.equal(new Set(RECOMMENDED_PAIRS.map((p) => p.id)).size, RECOMMENDED_PAIRS.length);
  });
});

describe('DownloadManager (the downloads concern)', () => {
  test('runs a download with change events, adds the file to the library, and reports failures and cancels as entries', async () => {
    const libDir = join(dir, 'library');
    const added: string[] = [];
    const manager = new DownloadManager({
      dir: libDir,
      addToLibrary: async (p) => (added.push(p), `model-${added.length}`),
      progressIntervalMs: 0,
    });
    const events: DownloadEntry[] = [];
    const stop = manager.api.onChanged((e) => events.push(e));

    const started = await manager.api.start({ url: server.url('/model.gguf'), sha256: sha });
    assert.equal(started.state, 'running');
    assert.equal(started.fileName, 'model.gguf');
    await waitFor(() => events.some((e) => e.id === started.id && e.state !== 'running'));
    const done = events.filter((e) => e.id === started.id).at(-1)!;
    assert.equal(done.state, 'done');
    assert.equal(done.modelId, 'model-1');
    assert.equal(done.sha256, sha);
    assert.deepEqual(added, [join(libDir, 'model.gguf')]);
    assert.ok(events.some((e) => e.id === started.id && e.state === 'running' && e.receivedBytes > 0));

    const missing = await manager.api.start({ url: server.url('/missing.gguf') });
    await waitFor(() => events.some((e) => e.id === missing.id && e.state === 'failed'));
    const failed = (await manager.api.list({})).downloads.find((d) => d.id === missing.id)!;
    assert.equal(failed.error?.code, 'http');

    const slow = await manager.api.start({ url: server.url('/slow.gguf'), fileName: 'slow-copy.gguf' });
    await assert.rejects(manager.api.start({ url: server.url('/slow.gguf'), fileName: 'slow-copy.gguf' }), /already downloading/);
    await waitFor(() => events.some((e) => e.id === slow.id && e.receivedBytes > 0));
    const cancelled = await manager.api.cancel({ downloadId: slow.id });
    assert.equal(cancelled.state, 'cancelled');
    assert.equal(existsSync(partialPath(join(libDir, 'slow-copy.gguf'))), false);

    await assert.rejects(manager.api.start({ url: server.url('/folder/') }), /give fileName/);
    assert.equal((await manager.api.recommended({})).pairs.length, RECOMMENDED_PAIRS.length);
    stop();
    await manager.close();
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), 'timed out waiting');
}
