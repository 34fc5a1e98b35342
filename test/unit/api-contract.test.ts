// The PowerApi description is plain data a transport can walk: every method has zod input and
// output schemas, every event is named onX with a zod payload, errors have one shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { z } from 'zod';

import { powerApi, PowerError, toApiError, ApiError } from '../../app/contract/api/index.js';

test('every concern describes methods and onX events with zod schemas', () => {
  assert.deepEqual(Object.keys(powerApi).sort(), ['chats', 'downloads', 'engine', 'generation', 'mcp', 'models', 'profiles', 'reports']);
  for (const [name, c] of Object.entries(powerApi)) {
    for (const [method, spec] of Object.entries(c.methods)) {
      assert.ok(spec.input instanceof z.ZodType, `${name}.${method} input`);
      assert.ok(spec.output instanceof z.ZodType, `${name}.${method} output`);
      assert.doesNotMatch(method, /^on[A-Z]/, `${name}.${method} is a method, not an event`);
    }
    for (const [event, schema] of Object.entries(c.events)) {
      assert.match(event, /^on[A-Z]/, `${name}.${event}`);
      assert.ok(schema instanceof z.ZodType);
    }
  }
});

test('a method without parameters takes an empty object and refuses extra keys', () => {
  assert.deepEqual(powerApi.chats.methods.list.input.parse({}), {});
  assert.equal(powerApi.chats.methods.list.input.safeParse({ x: 1 }).success, false);
});

test('reply events carry their chat and message', () => {
  for (const [event, schema] of Object.entries(powerApi.generation.events)) {
    const shape = (schema as z.ZodObject).shape;
    assert.ok('chatId' in shape && 'messageId' in shape, event);
  }
});

test('errors cross as { code, message }', () => {
  assert.deepEqual(toApiError(new PowerError('busy', 'a reply is streaming')), { code: 'busy', message: 'a reply is streaming' });
  assert.deepEqual(toApiError(new Error('boom')), { code: 'internal', message: 'boom' });
  assert.deepEqual(toApiError({ code: 'not-found', message: 'no chat x' }), { code: 'not-found', message: 'no chat x' });
  assert.equal(ApiError.safeParse({ code: 'nope', message: '' }).success, false);
  assert.deepEqual(JSON.parse(JSON.stringify(new PowerError('unsupported', 'no'))), { code: 'unsupported', message: 'no' });
});
