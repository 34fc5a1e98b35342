// A thinking model's reply as llama.cpp reads it. llama.cpp's template application names the
// thinking's tags for the template (thinkingStartTag, thinkingEndTags); its parser
// (common_chat_parse, the engine's parseChat) tells the reasoning from the answer. Around them:
// where in the reply's tokens the thinking ends (the token that completes an end tag, found as
// llama.cpp's reasoning budget finds it: by token ids, and by text for a tag the model wrote in
// pieces), how long it took, whether the budget ended it, and the reasoning budget itself as the
// engine's sampling takes it (llama-server's reasoning_budget_* fields).
import type { ReplyThinking } from '../contract/api/generation.js';
import type { SamplingOptions } from '../contract/engine-types.js';
import type { EngineClient } from '../engine/client.js';
import type { ChatTemplateResult, ParsedChatReply, ReasoningFormat } from '../engine/protocol.js';

/** Whether llama.cpp found thinking tags in the template: only then is a reply read for its thinking. */
export function thinks(template: ChatTemplateResult | null): template is ChatTemplateResult {
  return template !== null && template.thinkingStartTag !== '' && template.thinkingEndTags.length > 0;
}

/** Whether the generation prompt leaves the thinking open (the reply starts inside it), and the text after its start tag. */
function openedBy(template: ChatTemplateResult): { open: boolean; after: string } {
  const gp = template.generationPrompt;
  const at = gp.lastIndexOf(template.thinkingStartTag);
  if (at < 0) return { open: false, after: '' };
  const after = gp.slice(at + template.thinkingStartTag.length);
  return { open: !template.thinkingEndTags.some((end) => after.includes(end)), after };
}

/** The tags as token ids, the generation prompt's tokens as the sampler reads them first, and how many of those come after the start tag. */
export interface ThinkingSeqs {
  start: number[];
  ends: number[][];
  prefill: number[];
  /** tokens of the prefill after its start tag: llama.cpp's budget counts them (0 where the prompt does not open the thinking) */
  prefillAfterStart: number;
}

async function tokenize(engine: EngineClient, modelId: string, text: string): Promise<number[]> {
  return Array.from(await engine.call('tokenize', { modelId, text, addSpecial: false, parseSpecial: true }));
}

/**
 * The template's thinking tags in token ids, and the generation prompt's tokens as
 * common_sampler_init feeds them to the reasoning budget: a leading space token the tokenizer
 * adds before a special token is left out, as there.
 */
export async function thinkingSeqs(engine: EngineClient, modelId: string, template: ChatTemplateResult): Promise<ThinkingSeqs> {
  const start = await tokenize(engine, modelId, template.thinkingStartTag);
  const ends = await Promise.all(template.thinkingEndTags.map((t) => tokenize(engine, modelId, t)));
  const gp = template.generationPrompt;
  let prefill = gp === '' ? [] : await tokenize(engine, modelId, gp);
  if (prefill.length > 0 && !/^\s/.test(gp)) {
    const first = await engine.call('detokenize', { modelId, tokens: Int32Array.of(prefill[0]!), renderSpecial: true });
    if (/^\s/.test(first)) prefill = prefill.slice(1);
  }
  let prefillAfterStart = 0;
  if (openedBy(template).open) {
    // after the last place the start tag's ids end in the prefill
    for (let i = prefill.length - start.length; i >= 0; i--) {
      if (start.every((id, j) => prefill[i + j] === id)) {
        prefillAfterStart = prefill.length - i - start.length;
        break;
      }
    }
  }
  return { start, ends, prefill, prefillAfterStart };
}

/**
 * The engine's reasoning budget for a reply: after `tokens` tokens of thinking the sampler
 * forces `message` and the template's first end tag (llama-server's reasoning_budget_tokens,
 * its message empty by default).
 */
export function reasoningBudget(
  template: ChatTemplateResult,
  seqs: ThinkingSeqs,
  tokens: number,
  message = '',
): NonNullable<SamplingOptions['reasoningBudget']> {
  return { tokens, start: template.thinkingStartTag, ends: [...template.thinkingEndTags], message, prefill: seqs.prefill.slice(0, 256) };
}

/**
 * A reply's text split at its thinking's tags: what llama.cpp's parser cannot read (a byte that
 * ends no character inside the thinking stops its grammar) is still told apart this way.
 */
export function splitAtTags(template: ChatTemplateResult, text: string): { content: string; reasoningContent: string } {
  let rest = text;
  if (!openedBy(template).open) {
    const at = text.indexOf(template.thinkingStartTag);
    if (at < 0) return { content: text, reasoningContent: '' };
    rest = text.slice(at + template.thinkingStartTag.length);
  }
  let end = -1;
  let tag = '';
  for (const t of template.thinkingEndTags) {
    const at = rest.indexOf(t);
    if (at >= 0 && (end < 0 || at < end)) [end, tag] = [at, t];
  }
  if (end < 0) return { content: '', reasoningContent: rest.trim() };
  return { reasoningContent: rest.slice(0, end).trim(), content: rest.slice(end + tag.length).trimStart() };
}

/** Reads a reply's tokens with the template's parser (partial: the reply so far). */
export type ReplyParser = (tokens: readonly number[], partial: boolean) => Promise<ParsedChatReply>;

export function replyParser(
  engine: EngineClient,
  modelId: string,
  template: ChatTemplateResult,
  stops: readonly string[],
  reasoningFormat?: ReasoningFormat,
): ReplyParser {
  return (tokens, partial) =>
    engine.call('parseChat', {
      modelId,
      tokens: Int32Array.from(tokens),
      format: template.format,
      parser: template.parser,
      generationPrompt: template.generationPrompt,
      preservedTokens: template.preservedTokens,
      stops: [...stops],
      partial,
      ...(reasoningFormat !== undefined ? { reasoningFormat } : {}),
    });
}

/**
 * Where the thinking of a reply ends, token by token as the reply comes: at the token that
 * completes one of the end tags after the thinking began (opened by the generation prompt, or by
 * the reply writing the start tag). Matched on the token ids (a tag that is one special token
 * has no text) and on the text (a tag the model wrote in pieces).
 */
export class ThinkingTracker {
  private readonly ids: number[] = [];
  private inside: boolean;
  /** reply tokens before the thinking's first counted token */
  private startIndex = 0;
  private text = '';
  /** tokens from the reply's first through the end tag; null while it thinks */
  private end: number | null = null;
  private endMs: number | null = null;
  private forcedEnd = false;

  constructor(
    private readonly template: ChatTemplateResult,
    private readonly seqs: ThinkingSeqs,
    /** the budget the sampler enforces (null: none) */
    private readonly budget: number | null,
    /** when the reply started (Date.now()) */
    private readonly startedAt: number,
  ) {
    this.inside = openedBy(template).open;
  }

  /** whether the reply has begun to think */
  get began(): boolean {
    return this.inside || this.end !== null;
  }

  get done(): boolean {
    return this.end !== null;
  }

  /** Reads the reply's next tokens (their ids and text). */
  push(ids: readonly number[], texts: readonly string[], now = Date.now()): void {
    ids.forEach((id, i) => {
      this.ids.push(id);
      if (this.end !== null) return;
      const piece = texts[i] ?? '';
      if (!this.inside) {
        this.text += piece;
        if (this.tailIs(this.seqs.start) || this.text.includes(this.template.thinkingStartTag)) {
          this.inside = true;
          this.startIndex = this.ids.length;
          this.text = '';
        }
        return;
      }
      this.text += piece;
      if (this.seqs.ends.some((seq) => this.tailIs(seq)) || this.template.thinkingEndTags.some((tag) => this.text.includes(tag))) {
        this.end = this.ids.length;
        this.endMs = Math.max(0, now - this.startedAt);
        // llama.cpp's budget counts each thinking token before the one that ends it, the
        // prefill's after the start tag included; a natural end comes while some remain
        const counted = this.ids.length - 1 - this.startIndex + (this.startIndex === 0 ? this.seqs.prefillAfterStart : 0);
        this.forcedEnd = this.budget !== null && counted >= this.budget;
      }
    });
  }

  private tailIs(seq: readonly number[]): boolean {
    if (seq.length === 0 || seq.length > this.ids.length) return false;
    const from = this.ids.length - seq.length;
    return seq.every((id, j) => this.ids[from + j] === id);
  }

  /** The thinking as the reply stands, with the parser's reasoning text; undefined when the reply has not thought. */
  thinking(reasoning: string): ReplyThinking | undefined {
    if (!this.began && reasoning === '') return undefined;
    return {
      text: reasoning,
      tokens: this.end ?? this.ids.length,
      done: this.end !== null,
      ms: this.endMs,
      forced: this.forcedEnd,
    };
  }
}

/** A reply read as it streams: its answer and its thinking. */
export interface ThinkingRead {
  content: string;
  thinking?: ReplyThinking;
}

/**
 * A thinking reply as it comes: each batch's tokens go to the tracker at once; `read` parses the
 * reply so far (or whole) and gives the answer (empty while it thinks) and the thinking.
 */
export class ThinkingReply {
  private readonly tokens: number[] = [];
  private readonly texts: string[] = [];

  constructor(
    private readonly parse: ReplyParser,
    readonly tracker: ThinkingTracker,
    private readonly template: ChatTemplateResult,
  ) {}

  push(ids: readonly number[], texts: readonly string[]): void {
    this.tokens.push(...ids);
    ids.forEach((_, i) => this.texts.push(texts[i] ?? ''));
    this.tracker.push(ids, texts);
  }

  /**
   * The reply so far (`final`: the whole reply). A reply that ended inside its thinking (stopped,
   * cut by maxTokens) keeps its thinking and has no answer. Where the parser refuses the text (a
   * character the reply never finished) the reply is split at the tracker's boundary instead.
   */
  async read(final: boolean): Promise<ThinkingRead> {
    const { began, done } = this.tracker;
    let parsed: { content: string; reasoningContent: string };
    try {
      parsed = await this.parse(this.tokens, !final || (began && !done));
      // a parser stopped by what it cannot read gives nothing of a reply that has text
      if (parsed.content === '' && parsed.reasoningContent === '' && this.texts.join('').trim() !== '') parsed = this.split();
    } catch {
      parsed = this.split();
    }
    const reasoning = parsed.reasoningContent !== '' || done || !began ? parsed.reasoningContent : parsed.content;
    const thinking = this.tracker.thinking(reasoning);
    return {
      content: thinking && !thinking.done ? '' : parsed.content,
      ...(thinking ? { thinking } : {}),
    };
  }

  /** the reply's text split at the thinking's end, without its tags */
  private split(): { content: string; reasoningContent: string } {
    const { began, done } = this.tracker;
    if (!began) return { content: this.texts.join(''), reasoningContent: '' };
    const at = done ? this.tracker.thinking('')!.tokens : this.texts.length;
    let thought = this.texts.slice(0, at).join('');
    const start = thought.indexOf(this.template.thinkingStartTag);
    if (start >= 0) thought = thought.slice(start + this.template.thinkingStartTag.length);
    for (const end of this.template.thinkingEndTags) if (thought.endsWith(end)) thought = thought.slice(0, -end.length);
    return { content: this.texts.slice(at).join('').trimStart(), reasoningContent: thought.trim() };
  }
}
