// HTTP under fire: a seeded, reproducible corpus of raw requests against a real `power serve`
// (methods, paths with dot segments and encoded separators, Host/Origin/Cookie/Authorization of
// every kind, Content-Length lies, chunked garbage, bodies of any shape, slow, truncated and reset
// requests, upgrades), then OpenAI requests generated from the request schemas
// (app/serve/openai/api.ts) and mutated. Every request gets a status or its connection closed, no
// answer carries a file from outside the served folder, no 5xx; the OpenAI bodies are answered
// 200 or 4xx in the OpenAI error shape; the server stays up for HTTP and /ws and its memory stays
// bounded. POWER_FUZZ_SEED, POWER_FUZZ_HTTP_CASES and POWER_FUZZ_OPENAI_CASES run another or a
// longer campaign.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import fc from 'fast-check';
import { WebSocket } from 'ws';

import { K_MAX } from '../../app/contract/profile.js';
import { STRATEGIES } from '../../app/contract/strategies.js';
import { ChatCompletionRequest, CompletionRequest } from '../../app/serve/openai/api.js';
import { http, rawExchange, sseData, type RawExchange, type RawRequest } from '../fixtures/http-client.js';
import { syntheticModels } from '../fixtures/models.js';
import { arbitraryFromZod } from '../fixtures/schema-arbitrary.js';
import { rssOf, startPowerServe, type PowerServe } from '../fixtures/serve.js';

const SEED = Number(process.env.POWER_FUZZ_SEED ?? 20261202);
const HTTP_CASES = Number(process.env.POWER_FUZZ_HTTP_CASES ?? 2500);
const OPENAI_CASES = Number(process.env.POWER_FUZZ_OPENAI_CASES ?? 200);
const MODELS = ['target', 'draft-close', 'hybrid-mtp'] as const;
// what the served folder's neighbour holds: no answer may ever contain it
const SECRET = `SECRET-${SEED}-not-for-the-web`;

let dir = '';
let serve: PowerServe;
let host = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-http-fuzz-'));
  const modelsDir = join(dir, 'models');
  const ui = join(dir, 'ui');
  await mkdir(modelsDir);
  await mkdir(join(ui, 'assets'), { recursive: true });
  const set = await syntheticModels();
  for (const name of MODELS) await symlink(set[`${name}.gguf`], join(modelsDir, `${name}.gguf`));
  await writeFile(join(ui, 'index.html'), '<!doctype html><title>fuzz</title>');
  await writeFile(join(ui, 'assets', 'app.js'), 'console.log(1)');
  // bigger than what the socket buffers hold: a client that leaves mid-file leaves it unsent
  await writeFile(join(ui, 'assets', 'big.js'), Buffer.alloc(8 * 2 ** 20, 0x61));
  await writeFile(join(dir, 'secret.txt'), SECRET);
  // a link inside the served folder that points out of it
  await symlink(join(dir, 'secret.txt'), join(ui, 'assets', 'out.txt'));
  await symlink(dir, join(ui, 'up'));
  serve = await startPowerServe(['--data-dir', join(dir, 'data'), '--models-dir', modelsDir, '--ui-dir', ui]);
  host = new URL(serve.origin).host;
});
after(async () => {
  await serve?.stop('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// raw requests

interface Case {
  request: RawRequest;
  /** what was sent, for the failure message */
  label: string;
}

const PATHS = [
  '/',
  '/index.html',
  '/assets/app.js',
  '/assets/missing.js',
  '/client/route',
  '/v1/models',
  '/v1/chat/completions',
  '/v1/completions',
  '/v1',
  '/v1/',
  '/v1/embeddings',
  '/ws',
  '/ws/',
  '/favicon.ico',
];
const TRAVERSALS = [
  '/../secret.txt',
  '/assets/../../secret.txt',
  '/%2e%2e/secret.txt',
  '/%2e%2e%2fsecret.txt',
  '/..%2fsecret.txt',
  '/assets/..%2f..%2fsecret.txt',
  '/assets%2f..%2f..%2fsecret.txt',
  '/..%5csecret.txt',
  '/..\\secret.txt',
  '/%252e%252e/secret.txt',
  '/.%2e/secret.txt',
  '//secret.txt',
  '/assets/out.txt',
  '/up/secret.txt',
  '/up',
  '/%00',
  '/index.html%00.js',
  '/%',
  '/%E0%A4%A',
  '/%C0%AE%C0%AE/secret.txt',
  '/%u002e%u002e/secret.txt',
  '/assets/./../../secret.txt',
  `/${'../'.repeat(40)}secret.txt`,
  `/${'a/'.repeat(3000)}`,
  `/${'x'.repeat(9000)}`,
  '/assets/app.js/',
  '/index.html/..',
];
const TARGETS = ['http://evil.example/v1/models', 'http://127.0.0.1/v1/models', '*', 'evil', '', '/v1/models#frag', '/?token=%'];

function arbTarget(token: string): fc.Arbitrary<string> {
  const base = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...PATHS) },
    { weight: 4, arbitrary: fc.constantFrom(...TRAVERSALS) },
    { weight: 1, arbitrary: fc.constantFrom(...TARGETS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => `/${s}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((s) => `/${encodeURIComponent(s)}`) },
  );
  const query = fc.constantFrom('', '', '', `?token=${token}`, '?token=wrong', '?token=%', '?a=%ZZ&b', `?token=${token}&token=x`);
  return fc.tuple(base, query).map(([p, q]) => p + q);
}

function arbHeaders(token: string): fc.Arbitrary<[string, string][]> {
  const port = new URL(serve.origin).port;
  const opt = (values: fc.Arbitrary<string>, name: string, weightAbsent = 1): fc.Arbitrary<[string, string][]> =>
    fc.oneof(
      { weight: weightAbsent, arbitrary: fc.constant<[string, string][]>([]) },
      { weight: 3, arbitrary: values.map((v) => [[name, v] as [string, string]]) },
    );
  const junk = fc.string({ maxLength: 30 });
  return fc
    .tuple(
      // Host: first, the server's own names most of the time
      fc.oneof(
        {
          weight: 8,
          arbitrary: fc.constantFrom(host, `localhost:${port}`, `[::1]:${port}`, '127.0.0.1').map((h): [string, string][] => [['Host', h]]),
        },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom('evil.example', 'evil.example:80', '', '[::1', 'localhost.evil.example', '127.0.0.1.nip.io')
            .map((h): [string, string][] => [['Host', h]]),
        },
        { weight: 1, arbitrary: junk.map((h): [string, string][] => [['Host', h]]) },
        {
          weight: 1,
          arbitrary: fc.constant<[string, string][]>([
            ['Host', host],
            ['Host', 'evil.example'],
          ]),
        },
        { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
      ),
      opt(
        fc.oneof(
          { weight: 8, arbitrary: fc.constant(`Bearer ${token}`) },
          {
            weight: 1,
            arbitrary: fc.constantFrom('Bearer wrong', 'Bearer', 'Basic dXNlcjpwdw==', `bearer  ${token}  `, `Bearer ${token}x`),
          },
          { weight: 1, arbitrary: junk },
        ),
        'Authorization',
      ),
      opt(
        fc.oneof(
          fc.constantFrom(
            `power_token=${token}`,
            'power_token=%E0%A4%A',
            'power_token=%',
            `a=b; power_token=${token}`,
            'power_token=',
            '=;;=',
            `power_token=${'x'.repeat(10_000)}`,
            `power_token=wrong; power_token=${token}`,
          ),
          junk,
        ),
        'Cookie',
        3,
      ),
      opt(
        fc.oneof(
          fc.constantFrom(
            serve.origin,
            `http://localhost:${port}`,
            'https://evil.example',
            'null',
            `http://${host}.evil.example`,
            'file://',
          ),
          junk,
        ),
        'Origin',
        4,
      ),
      opt(
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'application/vnd.api+json',
          'text/plain',
          'multipart/form-data; boundary=x',
          '',
        ),
        'Content-Type',
        1,
      ),
      fc.array(
        fc.oneof(
          {
            weight: 12,
            arbitrary: fc.constantFrom<[string, string]>(
              ['Connection', 'close'],
              ['Connection', 'keep-alive'],
              ['Expect', '100-continue'],
              ['Accept-Encoding', 'gzip'],
              ['Upgrade', 'websocket'],
              ['Connection', 'Upgrade'],
              ['Sec-WebSocket-Version', '13'],
              ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
              ['X-Forwarded-For', '1.2.3.4'],
              ['Range', 'bytes=0-3'],
            ),
          },
          { weight: 4, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,20}$/), junk) },
          { weight: 2, arbitrary: fc.tuple(junk, junk) },
          { weight: 1, arbitrary: fc.tuple(fc.constant('X-Big'), fc.constant('y'.repeat(20_000))) },
        ),
        { maxLength: 3 },
      ),
    )
    .map((parts) => parts.flat());
}

const BODIES = fc.oneof(
  fc.constant(''),
  fc.constant('{"model":"target","prompt":"hello","max_tokens":2}'),
  fc.constant('{"model":"target","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}'),
  fc.constant('{"model":'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
  fc.constant('x'.repeat(100_000)),
);

type Framing =
  'none' | 'exact' | 'more' | 'less' | 'nonnumeric' | 'negative' | 'two-lengths' | 'chunked' | 'chunked-garbage' | 'chunked-and-length';
type Delivery = 'whole' | 'slow' | 'truncated-end' | 'truncated-reset' | 'reset';

function framed(head: string, body: string, framing: Framing, garbage: string): string {
  const n = Buffer.byteLength(body, 'latin1');
  switch (framing) {
    case 'none':
      return `${head}\r\n${body}`;
    case 'exact':
      return `${head}Content-Length: ${n}\r\n\r\n${body}`;
    case 'more':
      return `${head}Content-Length: ${n + 1 + (n % 97)}\r\n\r\n${body}`;
    case 'less':
      return `${head}Content-Length: ${n >> 1}\r\n\r\n${body}`;
    case 'nonnumeric':
      return `${head}Content-Length: ${garbage || 'ten'}\r\n\r\n${body}`;
    case 'negative':
      return `${head}Content-Length: -${n}\r\n\r\n${body}`;
    case 'two-lengths':
      return `${head}Content-Length: ${n}\r\nContent-Length: ${n + 3}\r\n\r\n${body}`;
    case 'chunked':
      return `${head}Transfer-Encoding: chunked\r\n\r\n${n ? `${n.toString(16)}\r\n${body}\r\n` : ''}0\r\n\r\n`;
    case 'chunked-garbage':
      return `${head}Transfer-Encoding: chunked\r\n\r\n${garbage}\r\n${body}\r\nzz\r\n`;
    case 'chunked-and-length':
      return `${head}Transfer-Encoding: chunked\r\nContent-Length: ${n}\r\n\r\n${n.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  }
}

function corpus(token: string): Case[] {
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST') },
    {
      weight: 2,
      arbitrary: fc.constantFrom('PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'get', 'BREW', 'M-SEARCH', 'PRI', ''),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const version = fc.oneof(
    { weight: 10, arbitrary: fc.constant('HTTP/1.1') },
    { weight: 1, arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9', 'http/1.1', '') },
  );
  const framing = fc.oneof(
    { weight: 8, arbitrary: fc.constant<Framing>('exact') },
    { weight: 3, arbitrary: fc.constantFrom<Framing>('none', 'chunked') },
    {
      weight: 2,
      arbitrary: fc.constantFrom<Framing>('more', 'less', 'nonnumeric', 'negative', 'two-lengths', 'chunked-garbage', 'chunked-and-length'),
    },
  );
  const delivery = fc.oneof(
    { weight: 8, arbitrary: fc.constant<Delivery>('whole') },
    { weight: 2, arbitrary: fc.constantFrom<Delivery>('slow', 'truncated-end', 'truncated-reset', 'reset') },
  );
  const request = fc.record({
    method,
    target: arbTarget(token),
    version,
    headers: arbHeaders(token),
    body: BODIES,
    framing,
    delivery,
    garbage: fc.string({ maxLength: 12 }),
    cut: fc.double({ min: 0, max: 1, noNaN: true }),
    pieces: fc.integer({ min: 2, max: 5 }),
  });
  const garbageOnly = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
    fc.constant('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    fc.constant('\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03'),
  );
  const arb = fc.oneof(
    {
      weight: 20,
      arbitrary: request.map((r): Case => {
        const head = `${r.method} ${r.target} ${r.version}\r\n${r.headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}`;
        const bytes = framed(head, r.body, r.framing, r.garbage);
        // a request that announces more than it sends is only ever cut off: waiting would be a stall
        let delivery = r.delivery;
        if (r.framing === 'more' && delivery === 'whole') delivery = 'truncated-end';
        const label = `${r.method} ${r.target.slice(0, 80)} [${r.framing}, ${delivery}] ${JSON.stringify(r.headers.map(([k, v]) => `${k}: ${v.slice(0, 40)}`))}`;
        const isHead = r.method === 'HEAD';
        switch (delivery) {
          case 'whole':
            return { request: { pieces: [Buffer.from(bytes, 'latin1')], head: isHead }, label };
          case 'slow': {
            const all = Buffer.from(bytes, 'latin1');
            const size = Math.ceil(all.length / r.pieces);
            const pieces = Array.from({ length: r.pieces }, (_, i) => all.subarray(i * size, (i + 1) * size)).filter((p) => p.length > 0);
            return { request: { pieces, delayMs: 15, head: isHead }, label };
          }
          case 'truncated-end':
          case 'truncated-reset': {
            const all = Buffer.from(bytes, 'latin1');
            return {
              request: {
                pieces: [all.subarray(0, Math.floor(all.length * r.cut))],
                after: delivery === 'truncated-end' ? 'end' : 'reset',
                head: isHead,
              },
              label,
            };
          }
          case 'reset':
            return { request: { pieces: [Buffer.from(bytes, 'latin1')], after: 'reset', head: isHead }, label };
        }
      }),
    },
    {
      weight: 1,
      arbitrary: garbageOnly.map((g): Case => ({
        request: { pieces: [Buffer.from(g, 'latin1')], after: 'end' },
        label: `garbage ${JSON.stringify(g.slice(0, 60))}`,
      })),
    },
  );
  return fc.sample(arb, { seed: SEED, numRuns: HTTP_CASES });
}

// ---------------------------------------------------------------------------------------------
// OpenAI bodies from the request schemas

const small = (s: string) => s.slice(0, 60);
function openAiCorpus(): { path: string; text: string; valid: boolean }[] {
  const overrides = {
    model: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...MODELS) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
    ),
    draft: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...MODELS) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
    ),
    profile: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('balanced', 'peak', 'autoregressive') },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
    ),
    strategy: fc.constantFrom(...STRATEGIES),
    // valid requests stay short: they finish in a few rounds
    max_tokens: fc.option(fc.integer({ min: 1, max: 6 })),
    max_completion_tokens: fc.option(fc.integer({ min: 1, max: 6 })),
    k: fc.integer({ min: 1, max: K_MAX }),
    s: fc.integer({ min: 0, max: K_MAX }),
  };
  const chat = arbitraryFromZod(ChatCompletionRequest, { overrides });
  const text = arbitraryFromZod(CompletionRequest, { overrides });
  const valid = fc.oneof(
    chat.map((b) => ({ path: '/v1/chat/completions', body: b })),
    text.map((b) => ({ path: '/v1/completions', body: b })),
  );
  // a mutation: a field set to any value, dropped or added, the whole body replaced, the text cut
  const mutation = fc.oneof(
    fc.record({
      kind: fc.constant('set' as const),
      key: fc.oneof(
        fc.constantFrom(
          'model',
          'messages',
          'prompt',
          'max_tokens',
          'temperature',
          'top_p',
          'seed',
          'stop',
          'stream',
          'stream_options',
          'n',
          'k',
          's',
          'strategy',
          'draft',
          'profile',
          'logprobs',
          'tools',
          'echo',
        ),
        fc.string({ maxLength: 8 }),
      ),
      value: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(-1, 0, 1.5, 2 ** 53, -(2 ** 31), 1e308, '', 'x'.repeat(5000), [], {}, null, true, '\ud800'),
      ),
    }),
    fc.record({ kind: fc.constant('drop' as const), key: fc.constantFrom('model', 'messages', 'prompt') }),
    fc.record({ kind: fc.constant('replace' as const), value: fc.jsonValue({ maxDepth: 3 }) }),
    fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
    fc.record({
      kind: fc.constant('duplicate' as const),
      key: fc.constantFrom('model', 'max_tokens', 'stream'),
      value: fc.jsonValue({ maxDepth: 1 }),
    }),
    fc.record({ kind: fc.constant('surrogate' as const) }),
  );
  // Power's own fields, each optional, together make most requests unservable (a strategy the
  // model lacks, a draft that does not fit): half the requests leave them out
  const POWER_FIELDS = ['strategy', 'draft', 'k', 's', 'profile'];
  const arb = fc.tuple(valid, fc.option(mutation, { freq: 2 }), fc.boolean()).map(([{ path, body }, m, plain]) => {
    const b = structuredClone(body) as Record<string, unknown>;
    if (plain) for (const key of POWER_FIELDS) delete b[key];
    if (!m) return { path, text: JSON.stringify(b), valid: true };
    switch (m.kind) {
      case 'set': {
        b[m.key] = m.value;
        // a mutated length that is valid stays small too
        for (const key of ['max_tokens', 'max_completion_tokens']) if (typeof b[key] === 'number' && (b[key] as number) > 6) b[key] = 6;
        return { path, text: JSON.stringify(b), valid: false };
      }
      case 'drop':
        delete b[m.key];
        return { path, text: JSON.stringify(b), valid: false };
      case 'replace':
        return { path, text: JSON.stringify(m.value), valid: false };
      case 'cut': {
        const t = JSON.stringify(b);
        return { path, text: t.slice(0, Math.floor(t.length * m.at)), valid: false };
      }
      case 'duplicate': {
        // JSON.parse keeps the last of two equal keys: the check must see that one
        const t = JSON.stringify(b);
        return { path, text: `${t.slice(0, -1)},${JSON.stringify(m.key)}:${JSON.stringify(m.value)}}`, valid: false };
      }
      case 'surrogate':
        return { path, text: JSON.stringify(b).replace(/"model":"/, '"model":"\\ud800'), valid: false };
    }
  });
  return fc.sample(arb, { seed: SEED + 1, numRuns: OPENAI_CASES });
}

// ---------------------------------------------------------------------------------------------

describe('HTTP fuzzing against power serve', () => {
  test(`${HTTP_CASES} seeded raw requests (seed ${SEED}): each gets a status or a closed connection, none a 5xx or a file from outside`, async () => {
    const rssBefore = rssOf(serve.child.pid!);
    // two stalled requests run alongside: a refused one, and an authorised one whose body stops
    const stalledRefused = rawExchange(serve.origin, {
      pieces: [`POST /v1/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100\r\n\r\n{"model"`],
      timeoutMs: 20_000,
    });
    const stalledBody = rawExchange(serve.origin, {
      pieces: [
        `POST /v1/completions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${serve.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model"`,
      ],
      timeoutMs: 75_000,
    });
    const statuses = new Map<string, number>();
    const slowest = { ms: 0, label: '' };
    for (const [i, c] of corpus(serve.token).entries()) {
      const r: RawExchange = await rawExchange(serve.origin, { timeoutMs: 15_000, ...c.request });
      const key = r.status === null ? r.end : String(r.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (r.ms > slowest.ms) Object.assign(slowest, { ms: r.ms, label: c.label });
      if (c.request.after !== 'reset') assert.notEqual(r.end, 'timeout', `case ${i}: neither an answer nor a close in 15 s: ${c.label}`);
      assert.ok(!r.raw.includes(SECRET), `case ${i}: a file from outside the served folder: ${c.label}`);
      assert.ok(r.status === null || r.status < 500, `case ${i}: ${r.status}: ${c.label}\n${r.raw.slice(0, 500)}`);
      if (i % 100 === 99) await assertServing(`after case ${i}`);
    }
    const refused = await stalledRefused;
    assert.equal(refused.status, 401, 'a refused request is answered without waiting for its body');
    assert.equal(refused.end, 'answered');
    const stalled = await stalledBody;
    assert.equal(
      stalled.status,
      408,
      `an authorised request whose body stops is answered 408 (${stalled.end}, ${stalled.raw.slice(0, 200)})`,
    );

    await assertServing('at the end');
    await assertWs();
    const rssAfter = rssOf(serve.child.pid!);
    const counts = [...statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
    console.log(
      `http fuzz: ${HTTP_CASES} requests (seed ${SEED}) → ${counts}; slowest ${slowest.ms} ms (${slowest.label.slice(0, 100)}); rss ${mb(rssBefore)} → ${mb(rssAfter)} MB`,
    );
    assert.ok(rssAfter < rssBefore + 200 * 2 ** 20, `memory stays bounded (${mb(rssBefore)} → ${mb(rssAfter)} MB)`);
    assert.doesNotMatch(serve.stderr(), /Uncaught|TypeError|RangeError|ReferenceError/, 'no unexpected error in the log');
  });

  test(`${OPENAI_CASES} OpenAI bodies from the request schemas, mutated (seed ${SEED + 1}): 200 or a 4xx in the OpenAI error shape`, async () => {
    const statuses = new Map<string, number>();
    let validAnswered = 0;
    let valid = 0;
    for (const [i, c] of openAiCorpus().entries()) {
      if (c.valid) valid++;
      const r = await http(serve.origin, c.path, {
        method: 'POST',
        headers: { ...serve.auth, 'Content-Type': 'application/json' },
        body: c.text,
      });
      const label = `case ${i} ${c.path} ${small(c.text)}…`;
      statuses.set(String(r.status), (statuses.get(String(r.status)) ?? 0) + 1);
      assert.ok(r.status === 200 || (r.status >= 400 && r.status < 500), `${label}: ${r.status} ${r.body.slice(0, 300)}`);
      if (r.status !== 200) {
        const e = JSON.parse(r.body) as { error?: { message?: unknown; type?: unknown } };
        assert.equal(typeof e.error?.message, 'string', `${label}: the OpenAI error shape: ${r.body.slice(0, 300)}`);
        assert.equal(typeof e.error?.type, 'string', `${label}: the OpenAI error shape`);
        continue;
      }
      if (c.valid) validAnswered++;
      if (r.headers['content-type']?.toString().startsWith('text/event-stream')) {
        const events = sseData(r.body);
        const last = events.at(-1)!;
        if (last === '[DONE]') continue;
        // a stream whose request is refused after its first chunk ends with the error as its last event
        const e = (JSON.parse(last) as { error?: { message?: unknown; type?: unknown; code?: unknown } }).error;
        assert.equal(typeof e?.message, 'string', `${label}: the stream ends with [DONE] or an error: ${last.slice(0, 300)}`);
        assert.ok(
          !['internal', 'engine-crashed', 'cancelled'].includes(String(e?.code)),
          `${label}: a server-side error in the stream: ${last.slice(0, 300)}`,
        );
      } else {
        const body = JSON.parse(r.body) as { choices?: unknown[] };
        assert.equal(body.choices?.length, 1, `${label}: one choice`);
      }
    }
    await assertServing('after the OpenAI bodies');
    await assertWs();
    const counts = [...statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
    console.log(`openai fuzz: ${OPENAI_CASES} bodies (${valid} schema-valid, ${validAnswered} of them answered 200) → ${counts}`);
    assert.ok(validAnswered > 0, 'some schema-valid requests were answered');
  });
});

test('clients that leave in the middle of a static file leave no open file behind', async () => {
  const fds = () => readdirSync(`/proc/${serve.child.pid}/fd`).length;
  // one whole answer first: the first file read opens descriptors of its own for good (libuv's io_uring)
  assert.equal((await http(serve.origin, '/assets/big.js', { headers: serve.auth })).status, 200);
  const before = fds();
  for (let i = 0; i < 20; i++) {
    const r = await rawExchange(serve.origin, {
      pieces: [`GET /assets/big.js HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${serve.token}\r\n\r\n`],
      leaveAfterHead: true,
    });
    // the head and a first part of the body came; the client is gone before the rest
    assert.equal(r.status, 200);
  }
  await assertServing('after the aborted downloads');
  // closing is asynchronous: give the streams a moment to see their sockets gone
  const until = Date.now() + 5000;
  while (fds() > before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(fds(), before, 'every file the server opened for them is closed');
});

async function assertServing(when: string): Promise<void> {
  const r = await http(serve.origin, '/v1/models', { headers: serve.auth }).catch((e: Error) => ({ status: 0, body: e.message }));
  assert.equal(r.status, 200, `the server answers ${when} (${r.body.slice(0, 200)})\n${serve.stderr().slice(-2000)}`);
}

async function assertWs(): Promise<void> {
  const ws = new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth });
  const answer = new Promise<unknown>((resolve, reject) => {
    ws.on('message', (data) => resolve(JSON.parse(data.toString())));
    ws.on('error', reject);
  });
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  ws.send(JSON.stringify({ id: 1, concern: 'profiles', method: 'list', input: {} }));
  const got = (await answer) as { id?: number; result?: unknown };
  ws.close();
  assert.equal(got.id, 1);
  assert.ok(got.result, '/ws answers');
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
