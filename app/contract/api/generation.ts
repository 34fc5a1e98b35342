// generation: the events of the reply being written. Every payload names its chat and its
// assistant message. The streaming unit is the engine's batch of rounds (onRounds: no per-token
// event). Token text is whole UTF-8 characters: a piece that ends inside a character is held
// back and delivered with the token that completes it (text '' meanwhile).
import { z } from 'zod';

import { DraftSource, StopReason, TokenOrigin } from '../engine-types.js';
import { GenerationStats } from '../generation-result.js';
import { concern } from './describe.js';
import { ApiError } from './errors.js';
import { Id, None } from './common.js';

export const ReplyStats = GenerationStats.extend({
  /** prompt tokens whose KV/recurrent state was kept from the previous request (null in snapshots: the engine reports it at the end) */
  reusedPromptTokens: z.number().int().min(0).nullable(),
  /** prompt tokens evaluated for this request (null in snapshots) */
  evaluatedPromptTokens: z.number().int().min(0).nullable(),
  /**
   * a prompt with images: how many the projector encoded for this reply (an image that the
   * session's previous request left in the context is not encoded again); absent without
   * images and in snapshots
   */
  imagesEncoded: z.number().int().min(0).optional(),
});
export type ReplyStats = z.infer<typeof ReplyStats>;

/**
 * A thinking model's reasoning in a reply, as llama.cpp's chat parser reads it (its
 * reasoning_content). The reply's first `tokens` tokens are the thinking (its tags included),
 * the rest the answer: the two parts' acceptance figures are told apart by that boundary.
 */
export const ReplyThinking = z.object({
  /** the reasoning text, without its tags */
  text: z.string(),
  /** how many of the reply's tokens, from its first, belong to the thinking */
  tokens: z.number().int().min(0),
  /** the thinking has ended (its end tag came, or the budget forced it) */
  done: z.boolean(),
  /** milliseconds from the start of the reply to the end of the thinking (null while it thinks) */
  ms: z.number().min(0).nullable(),
  /** llama.cpp's reasoning budget ended the thinking */
  forced: z.boolean(),
});
export type ReplyThinking = z.infer<typeof ReplyThinking>;

/** One round of the transaction as the UI sees it (as stored in the message: the text is in its tokens). */
export const ApiRound = z.object({
  /** 1-based, within the reply */
  index: z.number().int().min(1),
  proposed: z.number().int().min(0),
  accepted: z.number().int().min(0),
  replay: z.boolean(),
  clampedTo: z.number().int().nullable(),
  /** a chain's round: which member (0-based, in the strategy list's order) drafted it; absent otherwise */
  member: z.number().int().min(0).optional(),
  /** where the draft came from (`suffix`: this request, a chat's earlier turns included, or the model's store of earlier replies); absent otherwise */
  draftSource: DraftSource.optional(),
  /** with draftSource: the proposals the drafter expected accepted, against `accepted` */
  expectedAccepted: z.number().min(0).optional(),
  tokenIds: z.array(z.number().int()),
  origins: z.array(TokenOrigin),
  startUs: z.number(),
  endUs: z.number(),
  proposeUs: z.number(),
  verifyUs: z.number(),
  commitUs: z.number(),
});
export type ApiRound = z.infer<typeof ApiRound>;

/** A round as it streams: with the text each of its tokens completes. */
export const StreamedRound = ApiRound.extend({ texts: z.array(z.string()) });
export type StreamedRound = z.infer<typeof StreamedRound>;

const Reply = { chatId: Id, messageId: Id };

/** What one hand-over of the engine adds to the reply: its rounds, their text, the evidence so far. */
export const RoundsEvent = z.object({
  ...Reply,
  rounds: z.array(StreamedRound),
  /** the text these rounds complete; with no rounds, the tail of a character the reply never finished (U+FFFD) */
  text: z.string(),
  stats: ReplyStats,
  /** a thinking reply: its thinking after these rounds (absent: the reply does not think) */
  thinking: ReplyThinking.optional(),
});
export type RoundsEvent = z.infer<typeof RoundsEvent>;

export const generation = concern({
  methods: {
    /** the reply being written, if any */
    active: { input: None, output: z.object({ chatId: Id, messageId: Id }).nullable() },
  },
  events: {
    onRounds: RoundsEvent,
    onDone: z.object({ ...Reply, stopReason: StopReason, digest: z.string(), stats: ReplyStats }),
    /** the reply ended in an error; what was committed before it is kept in the message */
    onError: z.object({ ...Reply, error: ApiError }),
  },
});
