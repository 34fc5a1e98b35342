// A/B: the last prompt re-run on the autoregressive control. The speculative reply is exact when
// both emitted the same tokens (same digest); the speedup compares steady decode rates measured
// on the same machine moments apart (request-wide rates too, which include prefill).
import type { AssistantMessage, Chat, ReplyStats } from '../api-types.js';
import { chainLabel } from './chain.js';
import { decodeRate, tokensPerSecond } from './format.js';

export interface AbSide {
  messageId: string;
  profile: string;
  /** the strategy, or a chain as "ngram-mod → mtp" */
  strategy: string;
  k: number | null;
  s: number | null;
  digest: string | null;
  stats: ReplyStats | null;
  tokens: number;
}

export interface AbResult {
  speculative: AbSide;
  control: AbSide;
  /** speculative steady decode tok/s ÷ the control's (null when either is unknown) */
  decodeSpeedup: number | null;
  /** the same for request-wide tok/s */
  requestSpeedup: number | null;
  digestsMatch: boolean | null;
}

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return null;
  return a / b;
}

export function compareAb(speculative: AbSide, control: AbSide): AbResult {
  return {
    speculative,
    control,
    decodeSpeedup: ratio(decodeRate(speculative.stats), decodeRate(control.stats)),
    requestSpeedup: ratio(speculative.stats?.requestTokensPerSecond, control.stats?.requestTokensPerSecond),
    digestsMatch: speculative.digest && control.digest ? speculative.digest === control.digest : null,
  };
}

/** "1.8× faster", "1.2× slower", "as fast (1.00×)"; null when the rates are unknown. */
export function speedWords(ratio: number | null): string | null {
  if (ratio === null || !Number.isFinite(ratio) || ratio <= 0) return null;
  if (ratio >= 1) return ratio.toFixed(1) === '1.0' ? `as fast (${ratio.toFixed(2)}×)` : `${ratio.toFixed(1)}× faster`;
  const slower = 1 / ratio;
  return slower.toFixed(1) === '1.0' ? `as fast (${ratio.toFixed(2)}×)` : `${slower.toFixed(1)}× slower`;
}

export interface AbVerdict {
  /** "1.8× faster" (steady decode, speculative vs the control) */
  speed: string;
  /** "Digests match" / "Digests differ" / "Digests unknown" */
  digests: string;
  /** "120 tok/s vs 66.4 tok/s" */
  rates: string;
}

export function abVerdict(run: AbResult): AbVerdict {
  return {
    speed: speedWords(run.decodeSpeedup) ?? 'speed unknown',
    digests: run.digestsMatch === null ? 'Digests unknown' : run.digestsMatch ? 'Digests match' : 'Digests differ',
    rates: `${tokensPerSecond(decodeRate(run.speculative.stats))} vs ${tokensPerSecond(decodeRate(run.control.stats))}`,
  };
}

export function abSide(message: AssistantMessage): AbSide {
  return {
    messageId: message.id,
    profile: message.profile?.name ?? 'active profile',
    strategy: chainLabel(message.strategy, message.fallbacks),
    k: message.k,
    s: message.s,
    digest: message.digest,
    stats: message.stats,
    tokens: message.tokens.length,
  };
}

export interface AbPair {
  /** the user message both replies answer */
  replyTo: string;
  speculative: AssistantMessage;
  control: AssistantMessage;
  result: AbResult | null;
}

/** The same prompt, model and sampling: the two replies are comparable. */
function comparable(a: AssistantMessage, b: AssistantMessage): boolean {
  const x = a.sampling;
  const y = b.sampling;
  return (
    a.model.id === b.model.id &&
    x.temperature === y.temperature &&
    x.seed === y.seed &&
    x.topK === y.topK &&
    x.topP === y.topP &&
    x.minP === y.minP &&
    x.repeatPenalty === y.repeatPenalty &&
    x.maxTokens === y.maxTokens
  );
}

/**
 * The chat's A/B runs, by the control's message id: a reply on the autoregressive control that
 * replaced (Run A/B regenerates on the control) a speculative reply to the same prompt with the
 * same sampling. Read from the chat itself, so an A/B belongs to its chat and survives a reload.
 */
export function abPairs(chat: Chat | null): Map<string, AbPair> {
  const pairs = new Map<string, AbPair>();
  if (!chat) return pairs;
  const superseded = chat.superseded ?? [];
  let replyTo: string | null = null;
  for (const m of chat.messages) {
    if (m.role === 'user') {
      replyTo = m.id;
      continue;
    }
    if (m.strategy !== 'none' || replyTo === null) continue;
    const to = replyTo;
    const speculative = superseded
      .filter((s) => s.replyTo === to && s.message.strategy !== 'none' && s.message.status === 'done' && comparable(s.message, m))
      .at(-1)?.message;
    if (!speculative) continue;
    const result = m.status === 'done' ? compareAb(abSide(speculative), abSide(m)) : null;
    pairs.set(m.id, { replyTo: to, speculative, control: m, result });
  }
  return pairs;
}
