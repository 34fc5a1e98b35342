// The service's counters for `GET /metrics` of `power serve`: every reply (a chat's or a /v1
// completion's) adds its outcome; the text is Prometheus' exposition format under llama-server's
// names (`llamacpp:*`), so a dashboard made for llama-server reads Power's. What Power cannot
// count as llama-server does is said in its HELP line.
import type { ReplySlot } from './reply-slot.js';
import type { RequestOutcome } from './request.js';

interface Item {
  name: string;
  help: string;
  value: number;
}

export class ServiceMetrics {
  private promptTokens = 0;
  private promptCached = 0;
  private promptUs = 0;
  private predicted = 0;
  private predictUs = 0;
  private decodes = 0;
  private tokensMax = 0;
  private drafted = 0;
  private accepted = 0;
  private drafts = 0;
  private readonly acceptedAt: number[] = [];

  constructor(private readonly slot: ReplySlot) {}

  /** A reply ended (done, stopped or at a stop string): its prompt, tokens, times and proposals count. */
  record(outcome: RequestOutcome): void {
    const { native, stats } = outcome;
    this.promptTokens += native.promptTokens - native.reusedTokens;
    this.promptCached += native.reusedTokens;
    this.promptUs += native.prefillUs;
    this.predicted += outcome.tokens.length;
    this.predictUs += Math.max(0, native.totalUs - native.prefillUs);
    // the prompt's pass, then one target pass per round after the first token
    this.decodes += native.promptTokens > native.reusedTokens ? 1 : 0;
    this.decodes += Math.max(0, outcome.roundCount - 1);
    this.tokensMax = Math.max(this.tokensMax, native.promptTokens + native.generated);
    this.drafted += stats.proposed;
    this.accepted += stats.accepted;
    this.drafts += stats.rounds;
    outcome.acceptedPerPosition.forEach((n, i) => (this.acceptedAt[i] = (this.acceptedAt[i] ?? 0) + n));
  }

  /** The counters and gauges in Prometheus' text format (version 0.0.4). */
  prometheus(): string {
    const holder = this.slot.holder()?.owner.kind;
    const counters: Item[] = [
      { name: 'prompt_tokens_total', help: 'Number of prompt tokens processed, excluding cached tokens', value: this.promptTokens },
      { name: 'prompt_tokens_cached_total', help: 'Number of prompt tokens reused from the cache', value: this.promptCached },
      { name: 'prompt_seconds_total', help: 'Total time spent processing prompts', value: this.promptUs / 1e6 },
      { name: 'tokens_predicted_total', help: 'Number of generation tokens processed', value: this.predicted },
      { name: 'tokens_predicted_seconds_total', help: 'Total time spent generating tokens', value: this.predictUs / 1e6 },
      {
        name: 'n_decode_total',
        help: "Target passes: one per prompt evaluation and one per speculative round (each verifies the round's proposals)",
        value: this.decodes,
      },
      { name: 'n_tokens_max', help: 'Largest observed sequence length (prompt + generation)', value: this.tokensMax },
      { name: 'spec_decode_num_draft_tokens_total', help: 'Speculative: Total draft tokens generated', value: this.drafted },
      {
        name: 'spec_decode_num_accepted_tokens_total',
        help: 'Speculative: Total draft tokens accepted by the target model',
        value: this.accepted,
      },
      { name: 'spec_decode_num_drafts_total', help: 'Speculative: Total speculative decoding verification steps', value: this.drafts },
    ];
    const gauges: Item[] = [
      {
        name: 'prompt_tokens_seconds',
        help: 'Average prompt throughput in tokens/s',
        value: this.promptUs > 0 ? this.promptTokens / (this.promptUs / 1e6) : 0,
      },
      {
        name: 'predicted_tokens_seconds',
        help: 'Average generation throughput in tokens/s',
        value: this.predictUs > 0 ? this.predicted / (this.predictUs / 1e6) : 0,
      },
      { name: 'requests_processing', help: 'Number of requests processing', value: holder === 'reply' || holder === 'completion' ? 1 : 0 },
      { name: 'requests_deferred', help: 'Number of requests deferred', value: this.slot.waitingCount() },
    ];
    const lines: string[] = [];
    const add = (type: string, items: Item[]) => {
      for (const item of items) {
        lines.push(
          `# HELP llamacpp:${item.name} ${item.help}`,
          `# TYPE llamacpp:${item.name} ${type}`,
          `llamacpp:${item.name} ${item.value}`,
        );
      }
    };
    add('counter', counters);
    add('gauge', gauges);
    if (this.acceptedAt.length > 0) {
      const name = 'llamacpp:spec_decode_num_accepted_tokens_per_pos_total';
      lines.push(`# HELP ${name} Accepted tokens per draft position`, `# TYPE ${name} counter`);
      this.acceptedAt.forEach((n, i) => lines.push(`${name}{position="${i}"} ${n}`));
    }
    return `${lines.join('\n')}\n`;
  }
}
