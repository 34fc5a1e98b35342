// Tool calls in a chat reply. Where the model's chat template renders tools (llama.cpp finds its
// call syntax), the prompt, the grammar that forces a well-formed call and the parser of the
// reply are llama.cpp's own, as llama-server uses them (the engine's applyChat and parseChat).
// Where it does not (llama.cpp's ChatML fallback, or a template without tools), llama-server
// would drop the tools without a word; Power answers in JSON instead: the tools are described in
// a system message and a JSON schema makes the reply either a call or a response (llama.cpp's
// former "generic" format). The template is applied the one way every prompt of a model's own
// template is (Conversation.applyTemplate), and a reply is read by the template's parser with
// its reasoning told apart (app/service/thinking.ts).
import { randomUUID } from 'node:crypto';

import { PowerError } from '../contract/api/errors.js';
import type { StopReason } from '../contract/engine-types.js';
import type { ChatTemplateResult, ReasoningFormat } from '../engine/protocol.js';
import type { EngineClient } from '../engine/client.js';
import type { ChatMessage } from '../chat/template.js';
import type { Conversation, TemplateOptions } from './conversation.js';
import { replyParser } from './thinking.js';

/** what a chat request asks about tools, in OpenAI's forms */
export interface ToolUse {
  /** OpenAI's messages, tool calls and results included */
  messages: readonly OpenAiLikeMessage[];
  tools: readonly { type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  toolChoice: 'auto' | 'none' | 'required';
  parallelToolCalls?: boolean;
}

interface OpenAiLikeMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | readonly { type: 'text'; text: string }[] | null;
  tool_calls?: readonly { id?: string; function: { name: string; arguments: string } }[] | null;
  tool_call_id?: string;
  /** an earlier reply's thinking, given back (llama-server's reasoning_content) */
  reasoning_content?: string | null;
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as OpenAI sends it */
  arguments: string;
}

/** a reply as the client sees it: its text and its calls, and its reasoning where the template's parser tells it apart */
export interface ReadReply {
  content: string;
  toolCalls: ToolCall[];
  reasoning?: string;
}

/** how far a streamed reply moved: new text, and per call what is new (name on first sight) */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

/** How a reply with tools is prompted, constrained and read (`stops`: the request's stop strings). */
export interface ToolPlan {
  /** the prompt as text (tokenized as llama-server tokenizes it), or as messages for the plain template path */
  prompt: { kind: 'text'; text: string } | { kind: 'messages'; messages: ChatMessage[] };
  stops: string[];
  sampling: { grammar?: string; jsonSchema?: string; grammarLazy?: { patterns: string[]; tokens: number[] }; grammarPrefill?: number[] };
  /** reads the reply so far (partial) or whole: its tokens and their text */
  read(tokens: readonly number[], text: string, partial: boolean): Promise<ReadReply>;
  /** what the evidence calls the format: llama.cpp's format name, or 'generic JSON' */
  format: string;
  /** llama.cpp's application of the model's template, where the plan is its (the thinking's tags, the generation prompt) */
  template?: ChatTemplateResult;
}

function text(content: OpenAiLikeMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => p.text).join('\n');
}

/** ids stay the same from one partial read to the next: the parser's, else one drawn per position */
function withIds(calls: readonly { name: string; arguments: string; id: string }[], ids: string[]): ToolCall[] {
  return calls.map((c, i) => {
    ids[i] ??= c.id !== '' ? c.id : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    return { id: ids[i]!, name: c.name, arguments: c.arguments };
  });
}

/** The plan for a request with tools on a loaded model (`options`: the template's thinking switch and kwargs, the reasoning format). */
export async function planTools(
  conv: Conversation,
  use: ToolUse,
  stops: readonly string[],
  options: TemplateOptions = {},
): Promise<ToolPlan> {
  const chat = await conv.applyTemplate({
    messages: use.messages,
    tools: use.tools,
    toolChoice: use.toolChoice,
    ...(use.parallelToolCalls !== undefined ? { parallelToolCalls: use.parallelToolCalls } : {}),
    ...options,
  });
  if (chat.templateToolCalls || use.tools.length === 0 || use.toolChoice === 'none')
    return templatePlan(conv.engine, conv.modelId, chat, [...stops, ...chat.additionalStops], options.reasoningFormat);
  return genericPlan(use);
}

/** A plan's prompt tokens and the stop strings that come with them. */
export async function planPrompt(
  engine: EngineClient,
  modelId: string,
  conv: Conversation,
  plan: ToolPlan,
): Promise<{ tokens: number[]; stops: string[] }> {
  if (plan.prompt.kind === 'messages') {
    return { tokens: (await conv.prompt(plan.prompt.messages)).tokens, stops: [...(await conv.stops()), ...plan.stops] };
  }
  // as llama-server tokenizes a chat prompt: special tokens added and parsed
  const tokens = await engine.call('tokenize', { modelId, text: plan.prompt.text, addSpecial: true, parseSpecial: true });
  return { tokens: Array.from(tokens), stops: plan.stops };
}

/**
 * The plan of a reply on the model's own template as llama.cpp applied it: its prompt, grammar
 * (for tools) and parser. A chat without tools takes it too where the reply's reasoning is to be
 * told apart from its answer.
 */
export function templatePlan(
  engine: EngineClient,
  modelId: string,
  chat: ChatTemplateResult,
  stops: readonly string[],
  reasoningFormat?: ReasoningFormat,
): ToolPlan {
  const ids: string[] = [];
  const parse = replyParser(engine, modelId, chat, stops, reasoningFormat);
  return {
    prompt: { kind: 'text', text: chat.prompt },
    stops: chat.additionalStops,
    sampling:
      chat.grammar === ''
        ? {}
        : {
            grammar: chat.grammar,
            ...(chat.grammarLazy ? { grammarLazy: { patterns: chat.triggerPatterns, tokens: chat.triggerTokens } } : {}),
            ...(chat.grammarPrefill.length > 0 ? { grammarPrefill: chat.grammarPrefill } : {}),
          },
    format: chat.formatName,
    template: chat,
    read: async (tokens, _text, partial) => {
      const parsed = await parse(tokens, partial);
      return {
        content: parsed.content,
        toolCalls: withIds(parsed.toolCalls, ids),
        ...(parsed.reasoningContent !== '' ? { reasoning: parsed.reasoningContent } : {}),
      };
    },
  };
}

/** The JSON schema of a generic reply: a call of one of the tools (or several), or, unless required, a response. */
export function genericSchema(use: ToolUse): Record<string, unknown> {
  const call = {
    anyOf: use.tools.map((t) => ({
      type: 'object',
      properties: { name: { const: t.function.name }, arguments: t.function.parameters ?? { type: 'object' } },
      required: ['name', 'arguments'],
      additionalProperties: false,
    })),
  };
  const calls =
    use.parallelToolCalls === true
      ? {
          type: 'object',
          properties: { tool_calls: { type: 'array', items: call, minItems: 1 } },
          required: ['tool_calls'],
          additionalProperties: false,
        }
      : { type: 'object', properties: { tool_call: call }, required: ['tool_call'], additionalProperties: false };
  if (use.toolChoice === 'required') return calls;
  return {
    anyOf: [calls, { type: 'object', properties: { response: { type: 'string' } }, required: ['response'], additionalProperties: false }],
  };
}

function genericSystem(use: ToolUse): string {
  const key =
    use.parallelToolCalls === true
      ? '"tool_calls": [{"name": ..., "arguments": {...}}, ...]'
      : '"tool_call": {"name": ..., "arguments": {...}}';
  const answer = use.toolChoice === 'required' ? '' : ', or {"response": "..."} to answer the user directly';
  return (
    `You can call these tools:\n${JSON.stringify(
      use.tools.map((t) => t.function),
      null,
      2,
    )}\n\n` + `Respond in JSON: {${key}} to call a tool${answer}.`
  );
}

/** the conversation for the plain template path: calls and results written as the generic reply writes them */
function genericMessages(use: ToolUse): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of use.messages) {
    if (m.role === 'tool') {
      out.push({
        role: 'user',
        content: JSON.stringify({ tool_response: { tool_call_id: m.tool_call_id ?? '', content: text(m.content) } }),
      });
    } else if (m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0) {
      const calls = m.tool_calls!.map((c) => ({ name: c.function.name, arguments: parseOr(c.function.arguments) }));
      out.push({ role: 'assistant', content: JSON.stringify(calls.length === 1 ? { tool_call: calls[0] } : { tool_calls: calls }) });
    } else {
      out.push({ role: m.role === 'developer' ? 'system' : m.role, content: text(m.content) });
    }
  }
  const system = genericSystem(use);
  if (out[0]?.role === 'system') out[0] = { role: 'system', content: `${out[0].content}\n\n${system}` };
  else out.unshift({ role: 'system', content: system });
  return out;
}

function parseOr(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

function genericPlan(use: ToolUse): ToolPlan {
  const ids: string[] = [];
  return {
    prompt: { kind: 'messages', messages: genericMessages(use) },
    stops: [],
    sampling: { jsonSchema: JSON.stringify(genericSchema(use)) },
    format: 'generic JSON',
    // a JSON reply means nothing until it is whole: a stream gets it at the end
    read: async (_tokens, reply, partial) => (partial ? { content: '', toolCalls: [] } : readGeneric(reply, ids)),
  };
}

/** a whole generic reply: its call(s) or its response; text that is not such JSON (cut by max_tokens) stays text */
export function readGeneric(reply: string, ids: string[] = []): ReadReply {
  const json = parseOr(reply) as { tool_call?: unknown; tool_calls?: unknown; response?: unknown } | string;
  if (typeof json !== 'object' || json === null) return { content: reply, toolCalls: [] };
  if (typeof json.response === 'string') return { content: json.response, toolCalls: [] };
  const calls = Array.isArray(json.tool_calls) ? json.tool_calls : json.tool_call !== undefined ? [json.tool_call] : [];
  const read = calls.flatMap((c) => {
    const call = c as { name?: unknown; arguments?: unknown };
    return typeof call.name === 'string' ? [{ name: call.name, arguments: JSON.stringify(call.arguments ?? {}), id: '' }] : [];
  });
  return read.length > 0 ? { content: '', toolCalls: withIds(read, ids) } : { content: reply, toolCalls: [] };
}

/** what changed between two reads of a streamed reply: the text appended, the reasoning appended (only when some was), and per call its new part */
export function replyDelta(before: ReadReply, now: ReadReply): { content: string; toolCalls: ToolCallDelta[]; reasoning?: string } {
  const content = now.content.startsWith(before.content) ? now.content.slice(before.content.length) : '';
  const was = before.reasoning ?? '';
  const is = now.reasoning ?? '';
  const reasoning = is.startsWith(was) ? is.slice(was.length) : '';
  const toolCalls: ToolCallDelta[] = [];
  now.toolCalls.forEach((call, index) => {
    const old = before.toolCalls[index];
    if (!old) {
      toolCalls.push({ index, id: call.id, name: call.name, arguments: call.arguments });
    } else if (call.arguments.length > old.arguments.length && call.arguments.startsWith(old.arguments)) {
      toolCalls.push({ index, arguments: call.arguments.slice(old.arguments.length) });
    }
  });
  return { content, toolCalls, ...(reasoning !== '' ? { reasoning } : {}) };
}

/** a check the plan's reply must pass before it is sent: a required call that did not come is an error, not a reply */
export function checkRequired(use: ToolUse, reply: ReadReply, text: string, stopReason: StopReason): void {
  // a reply cut short (max_tokens, a full context) may still have been on its way to a call
  if (use.toolChoice === 'required' && reply.toolCalls.length === 0 && (stopReason === 'eos' || stopReason === 'stop')) {
    const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw new PowerError(
      'internal',
      `tool_choice "required": the reply holds no tool call the template's parser reads (${JSON.stringify(shown)})`,
    );
  }
}
