// The OpenAI-compatible endpoints of `power serve`: GET /v1/models, POST /v1/chat/completions,
// POST /v1/completions, whole or streamed as server-sent events ending with `data: [DONE]`.
// Each answer carries the usual `choices` and `usage` plus `power`: the strategy, K, S, the
// digest of the emitted tokens and the evidence under the CLI's stats names.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { SAMPLING_DEFAULTS, type TokenLogprobs } from '../../contract/engine-types.js';
import { PowerError, toApiError, type ApiErrorCode } from '../../contract/api/errors.js';
import {
  ChatCompletionRequest,
  chatMessages,
  chatThinking,
  CompletionRequest,
  logprobsAsked,
  messageImages,
  outputConstraint,
  toolUse,
} from './api.js';
import type { ToolCallDelta } from '../../service/tool-calls.js';
import { chatLogprobs, textLogprobs } from './logprobs.js';
import { describeIssues } from '../../contract/channel/index.js';
import { HttpError, readJsonBody, sendError, sendJson } from '../http-util.js';
import type { CompletionBackend, CompletionInput, CompletionOutput } from './backend.js';

/** ApiError codes as HTTP statuses and OpenAI error types. */
const STATUS: Record<ApiErrorCode, { status: number; type: string }> = {
  'bad-input': { status: 400, type: 'invalid_request_error' },
  unsupported: { status: 400, type: 'invalid_request_error' },
  device: { status: 400, type: 'invalid_request_error' },
  'not-found': { status: 404, type: 'invalid_request_error' },
  busy: { status: 429, type: 'server_error' },
  'engine-crashed': { status: 503, type: 'server_error' },
  cancelled: { status: 503, type: 'server_error' },
  internal: { status: 500, type: 'server_error' },
};

export function httpErrorOf(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const api = toApiError(error);
  const { status, type } = STATUS[api.code];
  return new HttpError(status, api.message, type, api.code);
}

type Kind = 'chat' | 'text';

function completionInput(kind: Kind, body: unknown): { input: CompletionInput; stream: boolean; includeUsage: boolean } {
  const schema = kind === 'chat' ? ChatCompletionRequest : CompletionRequest;
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new HttpError(400, describeIssues(parsed.error));
  const r = parsed.data;
  const stop = r.stop ?? [];
  const maxTokens = ('max_completion_tokens' in r ? r.max_completion_tokens : null) ?? r.max_tokens ?? 512;
  let prompt: CompletionInput['prompt'];
  let thinking: CompletionInput['thinking'];
  if ('messages' in r) {
    const use = toolUse(r);
    prompt = use ? { kind: 'tools', use } : { kind: 'chat', messages: chatMessages(r.messages), images: messageImages(r.messages) };
    thinking = chatThinking(r);
  } else {
    prompt = { kind: 'text', text: typeof r.prompt === 'string' ? r.prompt : r.prompt[0]! };
  }
  const input: CompletionInput = {
    model: r.model,
    prompt,
    maxTokens,
    temperature: r.temperature ?? SAMPLING_DEFAULTS.temperature,
    topP: r.top_p ?? SAMPLING_DEFAULTS.topP,
    samplingPath: r.backend_sampling == null ? 'auto' : r.backend_sampling ? 'backend' : 'cpu',
    ...(r.seed != null ? { seed: r.seed } : {}),
    // ended by the service's one stop-string mechanism (app/service/request.ts)
    stop: typeof stop === 'string' ? [stop] : stop,
    ...outputConstraint(r),
    ...(r.strategy !== undefined ? { strategy: r.strategy[0], fallbacks: r.strategy.slice(1) } : {}),
    ...(r.fr_vocab !== undefined ? { frVocab: r.fr_vocab } : {}),
    ...(r.p_min !== undefined ? { pMin: r.p_min } : {}),
    ...(r.adaptive_k !== undefined ? { adaptiveK: r.adaptive_k } : {}),
    ...(r.draft !== undefined ? { draft: r.draft } : {}),
    ...(r.k !== undefined ? { k: r.k } : {}),
    ...(r.s !== undefined ? { s: r.s } : {}),
    ...(r.profile !== undefined ? { profile: r.profile } : {}),
    ...(thinking ? { thinking } : {}),
  };
  const logprobs = logprobsAsked(r);
  if (logprobs !== undefined) {
    // as llama-server: a streamed reply with tools hands on parsed calls, not tokens
    if (prompt.kind === 'tools' && r.stream === true) throw new HttpError(400, 'logprobs is not supported with tools and stream');
    input.logprobs = logprobs;
  }
  return { input, stream: r.stream === true, includeUsage: r.stream_options?.include_usage === true };
}

/** A cancelled reply (Power stopping; a stop sequence ends it with 'stop') is an error, not an answer. */
function checkNotCancelled(out: CompletionOutput): void {
  if (out.stopReason === 'cancelled') {
    throw new PowerError('cancelled', `the reply was stopped after ${out.completionTokens} tokens (Power is stopping)`);
  }
}

/** 'stop' at the model's end of text or a stop sequence ('tool_calls' when the reply calls tools), else 'length' */
function finishReason(out: CompletionOutput): 'stop' | 'length' | 'tool_calls' {
  if (out.stopReason !== 'eos' && out.stopReason !== 'stop') return 'length';
  return (out.toolReply?.toolCalls.length ?? 0) > 0 ? 'tool_calls' : 'stop';
}

/** OpenAI's form of a reply's calls (a stream's first delta of a call carries its id and name) */
function toolCallsJson(calls: readonly ToolCallDelta[]) {
  return calls.map((c) => ({
    index: c.index,
    ...(c.id !== undefined ? { id: c.id, type: 'function' } : {}),
    function: { ...(c.name !== undefined ? { name: c.name } : {}), arguments: c.arguments },
  }));
}

/** the assistant message of a whole chat reply: its text, its reasoning (llama-server's reasoning_content) when it thought, and its calls when it made any */
function chatMessage(out: CompletionOutput, text: string) {
  const reply = out.toolReply;
  const reasoning = out.reasoning ? { reasoning_content: out.reasoning } : {};
  if (!reply) return { role: 'assistant', content: out.reasoning !== undefined ? out.text : text, ...reasoning };
  const calls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    role: 'assistant',
    content: calls.length > 0 && reply.content === '' ? null : reply.content,
    ...reasoning,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

function usage(out: CompletionOutput) {
  return {
    prompt_tokens: out.promptTokens,
    completion_tokens: out.completionTokens,
    total_tokens: out.promptTokens + out.completionTokens,
  };
}

function power(out: CompletionOutput) {
  return {
    strategy: out.strategy,
    ...out.drafting,
    k: out.k,
    s: out.s,
    digest: out.digest,
    seed: out.seed,
    stopReason: out.stopReason,
    stats: out.stats,
    // with tools: the format the reply was read in (llama.cpp's name, or 'generic JSON')
    ...(out.toolReply ? { toolFormat: out.toolReply.format } : {}),
  };
}

export async function listModels(res: ServerResponse, backend: CompletionBackend): Promise<void> {
  const models = await backend.models();
  sendJson(res, 200, {
    object: 'list',
    data: models.map((m) => ({
      id: m.name,
      object: 'model',
      created: m.created,
      owned_by: 'power',
      ...(m.problem ? { power: { problem: m.problem } } : {}),
    })),
  });
}

/** POST /v1/chat/completions (kind 'chat') and /v1/completions (kind 'text'). */
export async function complete(req: IncomingMessage, res: ServerResponse, backend: CompletionBackend, kind: Kind): Promise<void> {
  const { input, stream, includeUsage } = completionInput(kind, await readJsonBody(req));
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion' : 'text_completion';
  // a client that goes away cancels its request (the engine stops at the next round)
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });

  const asked = input.logprobs !== undefined;
  /** the logprobs field of a choice: the tokens' entries when asked for, else null */
  const logprobsOf = (entries: readonly TokenLogprobs[], offset: number) =>
    !asked ? null : kind === 'chat' ? chatLogprobs(entries) : textLogprobs(entries, offset);

  if (!stream) {
    let text = '';
    const entries: TokenLogprobs[] = [];
    const out = await backend.complete(
      input,
      (piece, progress) => {
        text += piece;
        if (progress.logprobs) entries.push(...progress.logprobs);
      },
      abort.signal,
    );
    checkNotCancelled(out);
    const reason = finishReason(out);
    const choice =
      kind === 'chat'
        ? { index: 0, message: chatMessage(out, text), finish_reason: reason, logprobs: logprobsOf(entries, 0) }
        : { index: 0, text, finish_reason: reason, logprobs: logprobsOf(entries, 0) };
    sendJson(res, 200, { id, object, created, model: out.model, choices: [choice], usage: usage(out), power: power(out) });
    return;
  }

  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
  };
  const event = (data: unknown): void => {
    // the client may be gone (it cancelled by closing): nothing more to send
    if (res.destroyed || res.writableEnded) return;
    start();
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  const chunkObject = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  let written = 0; // characters of the reply sent so far (the legacy logprobs' text_offset)
  const delta = (
    text: string,
    reason: string | null,
    model: string,
    extra: object = {},
    entries: readonly TokenLogprobs[] = [],
    calls: readonly ToolCallDelta[] = [],
    reasoning = '',
  ): void => {
    const logprobs = entries.length > 0 ? logprobsOf(entries, written) : null;
    written += text.length;
    // as llama-server: a thinking reply's deltas carry reasoning_content while it thinks, content after
    const content =
      calls.length > 0 || reasoning !== ''
        ? {
            ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
            ...(text !== '' ? { content: text } : {}),
            ...(calls.length > 0 ? { tool_calls: toolCallsJson(calls) } : {}),
          }
        : text === '' && entries.length === 0
          ? { role: 'assistant', content: '' }
          : { content: text };
    const choice =
      kind === 'chat'
        ? {
            index: 0,
            delta: reason !== null ? {} : content,
            finish_reason: reason,
            logprobs,
          }
        : { index: 0, text, finish_reason: reason, logprobs };
    event({ id, object: chunkObject, created, model, choices: [choice], ...extra });
  };
  if (kind === 'chat') delta('', null, input.model);
  let out: CompletionOutput;
  try {
    out = await backend.complete(
      input,
      (text, progress) => {
        // Power's own field, as on the last chunk: how far the reply has come (llama-server adds
        // fields of its own too; OpenAI clients ignore what they do not know)
        const extra = { power: { tokens: progress.tokens, rounds: progress.rounds } };
        // the end of the thinking and the start of the answer in one batch: two deltas, in order
        if (progress.reasoning && (text || progress.toolCalls)) delta('', null, input.model, extra, [], [], progress.reasoning);
        else if (progress.reasoning) {
          delta('', null, input.model, extra, progress.logprobs, [], progress.reasoning);
          return;
        }
        if (text || progress.logprobs || progress.toolCalls) delta(text, null, input.model, extra, progress.logprobs, progress.toolCalls);
      },
      abort.signal,
    );
    checkNotCancelled(out);
  } catch (error) {
    if (!started) throw error;
    // the stream has begun: the error becomes its last event, as llama-server does
    const e = httpErrorOf(error);
    event({ error: { message: e.message, type: e.type, param: null, code: e.code } });
    if (!res.destroyed) res.end();
    return;
  }
  delta('', finishReason(out), out.model, { usage: usage(out), power: power(out) });
  if (includeUsage) event({ id, object: chunkObject, created, model: out.model, choices: [], usage: usage(out) });
  if (!res.destroyed) res.end('data: [DONE]\n\n');
}

export function openAiError(res: ServerResponse, error: unknown): void {
  sendError(res, httpErrorOf(error));
}
