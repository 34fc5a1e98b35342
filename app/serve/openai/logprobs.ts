// Log-probabilities in OpenAI's two shapes: chat's `logprobs.content` (one entry per token with
// its bytes and top alternatives) and the legacy completions' parallel arrays.
import type { TokenLogprobs } from '../../contract/engine-types.js';

const decoder = new TextDecoder('utf-8', { fatal: false });
/** a token's text as OpenAI shows it: its piece decoded on its own (a split character shows as U+FFFD) */
const text = (piece: Uint8Array): string => decoder.decode(piece);

export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** `choices[].logprobs` of a chat completion (or of one chunk: the tokens it carries) */
export function chatLogprobs(logprobs: readonly TokenLogprobs[]): { content: ChatTokenLogprob[]; refusal: null } {
  return {
    content: logprobs.map((lp) => ({
      token: text(lp.piece),
      logprob: lp.logprob,
      bytes: Array.from(lp.piece),
      top_logprobs: lp.top.map((t) => ({ token: text(t.piece), logprob: t.logprob, bytes: Array.from(t.piece) })),
    })),
    refusal: null,
  };
}

/** `choices[].logprobs` of a legacy completion; `offset`: where the first token's text starts in the reply */
export function textLogprobs(logprobs: readonly TokenLogprobs[], offset: number) {
  const tokens = logprobs.map((lp) => text(lp.piece));
  const textOffset: number[] = [];
  let at = offset;
  for (const t of tokens) {
    textOffset.push(at);
    at += t.length;
  }
  return {
    tokens,
    token_logprobs: logprobs.map((lp) => lp.logprob),
    top_logprobs: logprobs.map((lp) => Object.fromEntries(lp.top.map((t) => [text(t.piece), t.logprob]))),
    text_offset: textOffset,
  };
}
