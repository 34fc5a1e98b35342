// Structured output through /v1 on the real model (Gemma 3 270M), as an OpenAI client asks for
// it: `response_format` json_schema and json_object, llama-server's `grammar`, whole and streamed.
// The reply is JSON of the schema's shape (or the grammar's text), and the speculative replies
// (n-gram lookup, the early-exit draft model) carry the autoregressive reply's tokens. Requests the
// engine cannot honour are refused with 400 and say why. Tools (Gemma has no template: the generic
// JSON reply) give the call the question asks for. Skipped, with the reason, where the real
// model could not be installed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { http, sseData } from '../fixtures/http-client.js';
import { REAL_DIR, realDraft, realModelSkip } from '../fixtures/real-model.js';
import { startServeInProcess, type InProcessServe } from '../fixtures/serve-in-process.js';

const MODEL = 'gemma-3-270m-q4_k_m';
const MESSAGES = [{ role: 'user', content: 'Describe a person who lives in a city, as JSON.' }];
const PERSON = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 24 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    city: { type: 'string', maxLength: 24 },
  },
  required: ['name', 'age', 'city'],
  additionalProperties: false,
};
const PERSON_FORMAT = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: PERSON } };

/** one event of a streamed chat completion (Power's fields on the last) */
interface Chunk {
  choices: { delta: { content?: string }; finish_reason: string | null }[];
  power?: { digest: string };
}

interface Completion {
  choices: { message?: { content: string }; text?: string; finish_reason: string }[];
  power: { digest: string; strategy: string; stats: { proposed: number; accepted: number } };
}

describe('structured output on Gemma 3 270M through /v1', { skip: realModelSkip() }, () => {
  let dir = '';
  let serve: InProcessServe;
  let draft = '';

  before(async () => {
    draft = basename(await realDraft(), '.gguf');
    dir = await mkdtemp(join(tmpdir(), 'power-structured-'));
    serve = await startServeInProcess({ dataDir: dir, modelsDirs: [REAL_DIR] });
  });
  after(async () => {
    await serve?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: object) =>
    http(serve.origin, path, {
      method: 'POST',
      headers: { ...serve.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 96, temperature: 0, ...body }),
    });
  const chat = async (body: object): Promise<Completion> => {
    const r = await post('/v1/chat/completions', { messages: MESSAGES, ...body });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Completion;
  };

  test('json_schema: a person object of the schema, the same tokens under n-gram and draft-model speculation', async () => {
    const ar = await chat({ response_format: PERSON_FORMAT });
    const content = ar.choices[0]!.message!.content;
    assert.equal(ar.choices[0]!.finish_reason, 'stop', content);
    const person = JSON.parse(content) as Record<string, unknown>;
    assert.deepEqual(Object.keys(person).sort(), ['age', 'city', 'name'], content);
    assert.equal(typeof person.name, 'string');
    assert.ok(Number.isInteger(person.age) && (person.age as number) >= 0 && (person.age as number) <= 120, content);
    for (const speculative of [
      { strategy: 'ngram', k: 4 },
      { draft, k: 4 },
    ]) {
      const run = await chat({ response_format: PERSON_FORMAT, ...speculative });
      assert.equal(run.power.digest, ar.power.digest, `${JSON.stringify(speculative)}: ${run.choices[0]!.message!.content}`);
      assert.equal(run.choices[0]!.message!.content, content);
      assert.ok(run.power.stats.proposed > 0, `${run.power.strategy} drafted`);
    }
  });

  test('json_object, streamed: the deltas add up to one JSON object, the content of the same request unstreamed', async () => {
    // one worked example, and the model answers with an object it closes in 8 tokens, each chosen
    // by at least 1.3 nats: the same on every CPU (a bare question leaves near-ties that another
    // CPU's kernels decide otherwise, into an object that never closes), and the grammar ends it
    const messages = [
      { role: 'user', content: 'The capital of Germany, as a JSON object.' },
      { role: 'assistant', content: '{"capital": "Berlin"}' },
      { role: 'user', content: 'The capital of France, as a JSON object.' },
    ];
    const body = { messages, response_format: { type: 'json_object' }, max_tokens: 128 };
    const r = await post('/v1/chat/completions', { ...body, stream: true });
    assert.equal(r.status, 200, r.body);
    const events = sseData(r.body);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0]?.finish_reason, 'stop', `the object closed within the budget: ${text}`);
    const value = JSON.parse(text) as unknown;
    assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `one JSON object: ${text}`);
    assert.deepEqual(value, { capital: 'Paris' });
    const whole = await chat(body);
    assert.equal(text, whole.choices[0]!.message!.content, 'the streamed text is the final content');
    assert.equal(last.power?.digest, whole.power.digest, 'the same tokens');
  });

  test("llama-server's grammar field on /v1/completions: the reply is one of the grammar's words", async () => {
    const r = await post('/v1/completions', { prompt: 'Is Paris the capital of France? Answer:', grammar: 'root ::= " yes" | " no"' });
    assert.equal(r.status, 200, r.body);
    const out = JSON.parse(r.body) as Completion;
    assert.ok([' yes', ' no'].includes(out.choices[0]!.text!), out.choices[0]!.text);
    assert.equal(out.choices[0]!.finish_reason, 'stop');
  });

  test('what cannot be honoured is refused with 400 and the reason; the next request is answered', async () => {
    const refused = async (body: object, why: RegExp) => {
      const r = await post('/v1/chat/completions', { messages: MESSAGES, ...body });
      assert.equal(r.status, 400, r.body);
      assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, why);
    };
    await refused({ response_format: { type: 'xml' } }, /response_format\.type must be "text", "json_object" or "json_schema"/);
    await refused({ grammar: 'root ::= "a"', json_schema: PERSON }, /a grammar or a JSON schema/);
    await refused({ grammar: 'root ::= "unclosed' }, /GBNF parser refused the grammar/);
    await refused({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: '#/nowhere' } } } }, /JSON schema/);
    await refused({ response_format: PERSON_FORMAT, backend_sampling: true }, /applied on the CPU only/);
    const ok = await chat({ response_format: { type: 'text' }, max_tokens: 4 });
    assert.equal(ok.choices.length, 1);
  });

  test('tools: a required get_weather call with the city of the question, greedy and seeded, the same under n-gram and the draft', async () => {
    const weather = {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get the current weather in a city',
        parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 24 } }, required: ['city'] },
      },
    };
    const ask = {
      messages: [{ role: 'user', content: 'What is the weather like in Paris today?' }],
      tools: [weather],
      tool_choice: 'required',
    };
    type Called = Completion & { choices: { message: { tool_calls?: { function: { name: string; arguments: string } }[] } }[] };
    const calls = (r: Called) => r.choices[0]!.message.tool_calls?.map((c) => [c.function.name, c.function.arguments]);
    for (const sampling of [{}, { temperature: 0.7, seed: 5 }]) {
      const ar = (await chat({ ...ask, ...sampling })) as Called;
      assert.equal(ar.choices[0]!.finish_reason, 'tool_calls', JSON.stringify(ar.choices[0]));
      const [[name, args]] = calls(ar)! as [[string, string]];
      assert.equal(name, 'get_weather');
      // the model reads the city off the question (Gemma 3 270M, greedy and this seed)
      assert.equal((JSON.parse(args) as { city: string }).city, 'Paris', args);
      for (const speculative of [
        { strategy: 'ngram', k: 4 },
        { draft, k: 4 },
      ]) {
        const run = (await chat({ ...ask, ...sampling, ...speculative })) as Called;
        assertDraftedSameAsControl(run, ar, { label: `required tool call, ${JSON.stringify({ ...speculative, ...sampling })}` });
        assert.deepEqual(calls(run), calls(ar));
      }
    }
  });
});
