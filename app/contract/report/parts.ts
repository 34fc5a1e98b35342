// A thinking reply's figures per part, the thinking and the answer: thinking and answer draft
// very differently (a proposer that replays the prompt helps the answer far more than the
// reasoning), so one acceptance rate for the whole reply hides both. The one place these are
// computed: the reply's stats, the Acceptance panel and the chat report all read them here.
//
// The boundary is ReplyThinking.tokens (the reply's first tokens are the thinking, its tags
// included). A round that straddles it is split like this:
// - its emitted tokens by position: tokens before the boundary are the thinking's, so the parts'
//   tokens add up to the reply's and the thinking's are exactly `thinking.tokens`;
// - its proposals by the position of the token each stood for: an accepted proposal j of a
//   round whose first token is at position p is the token at p + j; a rejected one, and the
//   unchecked ones drafted after it, count at the mismatch, the correction token's position
//   (they were drafted as the continuation of that part). So the parts' proposed and accepted
//   tokens add up to the reply's, and a thinking that has not ended has every proposal;
// - the round itself (a target pass) to the part of its first emitted token, so the parts'
//   rounds add up to the reply's.
// Time: the thinking's is `thinking.ms` (from the start of the reply, prefill included, to the
// end of the thinking); the answer's is the rest, up to the end of the last round.
import { z } from 'zod';

import type { ApiRound, ReplyThinking } from '../api/generation.js';

const Count = z.number().int().nonnegative();

/** One part's figures. */
export const PartFigures = z.object({
  /** tokens emitted in this part */
  tokens: Count,
  /** target passes (rounds) whose first token is in this part, the first token's round included */
  rounds: Count,
  /** of those, rounds that carried proposals */
  verifyRounds: Count,
  /** proposals that stood for a position in this part */
  proposed: Count,
  accepted: Count,
  /** accepted / proposed (null: nothing proposed) */
  acceptanceRate: z.number().min(0).max(1).nullable(),
  /** tokens / rounds (null: no round) */
  tokensPerRound: z.number().nonnegative().nullable(),
  /** milliseconds the part took (null: the answer has not started) */
  ms: z.number().nonnegative().nullable(),
  /** tokens / time (null: no token, or no time) */
  tokensPerSecond: z.number().nonnegative().nullable(),
});
export type PartFigures = z.infer<typeof PartFigures>;

/** A thinking reply split at the end of its thinking. */
export const ReplyParts = z.object({
  thinking: PartFigures,
  answer: PartFigures,
  /** the thinking has ended */
  done: z.boolean(),
  /** llama.cpp's reasoning budget ended the thinking */
  forced: z.boolean(),
});
export type ReplyParts = z.infer<typeof ReplyParts>;

/** What the split needs of a round: an engine record, an API round or a report sample. */
export interface PartRound {
  /** tokens the round emitted */
  emitted: number;
  proposed: number;
  accepted: number;
  /** microseconds since the request started, when the round's tokens were emitted */
  endUs: number;
}

/** The parts of a reply given its rounds in order and its thinking (null: the reply did not think). */
export function splitParts(
  rounds: readonly PartRound[],
  thinking: Pick<ReplyThinking, 'tokens' | 'ms' | 'done' | 'forced'> | null | undefined,
): ReplyParts | null {
  if (!thinking) return null;
  const boundary = thinking.tokens;
  const sums = () => ({ tokens: 0, rounds: 0, verifyRounds: 0, proposed: 0, accepted: 0 });
  const think = sums();
  const answer = sums();
  let position = 0;
  for (const r of rounds) {
    // how many of this round's positions lie before the boundary
    const before = Math.max(0, boundary - position);
    const own = position < boundary ? think : answer;
    own.rounds++;
    if (r.proposed > 0) own.verifyRounds++;
    const tokens = Math.min(before, r.emitted);
    const accepted = Math.min(before, r.accepted);
    // the rejected proposals (the first mismatch and the unchecked ones drafted after it) count where the mismatch was
    const proposed = accepted + (r.accepted < before ? r.proposed - r.accepted : 0);
    think.tokens += tokens;
    think.proposed += proposed;
    think.accepted += accepted;
    answer.tokens += r.emitted - tokens;
    answer.proposed += r.proposed - proposed;
    answer.accepted += r.accepted - accepted;
    position += r.emitted;
  }
  const totalMs = (rounds.at(-1)?.endUs ?? 0) / 1000;
  const thinkingMs = thinking.ms ?? totalMs;
  const answerMs = thinking.ms === null ? null : Math.max(0, totalMs - thinking.ms);
  return {
    thinking: figures(think, thinkingMs),
    answer: figures(answer, answerMs),
    done: thinking.done,
    forced: thinking.forced,
  };
}

function figures(s: Omit<PartFigures, 'acceptanceRate' | 'tokensPerRound' | 'ms' | 'tokensPerSecond'>, ms: number | null): PartFigures {
  return {
    ...s,
    acceptanceRate: s.proposed > 0 ? s.accepted / s.proposed : null,
    tokensPerRound: s.rounds > 0 ? s.tokens / s.rounds : null,
    ms,
    tokensPerSecond: ms !== null && ms > 0 && s.tokens > 0 ? (s.tokens * 1000) / ms : null,
  };
}

/** The same for a reply as the API keeps it (a stored message, or one streaming). */
export function replyParts(reply: {
  rounds: readonly Pick<ApiRound, 'tokenIds' | 'proposed' | 'accepted' | 'endUs'>[];
  thinking?: ReplyThinking | null | undefined;
}): ReplyParts | null {
  if (!reply.thinking) return null;
  return splitParts(
    reply.rounds.map((r) => ({ emitted: r.tokenIds.length, proposed: r.proposed, accepted: r.accepted, endUs: r.endUs })),
    reply.thinking,
  );
}
