// The engine side of thinking. applyChat renders a template with llama-server's thinking inputs
// (enable_thinking true unless told otherwise, chat_template_kwargs, reasoning_format) and reports
// the template's thinking tags; parseChat takes a reply's reasoning apart with the template's own
// parser, for every template in llama.cpp's bundle that llama.cpp gives thinking tags (the
// native applyChat takes a template in place of the model's, as llama-server's
// --chat-template-file does, so one model serves them all). The reasoning budget is llama.cpp's
// sampler: once the thinking has taken its tokens it forces the message and the end tag, on the
// same token in a speculative run and its autoregressive control.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';
import { loadBinding, type NativeModel } from '../../app/engine-host/binding.js';
import { EngineClient } from '../../app/engine/client.js';
import type { ChatTemplateResult, ParsedChatReply, ReasoningFormat } from '../../app/engine/protocol.js';
import { thinkingModels, type ThinkingModels } from '../fixtures/models.js';

const TEMPLATES = join(ROOT, 'build', 'llama.cpp', 'models', 'templates');
const ASK = [{ role: 'user', content: 'Why is the sky blue?' }];
const REASONING = 'Light scatters.';
const ANSWER = 'Rayleigh scattering.';

/**
 * Templates whose reply does not follow `start reasoning end answer` as text, each written in its
 * own syntax (after the generation prompt), and the variables it needs to think at all.
 */
const OWN_SYNTAX: Record<string, { reply?: string; reasoning?: string; kwargs?: Record<string, unknown> }> = {
  // harmony: the analysis channel, then the final one
  'openai-gpt-oss-120b.jinja': {
    reply: `<|channel|>analysis<|message|>${REASONING}<|end|><|start|>assistant<|channel|>final<|message|>${ANSWER}`,
  },
  // the answer is a text block after the thinking
  'Cohere2MoE.jinja': { reply: `${REASONING}<|END_THINKING|><|START_TEXT|>${ANSWER}<|END_TEXT|>` },
  'CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja': {
    reply: `<|START_THINKING|>${REASONING}<|END_THINKING|><|START_RESPONSE|>${ANSWER}<|END_RESPONSE|>`,
  },
  // the generation prompt opens the reasoning with words of its own, which llama.cpp's parser
  // keeps in it; a marker ends it
  'Apriel-1.6-15b-Thinker-fixed.jinja': {
    reply: `${REASONING}\n[BEGIN FINAL RESPONSE]\n${ANSWER}`,
    reasoning: `Here are my reasoning steps:\n${REASONING}`,
  },
  // thinking is off unless reasoning_effort says otherwise
  'tencent-Hy3.jinja': { kwargs: { reasoning_effort: 'high' } },
};

/**
 * Templates llama.cpp gives thinking tags but whose reasoning its parser leaves in the content:
 * LFM2's parser takes `<think>` apart only where the template itself holds the tag, and these do
 * not.
 */
const NOT_TAKEN_APART = new Set(['LFM2-8B-A1B.jinja', 'LFM2.5-Instruct.jinja']);

/** The families the issue names: each must be among the templates checked. */
const NAMED = [
  'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja',
  'Qwen-Qwen3-0.6B.jinja',
  'Qwen3.5-4B.jinja',
  'openai-gpt-oss-120b.jinja',
  'google-gemma-4-31B-it.jinja',
  'GLM-4.6.jinja',
  'GLM-4.7-Flash.jinja',
  'Kimi-K2-Thinking.jinja',
];

/** The reply a thinking model writes after this generation prompt, in the template's syntax. */
function constructedReply(file: string, applied: ChatTemplateResult): string {
  const own = OWN_SYNTAX[file]?.reply;
  if (own !== undefined) return own;
  const start = applied.thinkingStartTag;
  const end = applied.thinkingEndTags[0]!;
  // a generation prompt that opens the thinking leaves the model inside it
  const open = applied.generationPrompt.trimEnd().endsWith(start.trimEnd());
  return `${open ? '' : start}${REASONING}${end}${ANSWER}`;
}

function applyNative(
  model: NativeModel,
  template: string,
  extra: { reasoningFormat?: ReasoningFormat; chatTemplateKwargs?: Record<string, unknown> } = {},
): ChatTemplateResult {
  return JSON.parse(
    model.applyChat(JSON.stringify({ messages: ASK, tools: [], toolChoice: 'auto', chatTemplate: template, ...extra })),
  ) as ChatTemplateResult;
}

function parseNative(model: NativeModel, applied: ChatTemplateResult, text: string, reasoningFormat: ReasoningFormat): ParsedChatReply {
  const tokens = model.tokenize(text, false, true);
  const options = {
    format: applied.format,
    parser: applied.parser,
    generationPrompt: applied.generationPrompt,
    preservedTokens: applied.preservedTokens,
    stops: [],
    partial: false,
    reasoningFormat,
  };
  return JSON.parse(model.parseChat(JSON.stringify(options), Int32Array.from(tokens))) as ParsedChatReply;
}

describe("thinking templates: llama.cpp's tags and parser for every template in its bundle", () => {
  let models: ThinkingModels;
  let model: NativeModel;
  before(async () => {
    models = await thinkingModels();
    const { binding } = loadBinding('cpu');
    model = await binding.Model.load(models.target, { gpuLayers: 0 });
  });
  after(() => model.dispose());

  const files = readdirSync(TEMPLATES)
    .filter((f) => f.endsWith('.jinja'))
    .sort();

  test('the bundle holds the families people run, and llama.cpp reports thinking tags for each', () => {
    for (const file of NAMED) {
      assert.ok(files.includes(file), `${file} is in llama.cpp's bundle`);
      const applied = applyNative(model, readFileSync(join(TEMPLATES, file), 'utf8'));
      assert.equal(applied.supportsThinking, true, `${file}: supportsThinking`);
      assert.ok(applied.thinkingStartTag.length > 0 && applied.thinkingEndTags.length > 0, `${file}: thinking tags`);
    }
  });

  for (const file of files) {
    test(`${file}: a reply's reasoning goes to reasoningContent (auto, deepseek) or stays in the content (none)`, () => {
      const template = readFileSync(join(TEMPLATES, file), 'utf8');
      const kwargs = OWN_SYNTAX[file]?.kwargs;
      const applied = applyNative(model, template, kwargs ? { chatTemplateKwargs: kwargs } : {});
      if (applied.thinkingEndTags.length === 0) {
        // no thinking as llama.cpp reads this template (muse-glimmer thinks to a recipient, untagged)
        assert.equal(applied.thinkingStartTag, '', `${file}: no end tag, no start tag`);
        return;
      }
      const reply = constructedReply(file, applied);
      if (NOT_TAKEN_APART.has(file)) {
        const parsed = parseNative(model, applied, reply, 'auto');
        assert.deepEqual([parsed.reasoningContent, parsed.content], ['', reply], `${file}: the reply is content whole`);
        return;
      }
      const reasoning = OWN_SYNTAX[file]?.reasoning ?? REASONING;
      for (const format of ['auto', 'deepseek'] as const) {
        const withFormat = applyNative(model, template, { reasoningFormat: format, ...(kwargs ? { chatTemplateKwargs: kwargs } : {}) });
        const parsed = parseNative(model, withFormat, reply, format);
        assert.equal(parsed.reasoningContent.trim(), reasoning, `${file} (${format}): the reasoning, from ${JSON.stringify(reply)}`);
        assert.equal(parsed.content.trim(), ANSWER, `${file} (${format}): the answer alone`);
      }
      const inline = applyNative(model, template, { reasoningFormat: 'none', ...(kwargs ? { chatTemplateKwargs: kwargs } : {}) });
      const parsed = parseNative(model, inline, reply, 'none');
      assert.equal(parsed.reasoningContent, '', `${file} (none): nothing taken apart`);
      assert.ok(
        parsed.content.includes(REASONING) && parsed.content.includes(ANSWER),
        `${file} (none): reasoning and answer in the content`,
      );
    });
  }
});

describe('thinking through the engine: the thinking models', () => {
  let models: ThinkingModels;
  let engine: EngineClient;
  const ids: Record<'target' | 'qwen3' | 'deepseekR1', string> = { target: '', qwen3: '', deepseekR1: '' };
  before(async () => {
    models = await thinkingModels();
    engine = EngineClient.start({ testHooks: true });
    for (const key of Object.keys(ids) as (keyof typeof ids)[]) {
      ids[key] = (await engine.call('loadModel', { path: models[key], gpuLayers: 0 })).modelId;
    }
  });
  after(() => engine.close());

  const apply = (modelId: string, extra: { enableThinking?: boolean; chatTemplateKwargs?: Record<string, unknown> } = {}) =>
    engine.call('applyChat', { modelId, messages: ASK, tools: [], toolChoice: 'auto', ...extra });

  test('Qwen 3.5, Qwen 3 and DeepSeek-R1: supportsThinking and the tags, <think> and </think>', async () => {
    for (const key of Object.keys(ids) as (keyof typeof ids)[]) {
      const applied = await apply(ids[key]);
      assert.equal(applied.supportsThinking, true, key);
      assert.equal(applied.thinkingStartTag, '<think>', key);
      assert.equal(applied.thinkingEndTags[0], '</think>', key);
    }
  });

  test('DeepSeek-R1 (its template reads enable_thinking): on or absent keeps <think> open, off closes it as the template does', async () => {
    const absent = await apply(ids.deepseekR1);
    const on = await apply(ids.deepseekR1, { enableThinking: true });
    const off = await apply(ids.deepseekR1, { enableThinking: false });
    assert.ok(absent.prompt.endsWith('<｜Assistant｜><think>\n'), JSON.stringify(absent.prompt.slice(-40)));
    assert.equal(on.prompt, absent.prompt);
    assert.ok(off.prompt.endsWith('<｜Assistant｜><think>\n</think>'), JSON.stringify(off.prompt.slice(-40)));
    // chat_template_kwargs' enable_thinking decides, as in llama-server
    const kwargsOff = await apply(ids.deepseekR1, { enableThinking: true, chatTemplateKwargs: { enable_thinking: false } });
    assert.equal(kwargsOff.prompt, off.prompt);
    const kwargsOn = await apply(ids.deepseekR1, { enableThinking: false, chatTemplateKwargs: { enable_thinking: true } });
    assert.equal(kwargsOn.prompt, on.prompt);
  });

  test('Qwen 3: thinking off writes the empty thinking block into the generation prompt', async () => {
    const on = await apply(ids.qwen3);
    const off = await apply(ids.qwen3, { enableThinking: false });
    assert.ok(on.generationPrompt.endsWith('<|im_start|>assistant\n'), JSON.stringify(on.generationPrompt));
    assert.ok(off.generationPrompt.endsWith('<think>\n\n</think>\n\n'), JSON.stringify(off.generationPrompt));
  });

  test('a reply of the Qwen 3.5 target parses into reasoningContent and content through the engine', async () => {
    const applied = await apply(ids.target);
    const text = `${REASONING}</think>\n\n${ANSWER}`;
    const tokens = await engine.call('tokenize', { modelId: ids.target, text, addSpecial: false, parseSpecial: true });
    const common = {
      modelId: ids.target,
      tokens,
      format: applied.format,
      parser: applied.parser,
      generationPrompt: applied.generationPrompt,
      preservedTokens: applied.preservedTokens,
      stops: [],
      partial: false,
    };
    const parsed = await engine.call('parseChat', common);
    assert.deepEqual([parsed.reasoningContent.trim(), parsed.content.trim()], [REASONING, ANSWER]);
    // unfinished: the reasoning so far, no content yet
    const partial = await engine.call('tokenize', { modelId: ids.target, text: 'Light sca', addSpecial: false, parseSpecial: true });
    const streaming = await engine.call('parseChat', { ...common, tokens: partial, partial: true });
    assert.deepEqual([streaming.reasoningContent, streaming.content], ['Light sca', '']);
  });

  test('bad thinking inputs are refused in words', async () => {
    await assert.rejects(apply(ids.deepseekR1, { chatTemplateKwargs: { enable_thinking: 'no' } }), /enable_thinking must be a boolean/);
  });
});
