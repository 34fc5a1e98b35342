// One assistant reply through the engine: rounds become token events (whole UTF-8 characters,
// see token-text.ts), round records and stats snapshots; the message keeps every committed token whatever ends the reply.
import { randomUUID } from 'node:crypto';

import type { AssistantMessage } from '../../contract/api/chats.js';
import type { ApiRound, ReplyStats, TokenEvent } from '../../contract/api/generation.js';
import type { NativeGenerateResult, RoundRecord, SamplingOptions } from '../../contract/engine-types.js';
import { computeStats, RunningStats, tokenDigest } from '../../contract/generation-result.js';
import type { EngineClient } from '../engine/client.js';
import { TokenText } from './token-text.js';

export interface ReplySink {
  token(event: Omit<TokenEvent, 'chatId' | 'messageId'>): void;
  round(round: ApiRound): void;
  stats(stats: ReplyStats): void;
}

export function apiRound(round: RoundRecord, index: number): ApiRound {
  return {
    index,
    proposed: round.proposed,
    accepted: round.accepted,
    replay: round.replay,
    clampedTo: round.clampedTo,
    tokenIds: round.tokens.map((t) => t.id),
    origins: round.tokens.map((t) => t.origin),
    startUs: round.startUs,
    endUs: round.endUs,
    proposeUs: round.proposeUs,
    verifyUs: round.verifyUs,
    commitUs: round.commitUs,
  };
}

export function replyStats(native: NativeGenerateResult, rounds: readonly RoundRecord[], final: boolean): ReplyStats {
  return {
    ...computeStats(native, rounds),
    reusedPromptTokens: final ? native.reusedTokens : null,
    evaluatedPromptTokens: final ? native.promptTokens - native.reusedTokens : null,
  };
}

/**
 * Runs the request and fills `message` as rounds arrive. Resolves with the engine's result;
 * rejects with the engine's error (the message then holds what was committed before it).
 */
export async function runReply(
  engine: EngineClient,
  request: { sessionId: string; prompt: number[]; maxTokens: number; sampling: SamplingOptions },
  message: AssistantMessage,
  sink: ReplySink,
): Promise<{ native: NativeGenerateResult; rounds: RoundRecord[] }> {
  const requestId = randomUUID();
  const rounds: RoundRecord[] = [];
  const running = new RunningStats();
  const text = new TokenText();
  const stop = engine.onRound(requestId, (round) => {
    rounds.push(round);
    const index = rounds.length;
    for (const t of round.tokens) {
      const token = { id: t.id, text: text.push(t.piece), origin: t.origin, round: index };
      message.tokens.push(token);
      message.content += token.text;
      sink.token(token);
    }
    const api = apiRound(round, index);
    message.rounds.push(api);
    sink.round(api);
    running.add(round);
    sink.stats({ ...running.stats(running.partialNative(request.prompt.length)), reusedPromptTokens: null, evaluatedPromptTokens: null });
  });
  try {
    const native = await engine.call('generate', {
      sessionId: request.sessionId,
      requestId,
      prompt: Int32Array.from(request.prompt),
      maxTokens: request.maxTokens,
      sampling: request.sampling,
    });
    return { native, rounds };
  } finally {
    stop();
    // bytes of a character the reply never completed: shown as U+FFFD, never dropped silently
    const tail = text.flush();
    if (tail) {
      message.content += tail;
      const last = message.tokens.at(-1);
      if (last) last.text += tail;
    }
    message.digest = await tokenDigest(message.tokens.map((t) => t.id));
  }
}
