// power serve's refusals before it listens: one `error:` line, exit code 2, nothing on stdout.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { power } from '../fixtures/cli.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-serve-cli-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function refused(args: string[], message: RegExp): void {
  const r = power(['serve', '--data-dir', join(dir, 'data'), ...args]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
}

test('bad flags and values', () => {
  refused(['--port', '70000'], /^error: --port must be an integer from 0 to 65535/);
  refused(['--token', 'short'], /^error: --token must be 8 to 256 URL-safe characters/);
  refused(['--token', 'has spaces in it'], /^error: --token must be/);
  refused(['--models-dir', join(dir, 'nope')], /^error: --models-dir .*nope does not exist/);
  refused(['--ui-dir', dir], /^error: --ui-dir .* has no index\.html/);
  refused(['--what'], /^error: unknown option '--what'/);
});

test('a port in use', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    refused(['--port', String(port)], new RegExp(`^error: port ${port} on 127\\.0\\.0\\.1 is in use \\(--port 0 picks a free one\\)`));
  } finally {
    blocker.close();
  }
});
