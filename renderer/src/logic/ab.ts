// A/B: the last prompt re-run on the autoregressive control. The speculative reply is exact when
// both emitted the same tokens (same digest); the speedup compares steady decode rates measured
// on the same machine moments apart. A request-wide ratio includes each side's prefill, which
// speculation does not speed up: it is a speculation figure only when both sides prefilled alike
// (a cold session against a warm one once read as "3.6× faster" beside a 1.2× decode speedup).
import { branchAt } from '../../../app/contract/branches.js';
import { comparePrefills, PREFILL_BAND, type PrefillFigures } from '../../../app/contract/report/prefill.js';
import type { AssistantMessage, Chat, ReplyStats } from '../api-types.js';
import { chainLabel } from './chain.js';
import { decodeRate, duration, tokensPerSecond } from './format.js';

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
  /** the same for request-wide tok/s: null unless both sides prefilled alike (`prefill`) */
  requestSpeedup: number | null;
  prefill: PrefillComparison;
  digestsMatch: boolean | null;
}

export interface PrefillComparison {
  /** both sides prefilled alike by the report's rule (app/contract/report/prefill.ts) */
  alike: boolean;
  /** why not, speculative side first ("prefill at 3245 tok/s vs 824 tok/s, 2048 prompt tokens each"); null when alike */
  why: string | null;
}

/** What the report's rule reads of a reply's figures, as a chat's JSON export records them. */
function prefillFigures(stats: ReplyStats): PrefillFigures {
  return {
    promptTokens: stats.promptTokens,
    reusedPromptTokens: stats.reusedPromptTokens ?? null,
    ttftMs: stats.ttftMs,
    prefillTokensPerSecond: stats.prefillTokensPerSecond,
  };
}

/**
 * Whether the two replies' prefills are alike enough for a request-wide ratio to measure the
 * speculation: the report's rule, so that the A/B and the chat's JSON export judge a pair alike.
 */
export function comparePrefill(speculative: ReplyStats | null, control: ReplyStats | null): PrefillComparison {
  if (!speculative || !control) return { alike: false, why: 'a reply has no figures' };
  const c = comparePrefills(prefillFigures(speculative), prefillFigures(control));
  if (c.alike) return { alike: true, why: null };
  switch (c.differ) {
    case 'tokens':
      return {
        alike: false,
        why: `${c.evaluated[0]} vs ${c.evaluated[1]} prompt tokens evaluated, ${c.kept[0]} vs ${c.kept[1]} kept from the previous request`,
      };
    case 'rates':
      return {
        alike: false,
        why: `prefill at ${tokensPerSecond(c.rates[0])} vs ${tokensPerSecond(c.rates[1])}, ${c.evaluated} prompt tokens each`,
      };
    case 'rates-unknown':
      return { alike: false, why: 'the prefill rates are not recorded' };
    case 'unrecorded':
      return {
        alike: false,
        why: `the prompt tokens each side evaluated are not recorded, and the times to first token or the prefill rates are more than ${PREFILL_BAND}× apart`,
      };
  }
}

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return null;
  return a / b;
}

export function compareAb(speculative: AbSide, control: AbSide): AbResult {
  const prefill = comparePrefill(speculative.stats, control.stats);
  return {
    speculative,
    control,
    decodeSpeedup: ratio(decodeRate(speculative.stats), decodeRate(control.stats)),
    requestSpeedup: prefill.alike ? ratio(speculative.stats?.requestTokensPerSecond, control.stats?.requestTokensPerSecond) : null,
    prefill,
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
  /**
   * The request-wide figure with each side's time to first token: "request-wide 1.1× faster
   * (prefills alike; time to first token 640 ms vs 655 ms)", or why there is none
   */
  request: string;
}

function requestWords(run: AbResult): string {
  const ttft = `time to first token ${duration(run.speculative.stats?.ttftMs)} vs ${duration(run.control.stats?.ttftMs)}`;
  if (!run.prefill.alike) {
    return `no request-wide speedup: the prefills differ (${run.prefill.why}; ${ttft}), and a ratio over the whole request would measure them, not the speculation`;
  }
  return `request-wide ${speedWords(run.requestSpeedup) ?? 'speed unknown'} (prefills alike; ${ttft})`;
}

export function abVerdict(run: AbResult): AbVerdict {
  return {
    speed: speedWords(run.decodeSpeedup) ?? 'speed unknown',
    digests: run.digestsMatch === null ? 'Digests unknown' : run.digestsMatch ? 'Digests match' : 'Digests differ',
    rates: `${tokensPerSecond(decodeRate(run.speculative.stats))} vs ${tokensPerSecond(decodeRate(run.control.stats))}`,
    request: requestWords(run),
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
 * The chat's A/B runs, by the control's message id: a reply shown on the autoregressive control
 * that is a later version (Run A/B regenerates on the control) of a speculative reply to the
 * same prompt with the same sampling, the latest such before it. Read from the chat itself, so
 * an A/B belongs to its chat and survives a reload.
 */
export function abPairs(chat: Chat | null): Map<string, AbPair> {
  const pairs = new Map<string, AbPair>();
  if (!chat) return pairs;
  chat.messages.forEach((m, i) => {
    const replyTo = chat.messages[i - 1];
    if (m.role !== 'assistant' || m.strategy !== 'none' || replyTo?.role !== 'user') return;
    const branch = branchAt(chat, i);
    const speculative = branch?.tails
      .slice(0, branch.shown)
      .map((tail) => tail[0]!)
      .filter((s): s is AssistantMessage => s.role === 'assistant' && s.strategy !== 'none' && s.status === 'done' && comparable(s, m))
      .at(-1);
    if (!speculative) return;
    const result = m.status === 'done' ? compareAb(abSide(speculative), abSide(m)) : null;
    pairs.set(m.id, { replyTo: replyTo.id, speculative, control: m, result });
  });
  return pairs;
}
