// One assistant reply as the screen shows it, whether it is still streaming (built from the
// generation events) or stored (the chat's message): tokens with their origins and rounds,
// round records, the latest stats snapshot.
import type { ReplyThinking } from '../../../app/contract/api/generation.js';
import type { PartFigures } from '../../../app/contract/report/parts.js';
import type { ApiError, ApiRound, AssistantMessage, ReplyStats, Token } from '../api-types.js';
import { decodeRate, duration, fixed, percent, tokensPerSecond } from './format.js';

export type ReplyStatus = AssistantMessage['status'];

export interface ReplyView {
  chatId: string;
  messageId: string;
  tokens: Token[];
  rounds: ApiRound[];
  stats: ReplyStats | null;
  status: ReplyStatus;
  digest: string | null;
  /** known as soon as the reply ends (before the chat is read back) */
  stopReason: AssistantMessage['stopReason'];
  error: ApiError | null;
  /** a thinking reply's thinking so far (null: the reply does not think) */
  thinking: ReplyThinking | null;
}

export function emptyReply(chatId: string, messageId: string): ReplyView {
  return {
    chatId,
    messageId,
    tokens: [],
    rounds: [],
    stats: null,
    status: 'streaming',
    digest: null,
    stopReason: null,
    error: null,
    thinking: null,
  };
}

export function replyFromMessage(chatId: string, message: AssistantMessage): ReplyView {
  return {
    chatId,
    messageId: message.id,
    tokens: message.tokens,
    rounds: message.rounds,
    stats: message.stats,
    status: message.status,
    digest: message.digest,
    stopReason: message.stopReason,
    error: message.error,
    thinking: message.thinking ?? null,
  };
}

export function replyText(reply: Pick<ReplyView, 'tokens'>): string {
  let text = '';
  for (const t of reply.tokens) text += t.text;
  return text;
}

/**
 * Which to show for a message: the live reply (the events since it started) unless the stored
 * message knows more (the page was opened in the middle of the reply).
 */
export function pickReply(chatId: string, message: AssistantMessage, live: ReplyView | undefined): ReplyView {
  const stored = replyFromMessage(chatId, message);
  if (!live) return stored;
  if (live.status === 'streaming' && message.status !== 'streaming') return stored;
  return live.tokens.length >= stored.tokens.length
    ? { ...live, thinking: live.thinking ?? stored.thinking }
    : {
        ...live,
        tokens: stored.tokens,
        rounds: stored.rounds.length > live.rounds.length ? stored.rounds : live.rounds,
        thinking: stored.thinking ?? live.thinking,
      };
}

/**
 * The text the message shows: for a reply that thinks, the answer alone (nothing while it
 * thinks; the tokens after the thinking while it streams; the stored answer once it ended).
 */
export function shownText(reply: ReplyView, message: AssistantMessage | null): string {
  const thinking = reply.thinking;
  if (!thinking) return reply.tokens.length > 0 || reply.status === 'streaming' || !message ? replyText(reply) : message.content;
  if (message?.thinking && message.status !== 'streaming') return message.content;
  if (!thinking.done) return '';
  return replyText({ tokens: reply.tokens.slice(thinking.tokens) }).trimStart();
}

/** "Thought for 12.3 s · 842 tokens", "Thinking… 312 tokens", with "(budget reached)" when the budget ended it. */
export function thinkingHeader(thinking: ReplyThinking, status: ReplyStatus): string {
  const tokens = `${thinking.tokens} token${thinking.tokens === 1 ? '' : 's'}`;
  const forced = thinking.forced ? ' (budget reached)' : '';
  if (thinking.done) return `Thought for ${thinking.ms === null ? '—' : `${(thinking.ms / 1000).toFixed(1)} s`} · ${tokens}${forced}`;
  if (status === 'streaming') return `Thinking… ${tokens}`;
  return `Thinking ${status === 'error' ? 'failed' : 'stopped'} · ${tokens}`;
}

/** One part in the reply's stats: "thinking 842 tokens, 72.4% accepted, 31.0 tok/s" (no acceptance for the control). */
export function partStatsPart(name: string, part: PartFigures, strategy: string | null): string {
  const figures = [`${part.tokens} tokens`];
  if (strategy !== 'none') figures.push(`${percent(part.acceptanceRate)} accepted`);
  figures.push(tokensPerSecond(part.tokensPerSecond));
  return `${name} ${figures.join(', ')}`;
}

/** Decode tok/s per round (tokens emitted / time since the previous round ended), in order. */
export function decodeSeries(rounds: readonly ApiRound[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < rounds.length; i++) {
    const dt = rounds[i]!.endUs - rounds[i - 1]!.endUs;
    if (dt > 0) out.push((rounds[i]!.tokenIds.length * 1e6) / dt);
  }
  return out;
}

/** accepted / proposed over several replies (null when nothing was proposed). */
export function rollingAcceptance(stats: ReadonlyArray<ReplyStats | null>): number | null {
  let proposed = 0;
  let accepted = 0;
  for (const s of stats) {
    if (!s) continue;
    proposed += s.proposed;
    accepted += s.accepted;
  }
  return proposed > 0 ? accepted / proposed : null;
}

/** K bars: acceptance at each proposal position, padded with null where no round reached it. */
export function positionBars(perPosition: readonly number[], k: number | null): Array<number | null> {
  const width = Math.max(k ?? 0, perPosition.length);
  return Array.from({ length: width }, (_, i) => perPosition[i] ?? null);
}

/** A stop reason in words: "max tokens" when the reply was cut at the limit. */
export function stopReasonLabel(reason: AssistantMessage['stopReason'] | undefined, status: ReplyStatus): string {
  if (status === 'streaming') return 'writing…';
  if (status === 'error') return 'failed';
  switch (reason) {
    case 'max-tokens':
      return 'max tokens';
    case 'eos':
      return 'end of text';
    case 'cancelled':
      return 'stopped';
    case 'context-full':
      return 'context full';
    case 'stop':
      // a stop string: in a chat, the end-of-turn marker of the fallback template
      return 'end of turn';
    default:
      return status === 'stopped' ? 'stopped' : '—';
  }
}

/**
 * The figures of one reply, in the order they read under it: tokens, decode tok/s, TTFT,
 * acceptance %, mean acceptance length, stop reason.
 */
export function replyStatsParts(
  reply: Pick<ReplyView, 'tokens' | 'stats' | 'status'>,
  strategy: string | null,
  stopReason: AssistantMessage['stopReason'] | undefined,
): string[] {
  const s = reply.stats;
  const parts = [`${reply.tokens.length} tokens`, `${tokensPerSecond(decodeRate(s))} decode`, `TTFT ${duration(s?.ttftMs)}`];
  if (strategy === 'none') parts.push('no proposals (autoregressive)');
  else parts.push(`${percent(s?.acceptanceRate)} accepted`, `mean length ${fixed(s?.meanAcceptanceLength)}`);
  parts.push(stopReasonLabel(stopReason, reply.status));
  return parts;
}

/** The replies of a chat that rolling figures pool: this model's speculative replies that ended. */
export function rollingForModel(
  messages: readonly AssistantMessage[],
  modelId: string | null,
  excludeId: string | null,
): Array<ReplyStats | null> {
  if (!modelId) return [];
  return messages
    .filter(
      (m) => m.model.id === modelId && m.strategy !== 'none' && m.id !== excludeId && m.status !== 'streaming' && m.status !== 'error',
    )
    .map((m) => m.stats);
}

/** Tick labels for a sparkline's vertical scale: its top and bottom, in tok/s. */
export function sparkScale(values: readonly number[]): { max: number; min: number } | null {
  if (values.length === 0) return null;
  return { max: Math.max(...values), min: Math.min(...values, 0) };
}

/** A JSON reply (the chat asked for format json) pretty-printed, or null while it is not whole JSON yet (streaming, cut at the token limit). */
export function prettyJsonReply(sampling: AssistantMessage['sampling'] | undefined, text: string): string | null {
  if (sampling?.format !== 'json') return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

/** The reply's format as its evidence says it: "JSON", "JSON schema", or nothing for free text. */
export function formatPart(sampling: AssistantMessage['sampling'] | undefined): string | null {
  if (sampling?.format !== 'json') return null;
  return sampling.jsonSchema !== undefined ? 'JSON schema' : 'JSON';
}
