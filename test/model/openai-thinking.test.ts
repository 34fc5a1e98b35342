// /v1/chat/completions with thinking models, as llama-server answers: the reasoning as
// `reasoning_content` in the message and in the stream's deltas (before the answer's `content`),
// `reasoning_format: "none"` leaving it inline, `chat_template_kwargs` (enable_thinking true unless
// the request says otherwise, so a template that reads it never sees it undefined), a budget per
// request under llama-server's names, ended on the same token with speculation as without, and an
// earlier turn's reasoning_content taken back into the prompt. A random-weight model never ends
// its thinking by itself: the budget does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { thinkingModels } from '../fixtures/models.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';

const ASK = [{ role: 'user', content: 'Why is the sky blue? The sky is blue. The sky is blue.' }];

interface Completion {
  choices: { message: { content: string | null; reasoning_content?: string; tool_calls?: unknown[] }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number };
  power: { digest: string; stats: { proposed: number; accepted: number }; strategy: string };
}

describe('/v1 thinking as llama-server does it', () => {
  let serve: InProcessServe;

  before(async () => {
    const m = await thinkingModels();
    serve = await startServeWithModels('power-v1-thinking-', {
      'thinking-target.gguf': m.target,
      'thinking-draft.gguf': m.draft,
      'thinking-hybrid-mtp.gguf': m.hybrid,
      'thinking-deepseek-r1.gguf': m.deepseekR1,
    });
  });
  after(() => serve?.close());

  async function post(body: object): Promise<Response> {
    return fetch(`${serve.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...serve.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  async function complete(body: object): Promise<Completion> {
    const res = await post({ model: 'thinking-target', messages: ASK, max_tokens: 16, temperature: 0, ...body });
    const json = (await res.json()) as Completion & { error?: { message: string } };
    assert.equal(res.status, 200, JSON.stringify(json.error));
    return json;
  }

  /** the stream's deltas, and its last chunk's Power evidence */
  async function stream(body: object): Promise<{ deltas: { content?: string; reasoning_content?: string }[]; power: Completion['power'] }> {
    const res = await post({ model: 'thinking-target', messages: ASK, max_tokens: 16, temperature: 0, stream: true, ...body });
    assert.equal(res.status, 200);
    const deltas: { content?: string; reasoning_content?: string }[] = [];
    let power: Completion['power'] | undefined;
    for (const line of (await res.text()).split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6)) as {
        choices: { delta: { content?: string; reasoning_content?: string }; finish_reason: string | null }[];
        power?: Completion['power'] & { stats?: unknown };
      };
      if (chunk.choices[0]?.finish_reason) power = chunk.power;
      else if (chunk.choices[0]) deltas.push(chunk.choices[0].delta);
    }
    return { deltas, power: power! };
  }

  test('a budget ends the thinking: reasoning_content, then the answer as content, whole and streamed', async () => {
    const whole = await complete({ thinking_budget_tokens: 5 });
    const message = whole.choices[0]!.message;
    assert.ok(message.reasoning_content && message.reasoning_content.length > 0, JSON.stringify(message));
    assert.ok(message.content && message.content.length > 0, 'an answer after the thinking');
    assert.ok(!message.content.includes('</think>') && !message.reasoning_content.includes('</think>'));

    const streamed = await stream({ thinking_budget_tokens: 5 });
    assert.equal(streamed.power.digest, whole.power.digest, 'the same tokens');
    const reasoning = streamed.deltas.map((d) => d.reasoning_content ?? '').join('');
    const content = streamed.deltas.map((d) => d.content ?? '').join('');
    assert.equal(reasoning, message.reasoning_content);
    assert.equal(content, message.content);
    // as llama-server: reasoning first, then the answer
    const firstContent = streamed.deltas.findIndex((d) => (d.content ?? '') !== '');
    const lastReasoning = streamed.deltas.map((d) => (d.reasoning_content ?? '') !== '').lastIndexOf(true);
    assert.ok(lastReasoning >= 0 && firstContent > lastReasoning, 'the answer starts after the thinking');

    // without a budget the thinking runs to max_tokens: no answer
    const unlimited = await complete({});
    assert.equal(unlimited.choices[0]!.message.content, '');
    assert.ok(unlimited.choices[0]!.message.reasoning_content!.length > message.reasoning_content.length);
    // llama-server's other name, and the message written before the forced end
    assert.equal((await complete({ reasoning_budget_tokens: 5 })).power.digest, whole.power.digest);
    const told = await complete({ thinking_budget_tokens: 5, thinking_budget_message: ' Time is up.' });
    assert.ok(told.choices[0]!.message.reasoning_content!.trimEnd().endsWith('Time is up.'), JSON.stringify(told.choices[0]!.message));
  });

  test('reasoning_format none leaves the thinking inline in the content', async () => {
    const split = await complete({ thinking_budget_tokens: 5 });
    const inline = await complete({ thinking_budget_tokens: 5, reasoning_format: 'none' });
    assert.equal(inline.power.digest, split.power.digest, 'the same reply');
    assert.equal(inline.choices[0]!.message.reasoning_content, undefined);
    const content = inline.choices[0]!.message.content!;
    assert.ok(content.includes('</think>'), JSON.stringify(content));
    assert.ok(content.includes(split.choices[0]!.message.reasoning_content!.trim()));
    const deepseek = await complete({ thinking_budget_tokens: 5, reasoning_format: 'deepseek' });
    assert.deepEqual(deepseek.choices[0]!.message, split.choices[0]!.message);
  });

  for (const spec of [
    { label: 'draft-model', model: 'thinking-target', fields: { draft: 'thinking-draft' } },
    { label: 'ngram', model: 'thinking-target', fields: { strategy: 'ngram' } },
    { label: 'mtp', model: 'thinking-hybrid-mtp', fields: { strategy: 'mtp' } },
    { label: 'ngram,mtp', model: 'thinking-hybrid-mtp', fields: { strategy: 'ngram,mtp' } },
  ]) {
    test(`the budgeted reply with ${spec.label} equals the control, greedy and seeded`, async () => {
      for (const sampling of [{ temperature: 0 }, { temperature: 0.8, seed: 5 }]) {
        // prompt lookup needs a reply that repeats itself: the random model's does where sampling
        // keeps close to its top token (a cooler temperature, still sampled with its seed)
        const lookup = spec.label === 'ngram' && sampling.temperature > 0;
        const base = {
          model: spec.model,
          // a passage said thrice: prompt lookup finds its n-grams
          messages: [{ role: 'user', content: 'the sky is blue because the sky is blue because the sky is blue' }],
          max_tokens: lookup ? 64 : 24,
          thinking_budget_tokens: 8,
          ...sampling,
          ...(lookup ? { temperature: 0.1 } : {}),
        };
        const control = await complete({ ...base, strategy: 'none' });
        const run = await complete({ ...base, ...spec.fields });
        assertDraftedSameAsControl(run, control, { label: `${spec.label} ${JSON.stringify(sampling)}` });
        assert.deepEqual(run.choices[0]!.message, control.choices[0]!.message);
        assert.ok(control.choices[0]!.message.reasoning_content, 'it thought');
      }
    });
  }

  test('chat_template_kwargs enable_thinking false: no reasoning, the template’s closed thinking in the prompt', async () => {
    const on = await complete({ thinking_budget_tokens: 5 });
    const off = await complete({ chat_template_kwargs: { enable_thinking: false }, thinking_budget_tokens: 5 });
    assert.equal(off.choices[0]!.message.reasoning_content, undefined);
    assert.ok(off.usage.prompt_tokens > on.usage.prompt_tokens, 'the closed thinking block is in the prompt');
    assert.ok(!off.choices[0]!.message.content!.includes('</think>'));
  });

  test('DeepSeek-R1’s template (it reads enable_thinking) thinks by default, and stops thinking when told', async () => {
    const on = await complete({ model: 'thinking-deepseek-r1', thinking_budget_tokens: 4 });
    assert.ok(on.choices[0]!.message.reasoning_content, 'it thinks: enable_thinking is true, not undefined');
    assert.ok(on.choices[0]!.message.content, 'and answers after the budget');
    const off = await complete({ model: 'thinking-deepseek-r1', chat_template_kwargs: { enable_thinking: false } });
    assert.equal(off.choices[0]!.message.reasoning_content, undefined);
    assert.ok(off.usage.prompt_tokens > on.usage.prompt_tokens, 'its generation prompt closes the thinking');
  });

  test('an assistant turn’s reasoning_content goes back to the template: kept where it keeps it, dropped where it drops it', async () => {
    const tool = { type: 'function', function: { name: 'look', parameters: { type: 'object', properties: {} } } };
    const call = { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{}' } };
    const turns = (reasoning?: string) => [
      ...ASK,
      { role: 'assistant', content: '', tool_calls: [call], ...(reasoning ? { reasoning_content: reasoning } : {}) },
      { role: 'tool', tool_call_id: 'call_1', content: 'blue' },
    ];
    // after the last user message Qwen 3.5's template keeps the thinking of a call
    const kept = await complete({ messages: turns('I should look it up.'), tools: [tool], max_tokens: 2 });
    const none = await complete({ messages: turns(), tools: [tool], max_tokens: 2 });
    assert.ok(kept.usage.prompt_tokens > none.usage.prompt_tokens, 'the reasoning is in the prompt');
    // an earlier turn's: dropped, as the template does
    const history = (reasoning?: string) => [
      ...ASK,
      { role: 'assistant', content: 'Scattering.', ...(reasoning ? { reasoning_content: reasoning } : {}) },
      { role: 'user', content: 'And at sunset?' },
    ];
    const earlier = await complete({ messages: history('I should look it up.'), max_tokens: 2 });
    const plain = await complete({ messages: history(), max_tokens: 2 });
    assert.equal(earlier.usage.prompt_tokens, plain.usage.prompt_tokens);
  });

  test('bad thinking fields are refused with OpenAI-shaped 400s', async () => {
    for (const [body, message] of [
      [{ reasoning_format: 'long' }, /reasoning_format must be "none", "deepseek" or "auto"/],
      [{ chat_template_kwargs: { enable_thinking: 'yes' } }, /enable_thinking must be a boolean/],
      [{ chat_template_kwargs: [1] }, /chat_template_kwargs must be an object/],
      [{ thinking_budget_tokens: -2 }, /thinking budget is a whole number of tokens/],
      [{ thinking_budget_tokens: 1.5 }, /thinking budget is a whole number of tokens/],
      [{ thinking_budget_tokens: 4, reasoning_budget_tokens: 5 }, /name the same budget: give one/],
      [{ messages: [{ role: 'assistant', content: 'x', reasoning_content: 7 }] }, /reasoning_content/],
    ] as const) {
      const res = await post({ model: 'thinking-target', messages: ASK, max_tokens: 4, ...body });
      const json = (await res.json()) as { error: { message: string; type: string } };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(json.error.type, 'invalid_request_error');
      assert.match(json.error.message, message);
    }
  });
});
