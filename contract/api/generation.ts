// generation: the events of the reply being written. Every payload names its chat and its
// assistant message. Token text is whole UTF-8 characters: a piece that ends inside a
// character is held back and delivered with the token that completes it (text '' meanwhile).
import { z } from 'zod';

import { StopReason, TokenOrigin } from '../engine-types.js';
import { GenerationStats } from '../generation-result.js';
import { concern } from './describe.js';
import { ApiError } from './errors.js';
import { Id, None } from './common.js';

export const ReplyStats = GenerationStats.extend({
  /** prompt tokens whose KV/recurrent state was kept from the previous request (null in snapshots: the engine reports it at the end) */
  reusedPromptTokens: z.number().int().min(0).nullable(),
  /** prompt tokens evaluated for this request (null in snapshots) */
  evaluatedPromptTokens: z.number().int().min(0).nullable(),
});
export type ReplyStats = z.infer<typeof ReplyStats>;

/** One round of the transaction as the UI sees it (token pieces are in the token events). */
export const ApiRound = z.object({
  /** 1-based, within the reply */
  index: z.number().int().min(1),
  proposed: z.number().int().min(0),
  accepted: z.number().int().min(0),
  replay: z.boolean(),
  clampedTo: z.number().int().nullable(),
  tokenIds: z.array(z.number().int()),
  origins: z.array(TokenOrigin),
  startUs: z.number(),
  endUs: z.number(),
  proposeUs: z.number(),
  verifyUs: z.number(),
  commitUs: z.number(),
});
export type ApiRound = z.infer<typeof ApiRound>;

const Reply = { chatId: Id, messageId: Id };

export const TokenEvent = z.object({ ...Reply, id: z.number().int(), text: z.string(), origin: TokenOrigin, round: z.number().int().min(1) });
export type TokenEvent = z.infer<typeof TokenEvent>;

export const generation = concern({
  methods: {
    /** the reply being written, if any */
    active: { input: None, output: z.object({ chatId: Id, messageId: Id }).nullable() },
  },
  events: {
    onToken: TokenEvent,
    onRound: z.object({ ...Reply, round: ApiRound }),
    /** a snapshot of the evidence so far (after each round) */
    onStats: z.object({ ...Reply, stats: ReplyStats }),
    onDone: z.object({ ...Reply, stopReason: StopReason, digest: z.string(), stats: ReplyStats }),
    /** the reply ended in an error; what was committed before it is kept in the message */
    onError: z.object({ ...Reply, error: ApiError }),
  },
});
