// The one way a generation request runs: into the engine, rounds back as they are committed,
// into a sink. Chat replies, the OpenAI API, `power generate`, `bench` and `audit` all run here,
// so there is one UTF-8 decoder, one round mapper and one incremental statistics. The streaming
// unit is the engine's round batch: the sink is called once per batch (the rounds of one
// hand-over of the native layer) with the rounds, their text and a stats snapshot, each computed
// in constant work per round. Stop strings (a /v1 request's `stop`, the ChatML fallback's
// end-of-turn marker) end a reply here too, for every front door: each token's text passes
// through one StopStrings, the reply ends with the token that completes one (stop reason
// 'stop', the engine cancelled), and neither the stop string nor anything after it is shown.
import { randomUUID } from 'node:crypto';

import type { ApiRound, ReplyStats, StreamedRound } from '../contract/api/generation.js';
import type {
  NativeGenerateResult,
  RoundRecord,
  SamplingOptions,
  SamplingUsed,
  StopReason,
  TokenLogprobs,
} from '../contract/engine-types.js';
import { computeStats, RunningStats, tokenDigest, type GenerationStats } from '../contract/generation-result.js';
import type { MediaPrompt, Tokens } from '../engine/protocol.js';
import type { EngineClient } from '../engine/client.js';
import type { SlotLease } from './reply-slot.js';
import { StopStrings } from './stop-strings.js';
import { TokenText } from './token-text.js';

export interface GenerationRequest {
  sessionId: string;
  prompt: Tokens | readonly number[];
  /** a prompt with images (a session opened with a projector): it takes the place of `prompt`, left empty */
  media?: MediaPrompt;
  maxTokens: number;
  sampling: SamplingOptions;
  /** the reply ends where one of these first appears in its text (the string itself not shown) */
  stops?: readonly string[];
}

/** What one hand-over of the engine adds to the reply. */
export interface RoundsBatch {
  rounds: StreamedRound[];
  /** the text these rounds complete (whole UTF-8 characters) */
  text: string;
  /** the evidence so far */
  stats: ReplyStats;
  /** per token of these rounds, when the request asked for them (SamplingOptions.logprobs) */
  logprobs?: TokenLogprobs[];
}

export interface GenerationOutcome {
  /** the reply's tokens: after a stop string, through the token that completed it */
  tokens: number[];
  /** the reply's text: after a stop string, the text before it */
  text: string;
  digest: string;
  stopReason: StopReason;
  stats: GenerationStats;
  rounds: RoundRecord[];
  /** where the engine sampled it (null: cancelled before it reached the engine) */
  sampling: SamplingUsed | null;
}

export interface RequestOutcome extends GenerationOutcome {
  /** the stop string that ended the reply (stopReason 'stop'), null when none did */
  stop: string | null;
  /**
   * the text of `tokens` as the model wrote it: `text`, and after a stop string that string and
   * whatever its last token carried past it (what a conversation memo of these tokens must say)
   */
  tokensText: string;
  native: NativeGenerateResult;
  /** the final stats with the prompt's reuse */
  replyStats: ReplyStats;
  /** per proposal position: the rounds that accepted it */
  acceptedPerPosition: number[];
  /** rounds, the first token's included (each after the first is one target pass) */
  roundCount: number;
}

export interface RunOptions {
  /** receives every batch of rounds as it arrives */
  sink?: (batch: RoundsBatch) => void;
  /** the reply slot's lease: a stop asked of it cancels the request */
  lease?: SlotLease;
  /**
   * keep every round record for the outcome (default true: --rounds, bench's samples, the
   * contract tests). A reply that streams into a sink says false: a round record holds views
   * into its batch's buffers, and keeping thousands of them makes each garbage collection, and
   * so each round, cost more as the reply grows
   */
  keepRounds?: boolean;
}

export function apiRound(round: RoundRecord, index: number): ApiRound {
  return {
    index,
    proposed: round.proposed,
    accepted: round.accepted,
    replay: round.replay,
    clampedTo: round.clampedTo,
    ...(round.member !== undefined ? { member: round.member } : {}),
    ...(round.draftSource !== undefined ? { draftSource: round.draftSource, expectedAccepted: round.expectedAccepted ?? 0 } : {}),
    tokenIds: round.tokens.map((t) => t.id),
    origins: round.tokens.map((t) => t.origin),
    startUs: round.startUs,
    endUs: round.endUs,
    proposeUs: round.proposeUs,
    verifyUs: round.verifyUs,
    commitUs: round.commitUs,
  };
}

export function replyStats(native: NativeGenerateResult, stats: GenerationStats, final: boolean): ReplyStats {
  return {
    ...stats,
    reusedPromptTokens: final ? native.reusedTokens : null,
    evaluatedPromptTokens: final ? native.promptTokens - native.reusedTokens : null,
    ...(final && native.imagesEncoded !== undefined ? { imagesEncoded: native.imagesEncoded } : {}),
  };
}

/**
 * Runs the request. Resolves with the outcome; rejects with the engine's error, after the sink
 * has seen every round committed before it (the engine flushes them before it fails).
 */
export async function runRequest(engine: EngineClient, request: GenerationRequest, options: RunOptions = {}): Promise<RequestOutcome> {
  const requestId = randomUUID();
  const rounds: RoundRecord[] = [];
  const tokens: number[] = [];
  const running = new RunningStats();
  const decoder = new TokenText();
  const stops = new StopStrings(request.stops ?? []);
  const promptLength = request.prompt.length;
  let text = '';
  let tokensText = '';
  // the client hands a batch's rounds over one after another in one task: they are collected
  // and given to the sink together, at the end of that task
  let pending: StreamedRound[] = [];
  let pendingText = '';
  let pendingLogprobs: TokenLogprobs[] = [];
  let index = 0;
  const snapshot = (): ReplyStats => {
    const partial = running.partialNative(promptLength);
    return replyStats(partial, running.stats(partial), false);
  };
  const deliver = (): void => {
    if (pending.length === 0) return;
    const batch = {
      rounds: pending,
      text: pendingText,
      stats: snapshot(),
      ...(pendingLogprobs.length > 0 ? { logprobs: pendingLogprobs } : {}),
    };
    pending = [];
    pendingText = '';
    pendingLogprobs = [];
    options.sink?.(batch);
  };
  const keepRounds = options.keepRounds ?? true;
  const cancel = (): void => void engine.call('cancel', { sessionId: request.sessionId }).catch(() => {});
  const stop = engine.onRound(requestId, (whole) => {
    // rounds the engine committed after the reply reached a stop string are not part of it
    if (stops.stopped) return;
    const texts: string[] = [];
    for (const t of whole.tokens) {
      tokens.push(t.id);
      const written = decoder.push(t.piece);
      tokensText += written;
      texts.push(stops.push(written));
      if (stops.stopped) break;
    }
    // the round as far as the reply goes: through the token that completed the stop string
    const round = texts.length < whole.tokens.length ? { ...whole, tokens: whole.tokens.slice(0, texts.length) } : whole;
    if (keepRounds) rounds.push(round);
    running.add(round);
    const delta = texts.join('');
    text += delta;
    if (stops.stopped) cancel();
    if (!options.sink) return;
    if (pending.length === 0) queueMicrotask(deliver);
    pending.push({ ...apiRound(round, ++index), texts });
    pendingText += delta;
    for (const t of round.tokens) if (t.logprobs) pendingLogprobs.push(t.logprobs);
  });
  // at the end: bytes of a character the reply never completed, whatever ended it, shown as
  // U+FFFD (never dropped), and the text held back in case it became a stop string
  const finish = (): void => {
    stop();
    deliver();
    const unfinished = decoder.flush();
    tokensText += unfinished;
    const tail = stops.push(unfinished) + stops.flush();
    text += tail;
    if (tail) options.sink?.({ rounds: [], text: tail, stats: snapshot() });
  };
  let native: NativeGenerateResult & { sampling: SamplingUsed };
  try {
    const call = engine.call('generate', {
      sessionId: request.sessionId,
      requestId,
      prompt: request.prompt instanceof Int32Array ? request.prompt : Int32Array.from(request.prompt),
      ...(request.media ? { media: request.media } : {}),
      maxTokens: request.maxTokens,
      sampling: request.sampling,
    });
    // the request is in the engine now: a stop asked of the slot (now or earlier) cancels it
    options.lease?.attach(cancel);
    native = await call;
  } catch (error) {
    finish();
    throw error;
  }
  finish();
  const stats = running.stats(native);
  return {
    tokens,
    text,
    tokensText,
    stop: stops.stop,
    digest: await tokenDigest(tokens),
    stopReason: stops.stopped ? 'stop' : native.stopReason,
    stats,
    rounds,
    sampling: native.sampling,
    native,
    replyStats: replyStats(native, stats, true),
    acceptedPerPosition: running.acceptedPerPosition(),
    roundCount: running.roundCount(),
  };
}

/** The outcome of a request cancelled before its first token (a front door still reports it). */
export async function cancelledOutcome(promptTokens: number): Promise<RequestOutcome> {
  const native = {
    stopReason: 'cancelled' as const,
    replays: 0,
    clampedTo: null,
    promptTokens,
    reusedTokens: 0,
    prefillUs: 0,
    totalUs: 0,
    generated: 0,
    grammarCut: 0,
  };
  const stats = computeStats(native, []);
  return {
    tokens: [],
    text: '',
    tokensText: '',
    stop: null,
    digest: await tokenDigest([]),
    stopReason: 'cancelled',
    stats,
    rounds: [],
    sampling: null,
    native,
    replyStats: replyStats(native, stats, true),
    acceptedPerPosition: [],
    roundCount: 0,
  };
}
