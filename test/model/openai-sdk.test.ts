// `power serve` as the official OpenAI SDK (the `openai` package) sees it, on the synthetic
// models: structured output (json_object, json_schema), log-probabilities whole and streamed, and
// the SDK's typed error for a refused request. The SDK parses every answer itself, so a field of
// the wrong shape fails here as it would in a user's program.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';

import { syntheticModels } from '../fixtures/models.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';

const MESSAGES = [{ role: 'user' as const, content: 'Describe a pet as JSON.' }];
const PET = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 10 }, legs: { type: 'integer', minimum: 0, maximum: 8 } },
  required: ['name', 'legs'],
  additionalProperties: false,
};

describe('the OpenAI SDK against power serve', () => {
  let serve: InProcessServe;
  let client: OpenAI;

  before(async () => {
    const set = await syntheticModels();
    serve = await startServeWithModels('power-sdk-', { 'target.gguf': set['target.gguf'], 'draft-close.gguf': set['draft-close.gguf'] });
    client = new OpenAI({ baseURL: `${serve.origin}/v1`, apiKey: serve.token, maxRetries: 0 });
  });
  after(() => serve?.close());

  test('json_schema: a schema-valid object, the same under a draft model (Power fields in the body)', async () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'pet', strict: true, schema: PET } };
    const ar = await client.chat.completions.create({
      model: 'target',
      messages: MESSAGES,
      max_tokens: 64,
      temperature: 0,
      response_format: format,
    });
    const content = ar.choices[0]!.message.content!;
    assert.equal(ar.choices[0]!.finish_reason, 'stop', content);
    const pet = JSON.parse(content) as { name: string; legs: number };
    assert.deepEqual(Object.keys(pet).sort(), ['legs', 'name']);
    assert.ok(
      typeof pet.name === 'string' && pet.name.length <= 10 && Number.isInteger(pet.legs) && pet.legs >= 0 && pet.legs <= 8,
      content,
    );
    // Power's own request fields travel in the body, as extra_body does in the Python SDK
    const spec = await client.chat.completions.create({
      model: 'target',
      messages: MESSAGES,
      max_tokens: 64,
      temperature: 0,
      response_format: format,
      ...({ draft: 'draft-close', k: 4 } as object),
    });
    assert.equal(spec.choices[0]!.message.content, content);
  });

  test('json_object: the reply opens a JSON object and, when it ends, parses as one', async () => {
    const r = await client.chat.completions.create({
      model: 'target',
      messages: MESSAGES,
      max_tokens: 48,
      response_format: { type: 'json_object' },
    });
    const content = r.choices[0]!.message.content!;
    assert.match(content, /^\s*\{/);
    if (r.choices[0]!.finish_reason === 'stop') assert.equal(typeof JSON.parse(content), 'object');
  });

  test('logprobs: five entries for five tokens, whole and streamed, seeded, the same under n-gram speculation', async () => {
    const ask = { model: 'target', messages: MESSAGES, max_tokens: 5, temperature: 0.9, seed: 11, logprobs: true, top_logprobs: 2 };
    const whole = await client.chat.completions.create(ask);
    const entries = whole.choices[0]!.logprobs!.content!;
    assert.equal(whole.usage!.completion_tokens, 5);
    assert.equal(entries.length, 5);
    assert.ok(entries.every((e) => e.logprob <= 0 && e.top_logprobs.length === 2));
    const stream = await client.chat.completions.create({ ...ask, stream: true, ...({ strategy: 'ngram', k: 4 } as object) });
    const streamed: typeof entries = [];
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    }
    assert.equal(text, whole.choices[0]!.message.content);
    assert.deepEqual(streamed, entries);
  });

  test("a refused request is the SDK's BadRequestError with Power's reason", async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'target', messages: MESSAGES, response_format: { type: 'xml' } as never }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.status === 400 && /response_format\.type must be/.test(e.message),
    );
  });
});
