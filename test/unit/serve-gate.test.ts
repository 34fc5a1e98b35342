// The gate and the page of power serve's HTTP server, without a model: token (header, cookie,
// query → cookie), Origin and Host refusals, body limits and malformed JSON on the OpenAI
// endpoints, the WebSocket handshake, and static files served safely.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { WebSocket } from 'ws';
import { z } from 'zod';

import { concern } from '../../app/contract/api/describe.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { MAX_BODY_BYTES } from '../../app/serve/http-util.js';
import type { CompletionBackend } from '../../app/serve/openai/backend.js';
import { startServer, type RunningServer } from '../../app/serve/server.js';
import { CONTENT_SECURITY_POLICY } from '../../app/page-headers.js';
import { http, statusForDeclaredBody } from '../fixtures/http-client.js';

const TOKEN = 'test-token-123';
const description = {
  echo: concern({ methods: { say: { input: z.object({ text: z.string() }), output: z.object({ text: z.string() }) } }, events: {} }),
};
const api = { echo: { say: async ({ text }: { text: string }) => ({ text }) } };
// the gate answers before a completion runs: a call here is a failure of the gate
const completions: CompletionBackend = {
  models: async () => [{ name: 'tiny', created: 1, problem: null }],
  complete: () => {
    throw new Error('the gate let a refused request through');
  },
  metrics: () => '# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 0\n',
};

let dir = '';
let server: RunningServer;
let bare: RunningServer;
const auth = { Authorization: `Bearer ${TOKEN}` };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-serve-gate-'));
  const site = join(dir, 'site');
  await mkdir(join(site, 'assets'), { recursive: true });
  await writeFile(join(site, 'index.html'), '<!doctype html><title>app</title>');
  await writeFile(join(site, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(join(site, 'assets', 'app.css'), 'body{}');
  await writeFile(join(dir, 'secret.txt'), 'SECRET');
  await symlink(join(dir, 'secret.txt'), join(site, 'assets', 'link.txt'));
  server = await startServer({ host: '127.0.0.1', port: 0, token: TOKEN, description, api, completions, staticDir: site });
  bare = await startServer({ host: '127.0.0.1', port: 0, token: TOKEN, description, api, completions, staticDir: null });
});
after(async () => {
  await server.close();
  await bare.close();
  await rm(dir, { recursive: true, force: true });
});

describe('token', () => {
  test('every route refuses a request without the token or with a wrong one (401, OpenAI error shape)', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/assets/app.js'],
      ['GET', '/v1/models'],
      ['POST', '/v1/chat/completions'],
      ['POST', '/v1/completions'],
      ['GET', '/metrics'],
      ['GET', '/health'],
    ] as const) {
      const none = await http(server.origin, path, { method });
      assert.equal(none.status, 401, `${method} ${path}`);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="power"');
      assert.equal((JSON.parse(none.body) as { error: { type: string } }).error.type, 'authentication_error');
      assert.equal((await http(server.origin, path, { method, headers: { Authorization: 'Bearer nope' } })).status, 401);
      assert.equal((await http(server.origin, `${path}?token=nope`, { method })).status, 401);
    }
  });

  test('with the token: /health answers ok, /metrics is Prometheus text; other methods are refused', async () => {
    for (const path of ['/health', '/v1/health']) {
      const r = await http(server.origin, path, { headers: auth });
      assert.equal(r.status, 200);
      assert.deepEqual(JSON.parse(r.body), { status: 'ok' });
    }
    const m = await http(server.origin, '/metrics', { headers: auth });
    assert.equal(m.status, 200);
    assert.equal(m.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(m.body, /^llamacpp:prompt_tokens_total 0$/m);
    assert.equal((await http(server.origin, '/metrics', { method: 'POST', headers: auth })).status, 405);
  });

  test('Authorization: Bearer opens the API', async () => {
    const r = await http(server.origin, '/v1/models', { headers: auth });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { object: 'list', data: [{ id: 'tiny', object: 'model', created: 1, owned_by: 'power' }] });
  });

  test('the token in the page URL becomes an HttpOnly SameSite=Strict cookie and leaves the address bar', async () => {
    const r = await http(server.origin, `/?token=${TOKEN}&x=1`);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/?x=1');
    const cookie = (r.headers['set-cookie'] as string[])[0]!;
    assert.match(cookie, /^power_token=test-token-123; HttpOnly; SameSite=Strict; Path=\/$/);
    const page = await http(server.origin, '/', { headers: { Cookie: cookie.split(';')[0]! } });
    assert.equal(page.status, 200);
    assert.equal(page.body, '<!doctype html><title>app</title>');
  });
});

describe('origin and host', () => {
  test('a request from another origin is refused with 403 even with the token', async () => {
    const r = await http(server.origin, '/v1/models', { headers: { ...auth, Origin: 'https://evil.example' } });
    assert.equal(r.status, 403);
    assert.match(r.body, /origin https:\/\/evil\.example are not allowed/);
    const post = await http(server.origin, '/v1/chat/completions', {
      method: 'POST',
      headers: { ...auth, Origin: 'http://localhost:1', 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(post.status, 403);
  });

  test("the server's own origin (any loopback name) passes", async () => {
    for (const name of ['127.0.0.1', 'localhost']) {
      const r = await http(server.origin, '/v1/models', { headers: { ...auth, Origin: `http://${name}:${server.port}` } });
      assert.equal(r.status, 200, name);
    }
  });

  test('a Host that is not a loopback name (DNS rebinding) is refused', async () => {
    const r = await http(server.origin, '/v1/models', { headers: { ...auth, Host: `evil.example:${server.port}` } });
    assert.equal(r.status, 403);
    assert.match(r.body, /unexpected Host/);
  });
});

describe('OpenAI request checks', () => {
  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    http(server.origin, path, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json', ...headers }, body });

  test('a body over the limit gets 413, whether its Content-Length says so or it is sent in chunks', async () => {
    const declared = { ...auth, 'Content-Type': 'application/json' };
    assert.equal(await statusForDeclaredBody(server.origin, '/v1/chat/completions', declared, MAX_BODY_BYTES + 1), 413);
    // chunked: counted as it arrives (the server may close while the rest is still being sent)
    const r = await post('/v1/chat/completions', Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), { 'Transfer-Encoding': 'chunked' });
    assert.equal(r.status, 413);
    assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, /over the limit/);
  });

  test('malformed JSON gets 400 in the OpenAI error shape', async () => {
    const r = await post('/v1/chat/completions', '{"model": "tiny", "messages": [');
    assert.equal(r.status, 400);
    const e = JSON.parse(r.body) as { error: { message: string; type: string; param: null; code: null } };
    assert.equal(e.error.type, 'invalid_request_error');
    assert.match(e.error.message, /^the body is not valid JSON/);
  });

  test('fields that do not fit get 400 with the field named; what cannot be honoured is refused', async () => {
    const cases: [object, RegExp][] = [
      [{ model: 'tiny' }, /messages/],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], n: 2 }, /n must be 1/],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], temperature: -1 }, /temperature/],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], strategy: 'magic' }, /strategy/],
      [{ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], k: 99 }, /^k: /],
    ];
    for (const [body, message] of cases) {
      const r = await post('/v1/chat/completions', JSON.stringify(body));
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, message);
    }
    assert.equal((await post('/v1/completions', JSON.stringify({ model: 'tiny', prompt: ['a', 'b'] }))).status, 400);
    assert.equal((await post('/v1/chat/completions', 'x=1', { 'Content-Type': 'application/x-www-form-urlencoded' })).status, 415);
  });

  test('unknown endpoints and wrong methods', async () => {
    assert.equal((await http(server.origin, '/v1/embeddings', { method: 'POST', headers: auth })).status, 404);
    assert.equal((await http(server.origin, '/v1/chat/completions', { headers: auth })).status, 405);
    assert.equal((await http(server.origin, '/v1/models', { method: 'DELETE', headers: auth })).status, 405);
  });
});

describe('WebSocket handshake', () => {
  const handshake = (headers: Record<string, string>, path = '/ws') =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { headers });
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => {});
    });

  test('needs the token and the own origin', async () => {
    assert.equal(await handshake({}), 401);
    assert.equal(await handshake({ Authorization: 'Bearer nope' }), 401);
    assert.equal(await handshake({ ...auth, Origin: 'https://evil.example' }), 403);
    assert.equal(await handshake({ Cookie: `power_token=${TOKEN}`, Origin: `http://127.0.0.1:${server.port}` }), 101);
    assert.equal(await handshake(auth, '/elsewhere'), 404);
  });

  test('carries the described API', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${TOKEN}`);
    const client = createApiClient(description, ws);
    assert.deepEqual(await client.api.echo.say({ text: 'hi' }), { text: 'hi' });
    client.close();
  });
});

describe('static files', () => {
  const get = (path: string, method = 'GET') => http(server.origin, path, { method, headers: auth });

  test('files get their content type, a CSP and nosniff', async () => {
    const js = await get('/assets/app.js');
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    assert.equal((await get('/assets/app.css')).headers['content-type'], 'text/css; charset=utf-8');
    const page = await get('/');
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
  });

  test('nothing outside the folder is reachable: dot segments, encoded separators, symlinks', async () => {
    for (const path of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/..%5csecret.txt',
      '/assets/link.txt',
      '/%00',
    ]) {
      const r = await get(path);
      assert.notEqual(r.status, 200, path);
      assert.doesNotMatch(r.body, /SECRET/, path);
    }
    assert.equal((await get('/assets/link.txt')).status, 403);
  });

  test('client-side routes get index.html; a missing asset is 404; only GET and HEAD', async () => {
    assert.equal((await get('/chats/abc')).body, '<!doctype html><title>app</title>');
    assert.equal((await get('/assets/missing.js')).status, 404);
    assert.equal((await get('/', 'POST')).status, 405);
    const head = await get('/assets/app.js', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  test('without a built renderer, a placeholder page says what runs', async () => {
    const r = await http(bare.origin, '/', { headers: auth });
    assert.equal(r.status, 200);
    assert.match(r.body, /Power is running/);
    assert.equal(r.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    assert.equal((await http(bare.origin, '/app.js', { headers: auth })).status, 404);
  });
});
