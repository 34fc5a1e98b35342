// How /v1 reads a request's structured-output fields (app/serve/openai/api.ts): OpenAI's
// response_format and llama-server's json_schema and grammar, with llama-server's precedence.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PowerError } from '../../app/contract/api/errors.js';
import { ChatCompletionRequest, CompletionRequest, outputConstraint } from '../../app/serve/openai/api.js';
import { JSON_OBJECT_SCHEMA } from '../../app/service/reply-steps.js';

const chat = (fields: object) => ChatCompletionRequest.parse({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
const schemaOf = (fields: object) => {
  const c = outputConstraint(chat(fields));
  assert.ok('jsonSchema' in c, JSON.stringify(c));
  return JSON.parse(c.jsonSchema) as unknown;
};
const PERSON = { type: 'object', properties: { name: { type: 'string' } } };

describe('/v1 structured output fields', () => {
  test('no field and response_format text constrain nothing', () => {
    assert.deepEqual(outputConstraint(chat({})), {});
    assert.deepEqual(outputConstraint(chat({ response_format: { type: 'text' } })), {});
    assert.deepEqual(outputConstraint(chat({ response_format: null, json_schema: null, grammar: null })), {});
  });

  test('json_schema takes its schema; json_object an object, or its own schema, or the json_schema field', () => {
    assert.deepEqual(
      schemaOf({ response_format: { type: 'json_schema', json_schema: { name: 'p', strict: true, schema: PERSON } } }),
      PERSON,
    );
    assert.deepEqual(schemaOf({ response_format: { type: 'json_schema', json_schema: { name: 'p' } } }), {});
    assert.deepEqual(schemaOf({ response_format: { type: 'json_object' } }), JSON_OBJECT_SCHEMA);
    assert.deepEqual(schemaOf({ response_format: { type: 'json_object', schema: PERSON } }), PERSON);
    assert.deepEqual(schemaOf({ response_format: { type: 'json_object' }, json_schema: PERSON }), PERSON);
    assert.deepEqual(schemaOf({ json_schema: PERSON }), PERSON);
    // response_format json_schema replaces llama-server's field, as llama-server does
    assert.deepEqual(
      schemaOf({ response_format: { type: 'json_schema', json_schema: { schema: { type: 'array' } } }, json_schema: PERSON }),
      {
        type: 'array',
      },
    );
  });

  test("llama-server's grammar on both endpoints", () => {
    assert.deepEqual(outputConstraint(chat({ grammar: 'root ::= "a"' })), { grammar: 'root ::= "a"' });
    assert.deepEqual(outputConstraint(CompletionRequest.parse({ model: 'm', prompt: 'x', grammar: 'root ::= "b"' })), {
      grammar: 'root ::= "b"',
    });
  });

  test('a grammar with a schema is bad input; a response_format of another type or a schema that is no object does not parse', () => {
    assert.throws(
      () => outputConstraint(chat({ grammar: 'root ::= "a"', response_format: { type: 'json_object' } })),
      (e: unknown) => e instanceof PowerError && e.code === 'bad-input' && /not both/.test(e.message),
    );
    const bad = ChatCompletionRequest.safeParse({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'xml' },
    });
    assert.ok(!bad.success);
    assert.match(JSON.stringify(bad.error.issues), /response_format\.type must be/);
    assert.ok(!ChatCompletionRequest.safeParse({ model: 'm', messages: [{ role: 'user', content: 'x' }], json_schema: 'object' }).success);
  });
});
