// How /v1 reads a chat request's tools (app/serve/openai/api.ts: toolUse) and what the generic
// JSON reply of a template without tool syntax asks for and reads back (app/service/tool-calls.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ChatCompletionRequest, toolUse } from '../../app/serve/openai/api.js';
import { genericSchema, readGeneric, replyDelta, type ToolUse } from '../../app/service/tool-calls.js';

const WEATHER = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const TIME = { type: 'function', function: { name: 'get_time' } };
const ASK = [{ role: 'user', content: 'Weather in Paris?' }];
const read = (body: object) => toolUse(ChatCompletionRequest.parse({ model: 'm', messages: ASK, ...body }));

describe('toolUse', () => {
  test('no tools and no calls in the conversation: the plain template path', () => {
    assert.equal(read({}), null);
    assert.equal(read({ tools: [], tool_choice: 'auto' }), null);
  });

  test('tools, or a conversation that holds a call or a result, go through the tool-aware template', () => {
    assert.equal(read({ tools: [WEATHER] })?.toolChoice, 'auto');
    const after = toolUse(
      ChatCompletionRequest.parse({
        model: 'm',
        messages: [
          ...ASK,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        ],
      }),
    );
    assert.deepEqual(after?.tools, []);
  });

  test('a named tool_choice is that one tool, required; a name not among the tools is refused', () => {
    const named = read({ tools: [WEATHER, TIME], tool_choice: { type: 'function', function: { name: 'get_time' } } });
    assert.equal(named?.toolChoice, 'required');
    assert.deepEqual(
      named?.tools.map((t) => t.function.name),
      ['get_time'],
    );
    assert.throws(() => read({ tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }), /names 'nope'/);
  });

  test('required without tools is refused; parallel_tool_calls is passed on only when given', () => {
    assert.throws(() => read({ tool_choice: 'required' }), /gives no tools/);
    assert.equal(read({ tools: [WEATHER], parallel_tool_calls: true })?.parallelToolCalls, true);
    assert.equal('parallelToolCalls' in read({ tools: [WEATHER] })!, false);
  });

  test('the schema refuses what is not a tool: a bad name, another type', () => {
    assert.equal(
      ChatCompletionRequest.safeParse({ model: 'm', messages: ASK, tools: [{ type: 'function', function: { name: 'a b' } }] }).success,
      false,
    );
    assert.equal(ChatCompletionRequest.safeParse({ model: 'm', messages: ASK, tools: [{ type: 'retrieval' }] }).success, false);
  });
});

describe('the generic JSON reply', () => {
  const use = (over: Partial<ToolUse>): ToolUse => ({
    messages: ASK as ToolUse['messages'],
    tools: [WEATHER as ToolUse['tools'][number]],
    toolChoice: 'auto',
    ...over,
  });

  test('its schema: a call (the tool names as constants, their parameters), or a response unless required', () => {
    const required = genericSchema(use({ toolChoice: 'required' }));
    assert.deepEqual(Object.keys(required.properties as object), ['tool_call']);
    const call = (required.properties as { tool_call: { anyOf: { properties: { name: unknown; arguments: unknown } }[] } }).tool_call
      .anyOf[0]!;
    assert.deepEqual(call.properties.name, { const: 'get_weather' });
    assert.deepEqual(call.properties.arguments, WEATHER.function.parameters);
    const auto = genericSchema(use({}));
    assert.equal((auto.anyOf as unknown[]).length, 2);
    const parallel = genericSchema(use({ toolChoice: 'required', parallelToolCalls: true }));
    assert.deepEqual(Object.keys(parallel.properties as object), ['tool_calls']);
  });

  test('read back: a call with its arguments as JSON text, a response as content, anything else as text', () => {
    const called = readGeneric('{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}');
    assert.deepEqual(
      called.toolCalls.map((c) => [c.name, c.arguments]),
      [['get_weather', '{"city":"Paris"}']],
    );
    assert.match(called.toolCalls[0]!.id, /^call_/);
    assert.deepEqual(readGeneric('{"response": "It is sunny."}'), { content: 'It is sunny.', toolCalls: [] });
    assert.deepEqual(readGeneric('{"tool_call": {"name": '), { content: '{"tool_call": {"name": ', toolCalls: [] });
  });
});

describe('replyDelta', () => {
  test('new text, a new call with its id and name, then the new part of its arguments', () => {
    const call = (args: string) => ({ id: 'c1', name: 'f', arguments: args });
    assert.deepEqual(replyDelta({ content: 'a', toolCalls: [] }, { content: 'ab', toolCalls: [call('{"x')] }), {
      content: 'b',
      toolCalls: [{ index: 0, id: 'c1', name: 'f', arguments: '{"x' }],
    });
    assert.deepEqual(replyDelta({ content: 'ab', toolCalls: [call('{"x')] }, { content: 'ab', toolCalls: [call('{"x": 1}')] }), {
      content: '',
      toolCalls: [{ index: 0, arguments: '": 1}' }],
    });
  });
});
