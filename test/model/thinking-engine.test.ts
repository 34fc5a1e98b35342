// The engine side of thinking. applyChat renders a template with llama-server's thinking inputs
// (enable_thinking true unless told otherwise, chat_template_kwargs, reasoning_format) and reports
// the template's thinking tags; parseChat takes a reply's reasoning apart with the template's own
// parser, for every template in llama.cpp's bundle that llama.cpp gives thinking tags (the
// native applyChat takes a template in place of the model's, as llama-server's
// --chat-template-file does, so one model serves them all). The reasoning budget is llama.cpp's
// sampler: once the thinking has taken its tokens it forces the message and the end tag, on the
// same token in a speculative run and its autoregressive control.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type NativeGenerateResult, type SamplingOptions } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { ROOT } from '../../app/paths.js';
import { loadBinding, type NativeModel } from '../../app/engine-host/binding.js';
import { EngineClient } from '../../app/engine/client.js';
import type { ChatTemplateResult, ParsedChatReply, ReasoningFormat } from '../../app/engine/protocol.js';
import { assertDraftedSameAsControl, type ReportedRun } from '../fixtures/drafting.js';
import { syntheticModels, thinkingModels, type ThinkingModels } from '../fixtures/models.js';

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

type Budget = NonNullable<SamplingOptions['reasoningBudget']>;

interface BudgetRun extends ReportedRun {
  tokens: number[];
  stats: { proposed: number; accepted: number };
  result: NativeGenerateResult;
}

const SEEDED = { temperature: 0.8, seed: 42 } as const;
const MESSAGE = ' Time is up.';

describe('the reasoning budget: the forced end falls on the same token under every proposer', () => {
  let models: ThinkingModels;
  let engine: EngineClient;
  let target: string;
  let draft: string;
  let hybrid: string;
  let qwen3: string;
  before(async () => {
    models = await thinkingModels();
    engine = EngineClient.start();
    target = (await engine.call('loadModel', { path: models.target, gpuLayers: 0 })).modelId;
    draft = (await engine.call('loadModel', { path: models.draft, gpuLayers: 0 })).modelId;
    hybrid = (await engine.call('loadModel', { path: models.hybrid, gpuLayers: 0, loadMtp: true })).modelId;
    qwen3 = (await engine.call('loadModel', { path: models.qwen3, gpuLayers: 0 })).modelId;
  });
  after(() => engine.close());

  const tokenize = (modelId: string, text: string) =>
    engine.call('tokenize', { modelId, text, addSpecial: false, parseSpecial: true }).then((t) => [...t]);

  /** the chat's prompt and the budget as the service builds them from applyChat (prefill: the generation prompt's tokens) */
  async function chat(modelId: string, content: string, tokens: number, message = MESSAGE) {
    const applied = await engine.call('applyChat', { modelId, messages: [{ role: 'user', content }], tools: [], toolChoice: 'auto' });
    const budget: Budget = {
      tokens,
      start: applied.thinkingStartTag,
      ends: applied.thinkingEndTags,
      message,
      prefill: await tokenize(modelId, applied.generationPrompt),
    };
    return { prompt: await tokenize(modelId, applied.prompt), budget, applied };
  }

  async function run(
    modelId: string,
    session: { strategy: Strategy; fallbacks?: readonly Strategy[]; k?: number; s?: number; draftModelId?: string },
    prompt: number[],
    sampling: Partial<SamplingOptions>,
    maxTokens = 48,
  ): Promise<BudgetRun> {
    const { sessionId } = await engine.call('createSession', {
      modelId,
      contextSize: 1024,
      threads: 1,
      ...session,
      fallbacks: [...(session.fallbacks ?? [])],
    });
    const requestId = randomUUID();
    const tokens: number[] = [];
    const stats = { proposed: 0, accepted: 0 };
    const stop = engine.onRound(requestId, (r) => {
      tokens.push(...r.tokens.map((t) => t.id));
      stats.proposed += r.proposed;
      stats.accepted += r.accepted;
    });
    try {
      const result = await engine.call('generate', {
        sessionId,
        requestId,
        prompt: Int32Array.from(prompt),
        maxTokens,
        sampling: { ...SAMPLING_DEFAULTS, ...sampling },
      });
      return { tokens, stats, result, digest: tokens.join(',') };
    } finally {
      stop();
      await engine.call('disposeSession', { sessionId });
    }
  }

  const indexOf = (tokens: number[], seq: number[]) => tokens.findIndex((_t, i) => seq.every((s, j) => tokens[i + j] === s));

  for (const [label, sampling] of [
    ['greedy', {}],
    ['seeded', SEEDED],
  ] as const) {
    test(`${label}: a budget of N tokens forces the message and </think> as the reply's tokens N-1.., then the answer follows`, async () => {
      const N = 8;
      const { prompt, budget } = await chat(target, 'Why is the sky blue?', N);
      // Qwen 3.5's generation prompt opens the thinking (<think>\n): its "\n" is the budget's first token
      const afterStart = budget.prefill.length - 1 - budget.prefill.lastIndexOf((await tokenize(target, '<think>'))[0]!);
      assert.equal(afterStart, 1);
      const forced = [...(await tokenize(target, MESSAGE)), ...(await tokenize(target, '</think>'))];
      assert.equal(forced.at(-1), 151668, '</think> is one token');
      const free = await run(target, { strategy: 'none' }, prompt, sampling);
      const budgeted = await run(target, { strategy: 'none' }, prompt, { ...sampling, reasoningBudget: budget });
      assert.equal(indexOf(free.tokens, forced), -1, 'unbudgeted, the model never writes the forced end');
      const at = N - afterStart;
      assert.deepEqual(budgeted.tokens.slice(0, at), free.tokens.slice(0, at), 'the thinking up to the budget is the free run');
      assert.deepEqual(budgeted.tokens.slice(at, at + forced.length), forced, 'the message and </think> at the budget');
      assert.ok(budgeted.tokens.length > at + forced.length, 'the answer follows the forced end');
      assert.equal(budgeted.result.reasoningForced, 1);
      assert.equal(free.result.reasoningForced, undefined);
      // the forced end parses as the thinking's end (the random answer after it is left out: it
      // need not read as anything)
      const applied = await engine.call('applyChat', {
        modelId: target,
        messages: [{ role: 'user', content: 'x' }],
        tools: [],
        toolChoice: 'auto',
      });
      const parsed = await engine.call('parseChat', {
        modelId: target,
        tokens: Int32Array.from(budgeted.tokens.slice(0, at + forced.length)),
        format: applied.format,
        parser: applied.parser,
        generationPrompt: applied.generationPrompt,
        preservedTokens: applied.preservedTokens,
        stops: [],
        partial: false,
      });
      assert.ok(parsed.reasoningContent.endsWith(MESSAGE), JSON.stringify(parsed.reasoningContent.slice(-40)));
      assert.equal(parsed.content, '');
    });

    test(`${label}: draft model, n-gram, MTP and a chain under a budget equal their autoregressive controls and draft`, async () => {
      const N = 12;
      const plain = await chat(target, 'Why is the sky blue?', N);
      // the n-gram proposer finds the forced message in a prompt that repeats it
      const repetitive = await chat(target, `Time is up.${MESSAGE}${MESSAGE}${MESSAGE} Think, then answer.`, N);
      const mtp = await chat(hybrid, 'Why is the sky blue?', N);
      const cases = [
        ['draft-model K4', target, { strategy: 'draft-model', k: 4, draftModelId: draft }, plain],
        ['ngram K4', target, { strategy: 'ngram', k: 4 }, repetitive],
        ['mtp K3', hybrid, { strategy: 'mtp', k: 3, s: 3 }, mtp],
        ['ngram then draft-model K4', target, { strategy: 'ngram', fallbacks: ['draft-model'], k: 4, draftModelId: draft }, repetitive],
      ] as const;
      for (const [name, modelId, session, { prompt, budget }] of cases) {
        const s = { ...sampling, reasoningBudget: budget };
        const control = await run(modelId, { strategy: 'none' }, prompt, s);
        const spec = await run(modelId, session, prompt, s);
        assert.equal(control.result.reasoningForced, 1, `${name}: the control's thinking was ended by the budget`);
        assert.equal(spec.result.reasoningForced, 1, `${name}: and the speculative run's`);
        assertDraftedSameAsControl(spec, control, { label: `${name}, ${label}, budget ${N}` });
      }
    });

    test(`${label}: a grammar that opens and closes the thinking (Qwen 3), with a budget and without, equals its control`, async () => {
      // the random-weight model thinks only where the grammar makes it: <think>, up to 64
      // characters without '<', </think>, then the answer (the forced message must fit the grammar)
      const grammar = 'root ::= <think> [^<]{1,64} </think> [^<]*';
      for (const N of [2, 1000]) {
        const { prompt, budget } = await chat(qwen3, 'Why is the sky blue?', N);
        assert.deepEqual(budget.prefill.includes(151667), false, "Qwen 3's generation prompt leaves the thinking to the model");
        const s = { ...sampling, grammar, reasoningBudget: budget };
        const control = await run(qwen3, { strategy: 'none' }, prompt, s);
        const spec = await run(qwen3, { strategy: 'draft-model', k: 4, draftModelId: draft }, prompt, s);
        assert.equal(control.tokens[0], 151667, 'the reply opens its thinking');
        assert.ok(control.tokens.includes(151668), 'and closes it');
        assert.equal(control.result.reasoningForced, N === 2 ? 1 : 0, `budget ${N}: forced only when the thinking outgrows it`);
        assertDraftedSameAsControl(spec, control, { label: `draft-model K4 with a grammar, ${label}, budget ${N}` });
      }
    });
  }

  test("llama.cpp's draft artifacts (EAGLE-3, DFlash, DSpark) under a budget equal their autoregressive controls and draft", async () => {
    // the artifacts read the synthetic target's hidden states; its vocabulary has no <think>
    // token, so the tags are several tokens each and the prompt's tail opens the thinking (the
    // budget's prefill), as a template's generation prompt would
    const set = await syntheticModels();
    const synthetic = (await engine.call('loadModel', { path: set['target.gguf'], gpuLayers: 0 })).modelId;
    try {
      const open = await tokenize(synthetic, '<think>');
      const prompt = [...(await tokenize(synthetic, 'Why is the sky blue? Think first.')), ...open];
      const budget: Budget = { tokens: 10, start: '<think>', ends: ['</think>'], message: MESSAGE, prefill: open };
      for (const [strategy, file] of [
        ['eagle3', 'eagle3-close.gguf'],
        ['dflash', 'dflash-close.gguf'],
        ['dspark', 'dspark-close.gguf'],
      ] as const) {
        const artifact = (await engine.call('loadModel', { path: set[file], gpuLayers: 0 })).modelId;
        try {
          for (const [label, sampling] of [
            ['greedy', {}],
            ['seeded', SEEDED],
          ] as const) {
            const s = { ...sampling, reasoningBudget: budget };
            const control = await run(synthetic, { strategy: 'none' }, prompt, s);
            const spec = await run(synthetic, { strategy, k: 3, s: 3, draftModelId: artifact }, prompt, s);
            assert.equal(control.result.reasoningForced, 1, `${strategy}, ${label}: the control's thinking was ended by the budget`);
            assert.equal(spec.result.reasoningForced, 1, `${strategy}, ${label}: and the speculative run's`);
            assertDraftedSameAsControl(spec, control, { label: `${strategy} K3, ${label}, budget 10` });
          }
        } finally {
          await engine.call('disposeModel', { modelId: artifact });
        }
      }
    } finally {
      await engine.call('disposeModel', { modelId: synthetic });
    }
  });

  test('bad budgets are refused in words: on the backend, and without tags', async () => {
    const { prompt, budget } = await chat(target, 'Why is the sky blue?', 8);
    await assert.rejects(
      run(target, { strategy: 'none' }, prompt, { reasoningBudget: budget, path: 'backend' }),
      /a reasoning budget is applied on the CPU only/,
    );
    await assert.rejects(
      run(target, { strategy: 'none' }, prompt, { reasoningBudget: { ...budget, start: '' } }),
      /reasoningBudget\.start/,
    );
    await assert.rejects(run(target, { strategy: 'none' }, prompt, { reasoningBudget: { ...budget, ends: [] } }), /reasoningBudget\.ends/);
  });
});
