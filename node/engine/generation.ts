// One generation request through the engine: streams decoded text as rounds arrive and
// returns the request's tokens, text, digest and evidence.
import { randomUUID } from 'node:crypto';

import type { RoundRecord, SamplingOptions, StopReason } from '../../contract/engine-types.js';
import type { Tokens } from '../../engine/protocol.js';
import { computeStats, tokenDigest, type GenerationStats } from '../../contract/generation-result.js';
import type { EngineClient } from './client.js';

export interface GenerationRequest {
  sessionId: string;
  prompt: Tokens;
  maxTokens: number;
  sampling: SamplingOptions;
}

export interface GenerationOutcome {
  tokens: number[];
  text: string;
  digest: string;
  stopReason: StopReason;
  stats: GenerationStats;
  rounds: RoundRecord[];
}

export async function runGeneration(
  engine: EngineClient,
  request: GenerationRequest,
  onText?: (text: string) => void,
): Promise<GenerationOutcome> {
  const requestId = randomUUID();
  const rounds: RoundRecord[] = [];
  const tokens: number[] = [];
  // token pieces may split a UTF-8 character; the streaming decoder holds partial bytes back
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let text = '';
  const stop = engine.onRound(requestId, (round) => {
    rounds.push(round);
    let chunk = '';
    for (const token of round.tokens) {
      tokens.push(token.id);
      chunk += decoder.decode(token.piece, { stream: true });
    }
    text += chunk;
    if (chunk && onText) onText(chunk);
  });
  try {
    const native = await engine.call('generate', {
      sessionId: request.sessionId,
      requestId,
      prompt: request.prompt,
      maxTokens: request.maxTokens,
      sampling: request.sampling,
    });
    const tail = decoder.decode();
    text += tail;
    if (tail && onText) onText(tail);
    return {
      tokens,
      text,
      digest: await tokenDigest(tokens),
      stopReason: native.stopReason,
      stats: computeStats(native, rounds),
      rounds,
    };
  } finally {
    stop();
  }
}
