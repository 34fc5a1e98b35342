// Tool calls through `power serve` as the official OpenAI SDK sees them. On a model whose chat
// template renders tools (the real-vocabulary target with Qwen 2.5's template): the prompt equals
// llama-server's token for token (llama.cpp's template application as llama-server calls it), the
// template's parser reads a call whole and as it streams, and greedy and seeded speculative runs
// (draft model, n-gram) draft and equal their autoregressive controls under the tool grammar (lazy
// for "auto"). An untrained model never opens a call there (llama.cpp's grammar lets text come first),
// so the calls themselves come from the synthetic target, whose template has no tool syntax: its
// generic JSON reply makes a required call, whole and streamed alike, exact under speculation.
// The refusals a client meets are in words.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';

import { EngineClient } from '../../app/engine/client.js';
import { Conversation } from '../../app/service/conversation.js';
import { planPrompt, planTools, replyDelta, type ReadReply, type ToolUse } from '../../app/service/tool-calls.js';
import { ChatCompletionRequest, toolUse } from '../../app/serve/openai/api.js';
import { referencePrompt } from '../fixtures/chat-template-reference.js';
import { assertDraftedSameAsControl, type DraftingRun } from '../fixtures/drafting.js';
import { syntheticModels, toolTemplateModels } from '../fixtures/models.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';

const WEATHER: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather now in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 24 } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};
const TIME: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'The local time in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 24 } }, required: ['city'] },
  },
};
const ASK: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];
/** a conversation after one call and its result */
const AFTER_CALL: ChatCompletionMessageParam[] = [
  ...ASK,
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21, "sky": "clear"}' },
  { role: 'user', content: 'And in Rome?' },
];

/** a reply's evidence (`power`: its digest and the proposal counters), as the drafting checks read it */
const evidence = (r: OpenAI.Chat.Completions.ChatCompletion) => r as unknown as DraftingRun;

/** the parts of a reply that must match between runs */
function shape(r: OpenAI.Chat.Completions.ChatCompletion) {
  const c = r.choices[0]!;
  return {
    content: c.message.content,
    calls: (c.message.tool_calls ?? []).map((t) => (t.type === 'function' ? [t.function.name, t.function.arguments] : [])),
    finish: c.finish_reason,
    tokens: r.usage!.completion_tokens,
  };
}

describe('tool calls through /v1/chat/completions', () => {
  let serve: InProcessServe;
  let client: OpenAI;
  let tools: { target: string; draft: string };

  before(async () => {
    const set = await syntheticModels();
    tools = await toolTemplateModels();
    serve = await startServeWithModels('power-tools-', {
      'target.gguf': set['target.gguf'],
      'draft-close.gguf': set['draft-close.gguf'],
      'tools-target.gguf': tools.target,
      'tools-draft.gguf': tools.draft,
    });
    client = new OpenAI({ baseURL: `${serve.origin}/v1`, apiKey: serve.token, maxRetries: 0 });
  });
  after(() => serve?.close());

  test("the prompt with tools, a call and its result is llama-server's, token for token", async () => {
    const engine = EngineClient.start();
    try {
      const { modelId, info } = await engine.call('loadModel', { path: tools.target, gpuLayers: 0 });
      for (const [name, body] of Object.entries({
        'a question with two tools': { messages: ASK, tools: [WEATHER, TIME] },
        'after a call and its result, required': { messages: AFTER_CALL, tools: [WEATHER], tool_choice: 'required' },
        'tools offered, none wanted': { messages: ASK, tools: [WEATHER], tool_choice: 'none' },
      })) {
        const use = toolUse(ChatCompletionRequest.parse({ model: 'm', ...body })) as ToolUse;
        const conv = new Conversation(engine, modelId, info);
        const plan = await planTools(conv, use, []);
        assert.equal(plan.prompt.kind, 'text', `${name}: the template renders tools`);
        const ours = await planPrompt(engine, modelId, conv, plan);
        const theirs = referencePrompt(tools.target, body);
        assert.match(theirs.prompt, /get_weather/, `${name}: the tools are in llama.cpp's prompt`);
        assert.deepEqual(ours.tokens, theirs.tokens, `${name}: the tokens differ`);
      }
    } finally {
      engine.close();
    }
  });

  test("the template's parser reads a call from the reply's tokens, whole and as it streams", async () => {
    const engine = EngineClient.start();
    try {
      const { modelId, info } = await engine.call('loadModel', { path: tools.target, gpuLayers: 0 });
      const use = toolUse(ChatCompletionRequest.parse({ model: 'm', messages: ASK, tools: [WEATHER, TIME] })) as ToolUse;
      const plan = await planTools(new Conversation(engine, modelId, info), use, []);
      assert.ok(plan.sampling.grammarLazy, 'auto: the grammar waits for the opening of a call');
      const reply = 'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
      const tokens = Array.from(await engine.call('tokenize', { modelId, text: reply, addSpecial: false, parseSpecial: true }));
      const whole = await plan.read(tokens, reply, false);
      assert.equal(whole.content.trim(), 'Let me look.');
      assert.deepEqual(
        whole.toolCalls.map((c) => [c.name, JSON.parse(c.arguments) as unknown]),
        [['get_weather', { city: 'Paris' }]],
      );
      // read token by token, the deltas add up to the whole reply, and a call keeps its id
      let shown: ReadReply = { content: '', toolCalls: [] };
      let content = '';
      const calls: { id?: string; name: string; arguments: string }[] = [];
      for (let n = 1; n <= tokens.length; n++) {
        const now = await plan.read(tokens.slice(0, n), '', n < tokens.length);
        const delta = replyDelta(shown, now);
        shown = now;
        content += delta.content;
        for (const d of delta.toolCalls) {
          calls[d.index] ??= { name: '', arguments: '' };
          if (d.id) calls[d.index]!.id = d.id;
          calls[d.index]!.name += d.name ?? '';
          calls[d.index]!.arguments += d.arguments;
        }
      }
      assert.equal(content, whole.content);
      assert.deepEqual(
        calls.map((c) => [c.name, c.arguments]),
        whole.toolCalls.map((c) => [c.name, c.arguments]),
      );
    } finally {
      engine.close();
    }
  });

  test('greedy and seeded on the template path, under the tool grammar: a draft model and n-gram lookup draft and give the autoregressive reply, before a call and after one', async () => {
    // the untrained model writes "解決" (one token) first whatever it is asked, greedy and seeded;
    // a question that carries the word gives prompt lookup a match from the first round (it found
    // none in these 32-token replies over 151,936 tokens)
    const question = (messages: ChatCompletionMessageParam[]) =>
      messages.map((m) => (m === ASK[1] ? { role: 'user' as const, content: 'What is the weather in Paris?\n解決してください。' } : m));
    const cases = [
      [question(ASK), 'required', { temperature: 0 }],
      [question(ASK), 'required', { temperature: 0.8, seed: 7 }],
      [question(AFTER_CALL), 'auto', { temperature: 0 }],
      [question(AFTER_CALL), 'auto', { temperature: 0.8, seed: 7 }],
    ] as const;
    const ask = ([messages, choice, sampling]: (typeof cases)[number]) =>
      ({
        model: 'tools-target',
        messages,
        tools: [WEATHER, TIME],
        tool_choice: choice,
        max_tokens: 32,
        ...sampling,
      }) as ChatCompletionCreateParamsNonStreaming;
    const format = (r: OpenAI.Chat.Completions.ChatCompletion) => (r as unknown as { power: { toolFormat?: string } }).power.toolFormat;
    // one method after the other: each loads its model set once
    const controls = [];
    for (const c of cases) {
      const control = await client.chat.completions.create({ ...ask(c), ...({ strategy: 'none' } as object) });
      // the template's own format (not the generic JSON of a template without tools) read the reply
      assert.ok(format(control) !== undefined && format(control) !== 'generic JSON', `the template's format: ${format(control)}`);
      // an untrained model never opens a call, and "required" lets text come first but never end
      // before a call: the grammar holds the reply to its length
      if (c[1] === 'required')
        assert.deepEqual([control.choices[0]!.finish_reason, control.choices[0]!.message.tool_calls ?? []], ['length', []]);
      controls.push(control);
    }
    for (const method of [
      { draft: 'tools-draft', k: 4 },
      { strategy: 'ngram', k: 4 },
    ]) {
      for (const [i, c] of cases.entries()) {
        const label = `${JSON.stringify(method)} ${JSON.stringify(c[2])} ${c[1]}`;
        const spec = await client.chat.completions.create({ ...ask(c), ...(method as object) });
        assertDraftedSameAsControl(evidence(spec), evidence(controls[i]!), { label, accepted: 'draft' in method });
        assert.deepEqual(shape(spec), shape(controls[i]!), label);
        assert.equal(format(spec), format(controls[i]!), label);
      }
    }
  });

  test('a template without tool syntax: the generic JSON reply makes the required call, whole and streamed alike, equal to its controls', async () => {
    const ask: ChatCompletionCreateParamsNonStreaming = {
      model: 'target',
      messages: ASK,
      tools: [WEATHER],
      tool_choice: 'required',
      max_tokens: 400,
      temperature: 0,
    };
    const ar = await client.chat.completions.create(ask);
    const choice = ar.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls', JSON.stringify(choice));
    const call = choice.message.tool_calls?.[0];
    assert.ok(call?.type === 'function' && call.function.name === 'get_weather', JSON.stringify(choice));
    assert.equal(typeof (JSON.parse(call.function.arguments) as { city: unknown }).city, 'string');
    assert.match(call.id, /^call_\w+$/);
    assert.equal(choice.message.content, null);
    assert.equal((ar as unknown as { power: { toolFormat: string } }).power.toolFormat, 'generic JSON');

    const stream = await client.chat.completions.create({ ...ask, stream: true });
    const calls: { name: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (!c) continue;
      finish = c.finish_reason ?? finish;
      for (const d of c.delta.tool_calls ?? []) {
        calls[d.index] ??= { name: '', arguments: '' };
        calls[d.index]!.name += d.function?.name ?? '';
        calls[d.index]!.arguments += d.function?.arguments ?? '';
      }
    }
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(calls, [{ name: 'get_weather', arguments: call.function.arguments }]);

    for (const sampling of [{ temperature: 0 }, { temperature: 0.8, seed: 3 }]) {
      const control = await client.chat.completions.create({ ...ask, ...sampling, ...({ strategy: 'none' } as object) });
      assert.equal(control.choices[0]!.finish_reason, 'tool_calls', JSON.stringify(sampling));
      for (const method of [
        { strategy: 'ngram', k: 4 },
        { draft: 'draft-close', k: 4 },
      ]) {
        const label = `${JSON.stringify(method)} ${JSON.stringify(sampling)}`;
        const spec = await client.chat.completions.create({ ...ask, ...sampling, ...(method as object) });
        assertDraftedSameAsControl(evidence(spec), evidence(control), { label, accepted: 'draft' in method });
        assert.deepEqual(shape(spec), shape(control), label);
      }
    }
  });

  test('refusals in words: an unknown named tool, a grammar with tools, logprobs on a stream with tools, required without tools', async () => {
    const refused = async (body: object, reason: RegExp) =>
      assert.rejects(
        client.chat.completions.create({
          model: 'tools-target',
          messages: ASK,
          max_tokens: 4,
          ...body,
        } as ChatCompletionCreateParamsNonStreaming),
        (e: unknown) => e instanceof OpenAI.BadRequestError && reason.test(e.message),
      );
    await refused(
      { tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'get_news' } } },
      /names 'get_news', which is not among the tools \(get_weather\)/,
    );
    await refused({ tools: [WEATHER], grammar: 'root ::= "x"' }, /cannot go with tools/);
    await refused({ tools: [WEATHER], logprobs: true, stream: true }, /logprobs is not supported with tools and stream/);
    await refused({ tool_choice: 'required' }, /gives no tools/);
    await refused({ tools: [{ type: 'function', function: { name: 'bad name!' } }] }, /a function name is/);
  });

  test('a named tool_choice calls that tool', async () => {
    const r = await client.chat.completions.create({
      model: 'target',
      messages: ASK,
      tools: [WEATHER, TIME],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      max_tokens: 400,
      temperature: 0,
    });
    const call = r.choices[0]!.message.tool_calls?.[0];
    assert.ok(call?.type === 'function' && call.function.name === 'get_time', JSON.stringify(r.choices[0]));
  });
});
