// `power serve` end to end: a real server process over the real engine host and the synthetic
// models. The OpenAI endpoints (whole and streamed, same tokens as `power generate`, exact under
// speculation), refusals, the /ws transport with generation events, a hostile file in
// --models-dir, SIGKILL of the engine host mid-reply, and the clean SIGINT stop.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { WebSocket } from 'ws';

import type { DownloadEntry } from '../../app/contract/api/downloads.js';
import { streamedTokens, type StreamedToken } from '../fixtures/service.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { powerApi } from '../../app/contract/api/index.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { http, sseData, statusForDeclaredBody } from '../fixtures/http-client.js';
import { startFileServer } from '../fixtures/file-server.js';
import { pngImage } from '../fixtures/images.js';
import { makeBadFiles, syntheticModels } from '../fixtures/models.js';
import { childPids, startPowerServe, type PowerServe } from '../fixtures/serve.js';

let dir = '';
let modelsDir = '';
let dataDir = '';
let serve: PowerServe;

interface Completion {
  choices: { message?: { role: string; content: string }; text?: string; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  power: {
    strategy: string;
    fallbacks?: string[];
    frVocab?: number;
    pMin?: number;
    adaptiveK?: boolean;
    members?: { strategy: string; rounds: number; proposed: number; accepted: number }[];
    k: number | null;
    s: number | null;
    digest: string;
    stats: Record<string, unknown>;
  };
  model: string;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'power-serve-'));
  modelsDir = join(dir, 'models');
  dataDir = join(dir, 'data');
  await mkdir(modelsDir);
  const set = await syntheticModels();
  for (const name of [
    'target.gguf',
    'draft-close.gguf',
    'hybrid-mtp.gguf',
    'gemma4-target.gguf',
    'gemma4-assistant.gguf',
    'swa-target.gguf',
    'swa-draft-close.gguf',
  ] as const) {
    await symlink(set[name], join(modelsDir, name));
  }
  // swa-target's projector, beside it under the name llama.cpp's releases use
  await symlink(set['swa-target.gguf'].replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf'), join(modelsDir, 'mmproj-swa-target.gguf'));
  const bad = await makeBadFiles(join(dir, 'bad'));
  // a text file named .gguf, and a well-formed GGUF that makes llama.cpp abort when it loads
  await symlink(bad.notGguf, join(modelsDir, 'not-a-model.gguf'));
  await symlink(bad.duplicateTokens, join(modelsDir, 'duplicate-tokens.gguf'));
  serve = await startPowerServe(['--data-dir', dataDir, '--models-dir', modelsDir]);
});
after(async () => {
  await serve?.stop('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const post = (path: string, body: object, headers: Record<string, string> = {}) =>
  http(serve.origin, path, {
    method: 'POST',
    headers: { ...serve.auth, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function completion(path: string, body: object): Promise<Completion> {
  const r = await post(path, body);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as Completion;
}

describe('power serve', () => {
  test('prints the ready line, skips the hostile file with its reason, lists the usable models', async () => {
    assert.match(serve.stdout(), /^Power is ready at http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}\n$/);
    assert.match(serve.stderr(), /skipped .*not-a-model\.gguf: .*not a GGUF file/);
    const r = await http(serve.origin, '/v1/models', { headers: serve.auth });
    const ids = (JSON.parse(r.body) as { data: { id: string }[] }).data.map((m) => m.id).sort();
    assert.deepEqual(ids, [
      'draft-close',
      'duplicate-tokens',
      'gemma4-assistant',
      'gemma4-target',
      'hybrid-mtp',
      'swa-draft-close',
      'swa-target',
      'target',
    ]);
  });

  test('refuses without the token (401), from another origin (403), an oversized body (413), malformed JSON (400)', async () => {
    assert.equal((await http(serve.origin, '/v1/models')).status, 401);
    assert.equal((await http(serve.origin, '/', {})).status, 401);
    assert.equal((await http(serve.origin, '/v1/models', { headers: { ...serve.auth, Origin: 'https://evil.example' } })).status, 403);
    assert.equal(
      await statusForDeclaredBody(serve.origin, '/v1/completions', { ...serve.auth, 'Content-Type': 'application/json' }, 9 * 1024 * 1024),
      413,
    );
    const bad = await http(serve.origin, '/v1/completions', {
      method: 'POST',
      headers: { ...serve.auth, 'Content-Type': 'application/json' },
      body: '{"model":',
    });
    assert.equal(bad.status, 400);
  });

  test('chat completion: OpenAI shape, the tokens `power generate` emits for the same prompt, power evidence', async () => {
    const r = await completion('/v1/chat/completions', {
      model: 'target',
      messages: [{ role: 'user', content: 'hello world' }],
      max_tokens: 12,
    });
    assert.equal(r.model, 'target');
    assert.equal(r.choices[0]!.message!.role, 'assistant');
    assert.equal(r.choices[0]!.finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 12);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 12);
    assert.equal(r.power.strategy, 'none');
    assert.deepEqual(Object.keys(r.power.stats).slice(0, 3), ['promptTokens', 'ttftMs', 'prefillTokensPerSecond']);
    const models = await syntheticModels();
    const cli = jsonOf<{ text: string; digest: string }>(
      power(['generate', '--model', models['target.gguf'], '--prompt', 'hello world', '--max-tokens', '12', '--json']),
    );
    assert.equal(r.power.digest, cli.digest);
    assert.equal(r.choices[0]!.message!.content, cli.text);
  });

  test('streaming: server-sent events whose deltas add up to the whole answer, ending with data: [DONE]', async () => {
    const body = { model: 'target', messages: [{ role: 'user', content: 'hello world' }], max_tokens: 12 };
    const whole = await completion('/v1/chat/completions', body);
    const r = await post('/v1/chat/completions', { ...body, stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/event-stream; charset=utf-8');
    const events = sseData(r.body);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map(
      (e) =>
        JSON.parse(e) as {
          choices: { delta: { content?: string; role?: string }; finish_reason: string | null }[];
          power?: Completion['power'];
          usage?: Completion['usage'];
        },
    );
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, whole.choices[0]!.message!.content);
    const last = [...chunks].reverse().find((c) => c.choices[0]?.finish_reason);
    assert.equal(last!.choices[0]!.finish_reason, 'length');
    assert.equal(last!.power!.digest, whole.power.digest);
    assert.deepEqual(chunks.at(-1)!.usage, whole.usage);
    // each text chunk is one batch of rounds and says how far the reply has come
    const progress = chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.power as unknown as { tokens: number; rounds: number });
    assert.ok(progress.length >= 1 && progress.length <= 12, `${progress.length} text chunks for 12 tokens`);
    assert.ok(
      progress.every(
        (p, i) => p.tokens >= 1 && p.rounds >= 1 && (i === 0 || (p.tokens > progress[i - 1]!.tokens && p.rounds > progress[i - 1]!.rounds)),
      ),
      JSON.stringify(progress),
    );
    assert.equal(progress.at(-1)!.tokens, 12);
  });

  test('raw completions under speculation emit exactly the autoregressive tokens; strategy, K and S are reported', async () => {
    // long enough that prompt lookup finds the reply's tokens earlier and drafts (16 tokens never do)
    const ar = await completion('/v1/completions', { model: 'hybrid-mtp', prompt: 'the cat sat on the mat and the cat', max_tokens: 64 });
    const spec = await completion('/v1/completions', {
      model: 'hybrid-mtp',
      prompt: 'the cat sat on the mat and the cat',
      max_tokens: 64,
      strategy: 'ngram',
      k: 3,
      s: 2,
    });
    assert.deepEqual([spec.power.strategy, spec.power.k, spec.power.s], ['ngram', 3, 2]);
    assertDraftedSameAsControl(spec, ar, { label: 'hybrid-mtp ngram K3/S2' });
    assert.equal(spec.choices[0]!.text, ar.choices[0]!.text);
    const draft = await completion('/v1/completions', {
      model: 'target',
      prompt: 'one two three',
      max_tokens: 12,
      draft: 'draft-close',
      k: 4,
    });
    const plain = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 12, strategy: 'none' });
    assert.deepEqual([draft.power.strategy, draft.power.k, draft.power.s], ['draft-model', 4, null]);
    assertDraftedSameAsControl(draft, plain, { label: 'target draft-model(draft-close) K4', accepted: true });
  });

  test('a chain with FR, p-min and adaptive K past 256 positions emits the autoregressive tokens, greedy and seeded, and says how it drafted', async () => {
    const prompt = 'the cat sat on the mat and the cat sat on the mat and the cat';
    for (const sampling of [{}, { temperature: 0.8, seed: 11 }]) {
      const ask = { model: 'hybrid-mtp', prompt, max_tokens: 300, ...sampling };
      const ar = await completion('/v1/completions', { ...ask, strategy: 'none' });
      const chain = await completion('/v1/completions', {
        ...ask,
        strategy: 'ngram-mod,mtp',
        k: 5,
        s: 4,
        fr_vocab: 400,
        p_min: 0.2,
        adaptive_k: true,
      });
      assert.equal(chain.usage.completion_tokens, 300, 'the reply crosses 256 positions');
      assert.equal(chain.power.digest, ar.power.digest, JSON.stringify(sampling));
      assert.deepEqual(
        [chain.power.strategy, chain.power.fallbacks, chain.power.frVocab, chain.power.pMin, chain.power.adaptiveK, chain.power.k],
        ['ngram-mod', ['mtp'], 400, 0.2, true, 5],
      );
      assert.ok((chain.power.stats.proposed as number) > 0, 'the chain drafted');
      // each member's rounds, in the chain's order, adding up to the reply's
      const members = chain.power.members!;
      assert.deepEqual(
        members.map((m) => m.strategy),
        ['ngram-mod', 'mtp'],
      );
      assert.equal(
        members.reduce((n, m) => n + m.proposed, 0),
        chain.power.stats.proposed,
      );
      assert.equal(
        members.reduce((n, m) => n + m.accepted, 0),
        chain.power.stats.accepted,
      );
    }
    // each bad chain or policy is refused with the reason, before anything loads
    const refused = async (body: object, reason: RegExp) => {
      const r = await post('/v1/completions', { model: 'hybrid-mtp', prompt, max_tokens: 4, ...body });
      assert.equal(r.status, 400, r.body);
      assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, reason);
    };
    await refused({ strategy: 'ngram,ngram' }, /'ngram' appears twice/);
    await refused({ strategy: 'none,mtp' }, /'none' cannot be part of a strategy list/);
    await refused({ strategy: 'ngram', fr_vocab: 400 }, /applies to strategy 'mtp' only, not 'ngram'/);
    await refused({ strategy: 'mtp', p_min: 1.5 }, /p_min/);
  });

  test('a draft named without a strategy drafts as what it is: a Gemma 4 assistant is mtp, exact greedy and seeded', async () => {
    for (const sampling of [{}, { temperature: 0.8, seed: 5 }]) {
      const ask = { model: 'gemma4-target', prompt: 'one two three one two three', max_tokens: 40, ...sampling };
      const ar = await completion('/v1/completions', { ...ask, strategy: 'none' });
      const assisted = await completion('/v1/completions', { ...ask, draft: 'gemma4-assistant', k: 3 });
      assert.deepEqual([assisted.power.strategy, assisted.power.k], ['mtp', 3]);
      assert.equal(assisted.power.digest, ar.power.digest, JSON.stringify(sampling));
      assert.ok((assisted.power.stats.proposed as number) > 0, 'the assistant drafted');
    }
  });

  test('a chat with data: images gets a reply through the projector; speculative equals autoregressive; bad images are refused', async () => {
    const url = (seed: number) => `data:image/png;base64,${Buffer.from(pngImage(32, 32, seed)).toString('base64')}`;
    const chat = (content: unknown, extra: object = {}) => ({
      model: 'swa-target',
      messages: [{ role: 'user', content }],
      max_tokens: 40,
      ...extra,
    });
    const pictured = [
      { type: 'text', text: 'Describe it, twice.' },
      { type: 'image_url', image_url: { url: url(1) } },
    ];
    const text = await completion('/v1/chat/completions', chat('Describe it, twice.'));
    for (const sampling of [{}, { temperature: 0.8, seed: 3 }]) {
      const ar = await completion('/v1/chat/completions', chat(pictured, { strategy: 'none', ...sampling }));
      assert.ok(ar.usage.prompt_tokens > text.usage.prompt_tokens, 'the image takes positions in the prompt');
      for (const how of [{ strategy: 'ngram' }, { draft: 'swa-draft-close' }]) {
        const spec = await completion('/v1/chat/completions', chat(pictured, { ...how, k: 4, ...sampling }));
        assert.equal(spec.power.digest, ar.power.digest, `${JSON.stringify(how)} ${JSON.stringify(sampling)}`);
        assert.ok((spec.power.stats.proposed as number) > 0, 'it drafted after the image');
      }
    }
    // another picture, another reply; two pictures in one message are read in order
    const other = await completion('/v1/chat/completions', chat([pictured[0], { type: 'image_url', image_url: { url: url(2) } }]));
    const first = await completion('/v1/chat/completions', chat(pictured));
    assert.notEqual(other.power.digest, first.power.digest);
    const two = await completion('/v1/chat/completions', chat([...pictured, { type: 'image_url', image_url: { url: url(2) } }]));
    assert.ok(two.usage.prompt_tokens > first.usage.prompt_tokens);
    // the stats count the images the projector encoded: the first picture is kept from the
    // request before, only the second is new
    assert.equal(first.power.stats.imagesEncoded, 1, JSON.stringify(first.power.stats));
    assert.equal(two.power.stats.imagesEncoded, 1, JSON.stringify(two.power.stats));
    // a text request after them stays on the session that read the images: the text before
    // the first image is kept, and the reply is the text session's
    const after = await completion('/v1/chat/completions', chat('Describe it, twice.'));
    assert.ok((after.power.stats.reusedPromptTokens as number) > 0, JSON.stringify(after.power.stats));
    assert.equal(after.power.digest, text.power.digest);
    assert.equal(after.power.stats.imagesEncoded, undefined, 'a prompt without images has no such figure');

    const refused = async (body: object, status: number, reason: RegExp) => {
      const r = await post('/v1/chat/completions', body);
      assert.equal(r.status, status, r.body);
      assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, reason);
    };
    await refused(chat([{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }]), 400, /data: URLs only/);
    await refused(chat([{ type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } }]), 400, /image/i);
    await refused({ ...chat(pictured), model: 'target' }, 400, /target reads text only: images need its projector/);
    // the server goes on: the same model answers text after the refusals
    assert.equal((await completion('/v1/chat/completions', chat('Describe it, twice.'))).power.digest, text.power.digest);
  });

  test('logprobs: one entry per token from the target rows, the same under speculation that drafts and accepts (greedy and seeded), streamed too', async () => {
    interface Entry {
      token: string;
      logprob: number;
      bytes: number[];
      top_logprobs: { token: string; logprob: number; bytes: number[] }[];
    }
    type WithLogprobs = Completion & { choices: { logprobs: { content: Entry[] } }[] };
    // long enough that both proposers draft and have drafts accepted, greedy and seeded, on this
    // prompt (5 tokens never drafted): entries of accepted proposals come from verify rows
    const TOKENS = 96;
    const request = {
      model: 'target',
      messages: [{ role: 'user', content: 'one two three four' }],
      max_tokens: TOKENS,
      logprobs: true,
      top_logprobs: 3,
    };
    const ask = (extra: object) => completion('/v1/chat/completions', { ...request, ...extra }) as Promise<WithLogprobs>;
    for (const sampling of [{ temperature: 0 }, { temperature: 0.9, seed: 7 }]) {
      const ar = await ask({ ...sampling, strategy: 'none' });
      const entries = ar.choices[0]!.logprobs.content;
      assert.equal(ar.usage.completion_tokens, TOKENS);
      assert.equal(entries.length, TOKENS, 'one entry per token');
      assert.equal(entries.map((e) => e.token).join(''), ar.choices[0]!.message!.content);
      for (const e of entries) {
        assert.ok(e.logprob <= 0 && Number.isFinite(e.logprob));
        assert.equal(e.top_logprobs.length, 3);
        assert.deepEqual(Buffer.from(e.bytes).toString('utf8'), e.token);
        for (let i = 1; i < 3; i++) assert.ok(e.top_logprobs[i - 1]!.logprob >= e.top_logprobs[i]!.logprob, 'most likely first');
        if (sampling.temperature === 0) assert.deepEqual([e.token, e.logprob], [e.top_logprobs[0]!.token, e.top_logprobs[0]!.logprob]);
        else assert.ok(e.logprob <= e.top_logprobs[0]!.logprob);
      }
      for (const speculative of [
        { strategy: 'ngram', k: 4 },
        { draft: 'draft-close', k: 4 },
      ]) {
        const label = `${JSON.stringify(speculative)} ${JSON.stringify(sampling)}`;
        const spec = await ask({ ...sampling, ...speculative });
        assertDraftedSameAsControl(spec, ar, { label, accepted: true });
        assert.deepEqual(spec.choices[0]!.logprobs, ar.choices[0]!.logprobs, label);
      }
      const streamed = await post('/v1/chat/completions', { ...request, stream: true, ...sampling, strategy: 'ngram', k: 4 });
      const chunks = sseData(streamed.body)
        .slice(0, -1)
        .map((e) => JSON.parse(e) as { choices: { logprobs: { content: Entry[] } | null }[]; power?: Completion['power'] });
      assert.deepEqual(
        chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []),
        entries,
      );
      const last = chunks.at(-1)!;
      assert.ok(last.power, 'the last chunk carries the evidence');
      assertDraftedSameAsControl({ power: last.power }, ar, { label: `streamed ngram ${JSON.stringify(sampling)}`, accepted: true });
    }
    const legacy = (await completion('/v1/completions', {
      model: 'target',
      prompt: 'one two',
      max_tokens: 4,
      logprobs: 2,
    })) as Completion & {
      choices: {
        logprobs: { tokens: string[]; token_logprobs: number[]; top_logprobs: Record<string, number>[]; text_offset: number[] };
      }[];
    };
    const lp = legacy.choices[0]!.logprobs;
    assert.equal(lp.tokens.join(''), legacy.choices[0]!.text);
    assert.equal(lp.token_logprobs.length, 4);
    assert.ok(lp.top_logprobs.every((t) => Object.keys(t).length <= 2));
    assert.deepEqual(lp.text_offset[0], 0);
    const refused = await post('/v1/chat/completions', { model: 'target', messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /top_logprobs needs logprobs: true/);
    const backend = await post('/v1/completions', { model: 'target', prompt: 'x', logprobs: 1, backend_sampling: true });
    assert.equal(backend.status, 400);
    assert.match(backend.body, /log-probabilities are read from rows of logits on the CPU only/);
  });

  test('GET /metrics: Prometheus text under llama-server names that counts what a speculative reply drafted, accepted and saved', async () => {
    /** the exposition format, line by line (a malformed line fails), as name{labels} -> value */
    const scrape = async () => {
      const r = await http(serve.origin, '/metrics', { headers: serve.auth });
      assert.equal(r.status, 200, r.body);
      const values = new Map<string, number>();
      const typed = new Set<string>();
      for (const line of r.body.trimEnd().split('\n')) {
        const type = /^# TYPE ([a-zA-Z_:][\w:]*) (counter|gauge)$/.exec(line);
        if (type) typed.add(type[1]!);
        if (line.startsWith('#')) {
          assert.match(line, /^# (HELP|TYPE) [a-zA-Z_:][\w:]* \S/);
          continue;
        }
        const sample = /^([a-zA-Z_:][\w:]*)(\{[a-z_]+="[^"]*"\})? (-?[\d.e+-]+)$/.exec(line);
        assert.ok(sample, `a sample line: ${line}`);
        assert.ok(typed.has(sample[1]!), `${sample[1]} has its TYPE first`);
        values.set(sample[1]! + (sample[2] ?? ''), Number(sample[3]));
      }
      return values;
    };
    const counter = (values: Map<string, number>, name: string) => values.get(`llamacpp:${name}`) ?? 0;
    const perPosition = (values: Map<string, number>) =>
      [...values]
        .filter(([key]) => key.startsWith('llamacpp:spec_decode_num_accepted_tokens_per_pos_total{'))
        .map(([key, value]) => [Number(/position="(\d+)"/.exec(key)![1]), value] as const);
    // a prompt whose greedy reply repeats itself: prompt lookup drafts and has drafts accepted
    const ask = { model: 'target', prompt: 'one two three', max_tokens: 32 };
    const k = 4;
    const before = await scrape();
    const control = await completion('/v1/completions', { ...ask, strategy: 'none' });
    const between = await scrape();
    const out = await completion('/v1/completions', { ...ask, strategy: 'ngram', k });
    const after = await scrape();
    const delta = (from: Map<string, number>, to: Map<string, number>, name: string) => counter(to, name) - counter(from, name);

    // the control drafts nothing, and every token costs a target pass (the prompt's gives the first)
    for (const name of ['spec_decode_num_drafts_total', 'spec_decode_num_draft_tokens_total', 'spec_decode_num_accepted_tokens_total'])
      assert.equal(delta(before, between, name), 0, `the control adds nothing to ${name}`);
    assert.equal(delta(before, between, 'tokens_predicted_total'), control.usage.completion_tokens);
    assert.equal(delta(before, between, 'n_decode_total'), control.usage.completion_tokens, 'one target pass per token');

    // the speculative reply: the control's tokens, drafted and partly accepted
    const { proposed, accepted } = assertDraftedSameAsControl(out, control, { label: `target ngram K${k}`, accepted: true });
    const drafts = delta(between, after, 'spec_decode_num_drafts_total');
    const drafted = delta(between, after, 'spec_decode_num_draft_tokens_total');
    const passes = delta(between, after, 'n_decode_total');
    assert.ok(drafts > 0, 'the metrics count the verify passes of the drafts');
    assert.deepEqual(
      [drafted, delta(between, after, 'spec_decode_num_accepted_tokens_total'), drafts],
      [proposed, accepted, (out.power.stats as { rounds: number }).rounds],
      "the metrics count the reply's own proposals, acceptances and verify passes",
    );
    assert.ok(drafted <= k * drafts, `at most K proposals per verify pass: ${drafted} in ${drafts}`);
    // every target pass emits its token and the proposals it accepted: the accepted ones are
    // the passes the reply saved over the control's
    assert.equal(delta(between, after, 'tokens_predicted_total'), out.usage.completion_tokens);
    assert.equal(passes + accepted, out.usage.completion_tokens, `${passes} passes and ${accepted} accepted proposals`);
    assert.ok(passes < delta(before, between, 'n_decode_total'), 'fewer target passes than the control');
    const stats = out.power.stats as { evaluatedPromptTokens: number };
    assert.equal(
      delta(between, after, 'prompt_tokens_total') + delta(between, after, 'prompt_tokens_cached_total'),
      out.usage.prompt_tokens,
    );
    assert.equal(delta(between, after, 'prompt_tokens_total'), stats.evaluatedPromptTokens);
    assert.ok(delta(between, after, 'tokens_predicted_seconds_total') > 0);
    assert.equal(after.get('llamacpp:requests_processing'), 0);
    // per draft position: they add up to the accepted proposals, and a position is accepted only
    // after the ones before it
    const was = new Map(perPosition(between));
    const at = perPosition(after)
      .sort(([a], [b]) => a - b)
      .map(([i, n]) => n - (was.get(i) ?? 0));
    assert.equal(
      at.reduce((a, b) => a + b, 0),
      accepted,
      `accepted per position ${JSON.stringify(at)}`,
    );
    for (let i = 1; i < at.length; i++)
      assert.ok(at[i]! <= at[i - 1]!, `position ${i} accepted no more often than ${i - 1}: ${JSON.stringify(at)}`);
  });

  test("llama-server's backend_sampling picks the sampling path; greedy is the same on both", async () => {
    const body = { model: 'target', prompt: 'one two three', max_tokens: 12, draft: 'draft-close', k: 4 };
    const cpu = await completion('/v1/completions', { ...body, backend_sampling: false });
    const backend = await completion('/v1/completions', { ...body, backend_sampling: true });
    assert.equal(backend.power.digest, cpu.power.digest);
    const bad = await post('/v1/completions', { ...body, backend_sampling: 'yes' });
    assert.equal(bad.status, 400);
  });

  test('stop sequences end the reply before them with finish_reason stop', async () => {
    const whole = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 12 });
    const text = whole.choices[0]!.text!;
    const stop = text.slice(4, 7);
    const cut = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 12, stop: [stop] });
    assert.equal(cut.choices[0]!.text, text.slice(0, text.indexOf(stop)));
    assert.equal(cut.choices[0]!.finish_reason, 'stop');
  });

  test('errors use the OpenAI shape with the mapped status', async () => {
    const missing = await post('/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(missing.status, 404);
    assert.match(
      (JSON.parse(missing.body) as { error: { message: string; code: string } }).error.message,
      /no model 'nope' in the library/,
    );
    const mtp = await post('/v1/completions', { model: 'target', prompt: 'hi', strategy: 'mtp' });
    assert.equal(mtp.status, 400);
    const e = JSON.parse(mtp.body) as { error: { message: string; code: string; type: string } };
    assert.equal(e.error.type, 'invalid_request_error');
    assert.match(e.error.message, /no NextN\/MTP layers/);
    // the refused load leaves nothing behind: the same model without the strategy works
    const next = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 2 });
    assert.equal(next.power.strategy, 'none');
  });

  test('a model file that makes llama.cpp abort fails its request and the server goes on', async () => {
    const r = await post('/v1/completions', { model: 'duplicate-tokens', prompt: 'hi', max_tokens: 4 });
    assert.ok(r.status >= 400 && r.status < 600, r.body);
    const next = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 4 });
    assert.equal(next.usage.completion_tokens, 4);
  });

  test('requests for two models at once: the second waits its turn and loads its model', async () => {
    const [a, b] = await Promise.all([
      completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 6 }),
      completion('/v1/completions', { model: 'hybrid-mtp', prompt: 'one two three', max_tokens: 6 }),
    ]);
    assert.deepEqual([a.model, b.model], ['target', 'hybrid-mtp']);
    assert.equal(a.usage.completion_tokens + b.usage.completion_tokens, 12);
  });

  test('/ws carries the whole PowerApi: calls, a chat reply and its generation events', async () => {
    const ws = new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth });
    const { api, close } = createApiClient(powerApi, ws);
    const { entries } = await api.models.list({});
    const target = entries.find((e) => e.name === 'target')!;
    assert.equal((await api.downloads.recommended({})).pairs.length > 0, true);
    await api.engine.load({ modelId: target.id });
    assert.equal((await api.engine.state({})).status, 'ready');
    const chat = await api.chats.create({ title: 'over ws' });
    const tokens: StreamedToken[] = [];
    const offToken = api.generation.onRounds((e) => tokens.push(...streamedTokens(e)));
    const done = new Promise<{ messageId: string; digest: string }>((resolve) => {
      const off = api.generation.onDone((d) => {
        off();
        resolve(d);
      });
    });
    const started = await api.chats.send({ chatId: chat.id, content: 'hello world', sampling: { maxTokens: 8 } });
    const end = await done;
    offToken();
    assert.equal(end.messageId, started.assistantMessageId);
    assert.equal(tokens.filter((t) => t.messageId === end.messageId).length, 8);
    const saved = await api.chats.get({ chatId: chat.id });
    assert.equal(saved.messages.length, 2);
    assert.equal(saved.messages[1]!.role === 'assistant' && saved.messages[1]!.digest, end.digest);
    await assert.rejects(api.chats.get({ chatId: 'no-such-chat' }), (e: Error & { code?: string }) => e.code === 'not-found');
    close();
  });

  test('a /ws message over the size limit, invalid UTF-8 or a reset closes that connection only; the server goes on', async () => {
    const url = `${serve.origin.replace('http', 'ws')}/ws`;
    const closed = (ws: WebSocket) => new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)).on('error', () => {}));
    const opened = (ws: WebSocket) => new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
    // 40 MB in one text frame: ws refuses it with 1009 (message too big)
    const big = new WebSocket(url, { headers: serve.auth });
    await opened(big);
    const bigClosed = closed(big);
    big.send('x'.repeat(40 * 1024 * 1024));
    assert.equal(await bigClosed, 1009);
    // a text frame that is not UTF-8: 1007
    const bad = new WebSocket(url, { headers: serve.auth, skipUTF8Validation: true });
    await opened(bad);
    const badClosed = closed(bad);
    bad.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    assert.equal(await badClosed, 1007);
    // a connection dropped in the middle of a frame
    const cut = new WebSocket(url, { headers: serve.auth });
    await opened(cut);
    const cutClosed = closed(cut);
    (cut as unknown as { _socket: { write: (b: Buffer) => void; destroy: () => void } })._socket.write(
      Buffer.from([0x81, 0xfe, 0x10, 0x00, 1, 2, 3, 4]),
    );
    (cut as unknown as { _socket: { destroy: () => void } })._socket.destroy();
    await cutClosed;
    // the server is still there, for /ws and for HTTP
    const ws = new WebSocket(url, { headers: serve.auth });
    const { api, close } = createApiClient(powerApi, ws);
    assert.ok((await api.models.list({})).entries.length > 0);
    close();
    assert.equal((await http(serve.origin, '/v1/models', { headers: serve.auth })).status, 200);
  });

  test('a download over /ws lands in the library (from a local HTTP server; nothing reaches the internet)', async () => {
    const files = await startFileServer({ '/m/far.gguf': { body: await readFile((await syntheticModels())['draft-far.gguf']) } });
    const { api, close } = createApiClient(powerApi, new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth }));
    try {
      const finished = new Promise<DownloadEntry>((resolve) => api.downloads.onChanged((d) => d.state !== 'running' && resolve(d)));
      const started = await api.downloads.start({ url: files.url('/m/far.gguf') });
      const end = await finished;
      assert.equal(end.id, started.id);
      assert.equal(end.state, 'done', JSON.stringify(end.error));
      assert.equal(end.path, join(dataDir, 'models', 'far.gguf'));
      const entry = (await api.models.list({})).entries.find((e) => e.id === end.modelId);
      assert.equal(entry?.name, 'far');
    } finally {
      close();
      await files.close();
    }
  });

  test('SIGKILL of the engine host mid-reply: the streamed reply ends with an error, the next request works', async () => {
    const servePid = serve.child.pid!;
    const hostsBefore = childPids(servePid);
    assert.equal(hostsBefore.length, 1, 'one engine host');
    const streaming = new Promise<string>((resolve, reject) => {
      let killed = false;
      let body = '';
      void fetch(`${serve.origin}/v1/completions`, {
        method: 'POST',
        headers: { ...serve.auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'target', prompt: 'one two three', max_tokens: 2000, stream: true }),
      }).then(async (res) => {
        const reader = res.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          body += Buffer.from(value).toString('utf8');
          if (!killed && sseData(body).length >= 3) {
            killed = true;
            process.kill(childPids(servePid)[0]!, 'SIGKILL');
          }
        }
        resolve(body);
      }, reject);
    });
    const events = sseData(await streaming);
    const last = JSON.parse(events.at(-1)!) as { error?: { message: string; code: string } };
    assert.equal(last.error?.code, 'engine-crashed', events.at(-1));
    assert.match(last.error!.message, /engine stopped during this reply/);
    assert.ok(!events.includes('[DONE]'));
    const next = await completion('/v1/completions', { model: 'target', prompt: 'one two three', max_tokens: 4 });
    assert.equal(next.usage.completion_tokens, 4);
    assert.notDeepEqual(childPids(servePid), hostsBefore, 'a new engine host runs');
  });

  // Ctrl-C; SIGHUP: the terminal (on Windows, the console window) closed
  for (const signal of ['SIGINT', 'SIGHUP'] as const)
    test(`${signal} stops cleanly: the streaming reply is stopped and saved, exit code 0`, async () => {
      const ws = new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth });
      const { api } = createApiClient(powerApi, ws);
      const target = (await api.models.list({})).entries.find((e) => e.name === 'target')!;
      await api.engine.load({ modelId: target.id });
      const chat = await api.chats.create({ title: `interrupted by ${signal}` });
      const firstToken = new Promise<void>((resolve) => api.generation.onRounds(() => resolve()));
      await api.chats.send({ chatId: chat.id, content: 'hello world', sampling: { maxTokens: 2000 } });
      await firstToken;
      const exit = await serve.stop(signal);
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.match(serve.stderr(), new RegExp(`${signal}: stopping`));

      // the next start finds the chat with the reply saved as stopped
      serve = await startPowerServe(['--data-dir', dataDir]);
      const again = createApiClient(powerApi, new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth }));
      const saved = await again.api.chats.get({ chatId: chat.id });
      const reply = saved.messages[1]!;
      assert.equal(reply.role, 'assistant');
      assert.ok(reply.role === 'assistant' && reply.status === 'stopped' && reply.tokens.length > 0, JSON.stringify(reply).slice(0, 300));
      again.close();
    });
});
