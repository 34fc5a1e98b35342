// The OpenAI-compatible requests `power serve` accepts (/v1/chat/completions, /v1/completions):
// the fields llama-server, LM Studio and Ollama take, plus Power's own optional `strategy` (one or
// a chain), `draft`, `k`, `s`, `fr_vocab`, `p_min`, `adaptive_k` and `profile`. Unknown fields are ignored, as those servers do; fields that
// would change the answer and cannot be honoured (n > 1) are refused. Tools: OpenAI's `tools`,
// `tool_choice` and `parallel_tool_calls`, tool results as `role: "tool"` messages.
// Structured output: OpenAI's `response_format` and llama-server's `json_schema` and `grammar`.
// Thinking models, as llama-server: `reasoning_format`, `chat_template_kwargs` (enable_thinking),
// `thinking_budget_tokens` (or `reasoning_budget_tokens`) and `thinking_budget_message` (or
// `reasoning_budget_message`), and an assistant turn's `reasoning_content` given back.
import { z } from 'zod';

import { PowerError } from '../../contract/api/errors.js';
import { LOGPROBS_MAX } from '../../contract/engine-types.js';
import { K_MAX } from '../../contract/profile.js';
import { JSON_OBJECT_SCHEMA } from '../../service/reply-steps.js';
import { strategyList, strategyListProblem } from '../../contract/strategies.js';
import type { ChatMessage } from '../../chat/template.js';
import type { ToolUse } from '../../service/tool-calls.js';
import type { ChatThinking } from '../../service/completions.js';
import type { PromptMessage } from '../../service/conversation.js';
import { imageBytes, ImagePart, MEDIA_MARKER } from './images.js';

const TextPart = z.object({ type: z.literal('text'), text: z.string() });

function JsonSchemaObject() {
  return z.record(z.string(), z.unknown(), { error: 'a JSON schema must be an object' });
}
const JsonSchema = JsonSchemaObject();

/** a call the assistant made, as a client sends it back in the conversation */
const ToolCall = z.object({
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

export const OpenAiMessage = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z
    .union([
      z.string(),
      z.array(z.union([TextPart, ImagePart], { error: 'a content part is {type: "text", text} or {type: "image_url", image_url: {url}}' })),
    ])
    .nullable()
    .optional(),
  /** an assistant's calls */
  tool_calls: z.array(ToolCall).nullable().optional(),
  /** a tool message: the call it answers */
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  /** an assistant's thinking, given back as llama-server returned it (the template keeps or drops it) */
  reasoning_content: z.string().nullable().optional(),
});
export type OpenAiMessage = z.infer<typeof OpenAiMessage>;

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** a function the model may call: OpenAI's tools entry */
const Tool = z.object({
  type: z.literal('function', { error: 'tools[].type must be "function"' }),
  function: z.object({
    name: z.string().regex(FUNCTION_NAME, { error: 'a function name is 1-64 letters, digits, _ or -' }),
    description: z.string().optional(),
    parameters: JsonSchemaObject().optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
export type Tool = z.infer<typeof Tool>;

const ToolChoice = z.union(
  [z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) })],
  { error: 'tool_choice must be "auto", "none", "required" or {type: "function", function: {name}}' },
);

/** OpenAI's response_format; llama-server also takes a `schema` on json_object */
const ResponseFormat = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object'), schema: JsonSchema.optional() }),
    z.object({
      type: z.literal('json_schema'),
      json_schema: z.object({
        name: z.string().optional(),
        description: z.string().optional(),
        schema: JsonSchema.optional(),
        /** always kept: the grammar admits only what the schema describes */
        strict: z.boolean().nullable().optional(),
      }),
    }),
  ],
  { error: 'response_format.type must be "text", "json_object" or "json_schema"' },
);

const Stop = z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullable();

const common = {
  model: z.string().min(1),
  max_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
  /** 0 (the default here) is greedy */
  temperature: z.number().min(0).max(100).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  seed: z.number().int().min(0).max(0xffffffff).nullable().optional(),
  /** llama-server's field: true samples on llama.cpp's backend samplers, false on the CPU; absent: auto */
  backend_sampling: z.boolean().nullable().optional(),
  stop: Stop.optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  n: z.literal(1, { error: 'n must be 1: Power writes one reply per request' }).nullable().optional(),
  presence_penalty: z.literal(0, { error: 'presence_penalty is not supported (only 0)' }).nullable().optional(),
  frequency_penalty: z.literal(0, { error: 'frequency_penalty is not supported (only 0)' }).nullable().optional(),
  response_format: ResponseFormat.nullable().optional(),
  /** llama-server's: a JSON schema the reply follows */
  json_schema: JsonSchema.nullable().optional(),
  /** llama-server's: a GBNF grammar the reply follows */
  grammar: z.string().nullable().optional(),
  // Power's own
  /** one strategy, or a chain as llama.cpp's --spec-type writes it ("ngram-mod,mtp": the first that drafts wins the round) */
  strategy: z
    .string()
    .superRefine((text, ctx) => {
      const problem = strategyListProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform((text) => strategyList(text))
    .optional(),
  /** FR: the MTP head drafts among the first N tokens (spec_mtp_fr_vocab_size) */
  fr_vocab: z.number().int().min(1).optional(),
  /** a draft stops where the draft's top-1 probability falls under this (spec_p_min) */
  p_min: z.number().min(0).max(1).optional(),
  /** shorter drafts after rejections (spec_adaptive_k) */
  adaptive_k: z.boolean().optional(),
  /** a draft model: its library name */
  draft: z.string().min(1).optional(),
  k: z.number().int().min(1).max(K_MAX).optional(),
  s: z.number().int().min(0).max(K_MAX).optional(),
  /** a profile id or name (balanced, peak, autoregressive, or one of the user's) */
  profile: z.string().min(1).optional(),
};

const BudgetTokens = z
  .number({ error: 'a thinking budget is a whole number of tokens (-1: no limit)' })
  .int({ error: 'a thinking budget is a whole number of tokens (-1: no limit)' })
  .min(-1, { error: 'a thinking budget is a whole number of tokens (-1: no limit)' })
  .max(1_000_000)
  .nullable()
  .optional();
const BudgetMessage = z.string().max(10_000).nullable().optional();

export const ChatCompletionRequest = z.object({
  ...common,
  messages: z.array(OpenAiMessage).min(1),
  /** functions the model may call (rendered and parsed with the model's chat template, as llama-server does) */
  tools: z.array(Tool).max(128).nullable().optional(),
  tool_choice: ToolChoice.nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_completion_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
  /** the log-probability of each token of the reply (from the target's row it was drawn from) */
  logprobs: z.boolean().nullable().optional(),
  /** with logprobs: the row's N most likely tokens too */
  top_logprobs: z.number().int().min(0).max(LOGPROBS_MAX).nullable().optional(),
  /** llama-server's: 'none' leaves a thinking model's reasoning in the content; 'deepseek' and 'auto' (the default) give it as reasoning_content */
  reasoning_format: z
    .enum(['none', 'deepseek', 'auto'], { error: 'reasoning_format must be "none", "deepseek" or "auto"' })
    .nullable()
    .optional(),
  /** llama-server's: more variables for the chat template (enable_thinking a boolean) */
  chat_template_kwargs: z
    .record(z.string(), z.unknown(), { error: 'chat_template_kwargs must be an object' })
    .superRefine((kwargs, ctx) => {
      if (kwargs.enable_thinking !== undefined && typeof kwargs.enable_thinking !== 'boolean') {
        ctx.addIssue({ code: 'custom', message: 'enable_thinking must be a boolean', path: ['enable_thinking'] });
      }
    })
    .nullable()
    .optional(),
  /** llama-server's: the most tokens the thinking may take before the budget ends it (-1: no limit) */
  thinking_budget_tokens: BudgetTokens,
  /** llama-server's other name for thinking_budget_tokens */
  reasoning_budget_tokens: BudgetTokens,
  /** llama-server's: text written before the end of the thinking that the budget forces */
  thinking_budget_message: BudgetMessage,
  /** llama-server's other name for thinking_budget_message */
  reasoning_budget_message: BudgetMessage,
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export const CompletionRequest = z.object({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()).length(1, { error: 'prompt must be one string: Power writes one reply per request' })]),
  echo: z.literal(false, { error: 'echo is not supported' }).nullable().optional(),
  /** the legacy API's: the log-probability of each token and of the row's N most likely tokens */
  logprobs: z.number().int().min(0).max(LOGPROBS_MAX).nullable().optional(),
});
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** How many top log-probabilities per token the request asks for (undefined: none at all). */
export function logprobsAsked(r: ChatCompletionRequest | CompletionRequest): number | undefined {
  if ('messages' in r) {
    if (r.top_logprobs != null && r.logprobs !== true) throw new PowerError('bad-input', 'top_logprobs needs logprobs: true');
    return r.logprobs === true ? (r.top_logprobs ?? 0) : undefined;
  }
  return r.logprobs ?? undefined;
}

/** what constrains the reply: a GBNF grammar or a JSON schema (as JSON text), or nothing */
export type OutputConstraint = { grammar: string } | { jsonSchema: string } | Record<string, never>;

/**
 * The request's constraint, as llama-server reads the same fields: `response_format` json_schema
 * replaces `json_schema`, json_object takes its own `schema`, else `json_schema`, else any
 * object; a grammar together with a schema is refused.
 */
export function outputConstraint(r: Pick<ChatCompletionRequest, 'response_format' | 'json_schema' | 'grammar'>): OutputConstraint {
  let schema = r.json_schema ?? null;
  const format = r.response_format ?? null;
  if (format?.type === 'json_object') schema = format.schema ?? schema ?? JSON_OBJECT_SCHEMA;
  if (format?.type === 'json_schema') schema = format.json_schema.schema ?? {};
  const grammar = r.grammar ?? '';
  if (schema !== null && grammar !== '') {
    throw new PowerError('bad-input', 'give a grammar or a JSON schema (json_schema, response_format), not both');
  }
  if (schema !== null) return { jsonSchema: JSON.stringify(schema) };
  return grammar !== '' ? { grammar } : {};
}

/**
 * The text of a message whose content may be a list of parts: the parts joined with a line
 * break, as llama-server joins them for a template that takes text content (a '\n' before a part
 * once there is text; test/model/chat-prompt-matches-llama-server.test.ts checks it), an image
 * part as the media marker.
 */
export function messageText(message: OpenAiMessage): string {
  if (message.content == null) return '';
  if (typeof message.content === 'string') return message.content;
  let text = '';
  for (const part of message.content) text += (text === '' ? '' : '\n') + (part.type === 'text' ? part.text : MEDIA_MARKER);
  return text;
}

/** The images of a request's messages, in the order their markers come in the prompt. */
export function messageImages(messages: readonly OpenAiMessage[]): Uint8Array<ArrayBuffer>[] {
  const images: Uint8Array<ArrayBuffer>[] = [];
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content) if (part.type === 'image_url') images.push(imageBytes(part));
  }
  return images;
}

/**
 * A request's messages as the chat template takes them ('developer' is OpenAI's newer name for
 * the system role); an assistant's reasoning_content goes back with it.
 */
export function chatMessages(messages: readonly OpenAiMessage[]): PromptMessage[] {
  return messages.map((m) => {
    if (m.role === 'tool') throw new PowerError('bad-input', 'a tool message goes through the tool-aware template (toolUse)');
    const message: ChatMessage = { role: m.role === 'developer' ? 'system' : m.role, content: messageText(m) };
    return m.role === 'assistant' && m.reasoning_content ? { ...message, reasoning_content: m.reasoning_content } : message;
  });
}

/**
 * What the request asks of a thinking template, as llama-server reads the same fields:
 * enable_thinking from chat_template_kwargs (true when absent), the budget (-1: none) under
 * either name (both given must agree), its message.
 */
export function chatThinking(r: ChatCompletionRequest): ChatThinking {
  const kwargs = r.chat_template_kwargs ?? undefined;
  const budgets = [r.thinking_budget_tokens, r.reasoning_budget_tokens].filter((b) => b != null);
  if (budgets.length === 2 && budgets[0] !== budgets[1]) {
    throw new PowerError('bad-input', 'thinking_budget_tokens and reasoning_budget_tokens name the same budget: give one');
  }
  const messages = [r.thinking_budget_message, r.reasoning_budget_message].filter((m) => m != null);
  if (messages.length === 2 && messages[0] !== messages[1]) {
    throw new PowerError('bad-input', 'thinking_budget_message and reasoning_budget_message name the same message: give one');
  }
  const budget = budgets[0];
  const enable = kwargs?.enable_thinking;
  return {
    ...(typeof enable === 'boolean' ? { enableThinking: enable } : {}),
    ...(kwargs ? { chatTemplateKwargs: kwargs } : {}),
    ...(r.reasoning_format != null ? { reasoningFormat: r.reasoning_format } : {}),
    ...(budget !== undefined && budget >= 0 ? { budget } : {}),
    ...(messages[0] !== undefined ? { budgetMessage: messages[0] } : {}),
  };
}

/**
 * The tools of a chat request as llama.cpp's template application takes them, or null when the
 * request has none and its conversation holds no tool call or result (the plain template path
 * renders it then). A named tool_choice is that one function, required (llama-server takes
 * only the three words); a name that is not among the tools is refused.
 */
export function toolUse(r: ChatCompletionRequest): ToolUse | null {
  const tools = r.tools ?? [];
  const inConversation = r.messages.some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0);
  if (
    (tools.length > 0 || inConversation) &&
    r.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type !== 'text'))
  ) {
    throw new PowerError('unsupported', 'images cannot go with tools yet: send the images without tools');
  }
  if (tools.length === 0 && !inConversation) {
    if (r.tool_choice != null && r.tool_choice !== 'none' && r.tool_choice !== 'auto') {
      throw new PowerError('bad-input', 'tool_choice asks for a tool call, but the request gives no tools');
    }
    return null;
  }
  let choice = r.tool_choice ?? 'auto';
  let offered = tools;
  if (typeof choice === 'object') {
    const name = choice.function.name;
    offered = tools.filter((t) => t.function.name === name);
    if (offered.length === 0) {
      throw new PowerError(
        'bad-input',
        `tool_choice names '${name}', which is not among the tools (${tools.map((t) => t.function.name).join(', ') || 'none'})`,
      );
    }
    choice = 'required';
  }
  return {
    // (text parts only: images were refused above)
    messages: r.messages.map((m) => ({ ...m, content: Array.isArray(m.content) ? m.content.filter((p) => p.type === 'text') : m.content })),
    tools: offered,
    toolChoice: choice,
    ...(r.parallel_tool_calls != null ? { parallelToolCalls: r.parallel_tool_calls } : {}),
  };
}
