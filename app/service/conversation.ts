// A chat as the token ids the model sees. A model with its own chat template (Jinja from the GGUF)
// is prompted as llama-server prompts it: llama.cpp's template application (the engine's
// applyChat: common_chat_templates_apply, enable_thinking true unless a reply turns thinking
// off), which also says what the reply needs: its format and parser, its generation prompt, its
// thinking tags. The template is code from the model file: before llama.cpp renders it, it is
// rendered here by @huggingface/jinja in a child process with a time, heap and output budget
// (app/chat/template-budget.ts), the guard that refuses a template that loops or explodes
// before it can hang the engine. A model without one gets ChatML, what llama.cpp's server falls
// back to (the same text; docs/app.md "Chat templates"). ChatML's end-of-turn marker `<|im_end|>` is then, for
// most such models (Gemma 3 270M base), no token of theirs: the model can only write it as text
// and never ends its turn with an end-of-generation token, so the reply stops where its text
// reaches the marker (`stops()`: a stop string of runRequest), the marker not shown. Across
// turns the ids of the previous prompt and of the reply the model itself generated are kept as
// they were (when the new rendering extends that text), so the engine finds them in its
// KV/recurrent state and evaluates only the new part.
import { PowerError } from '../contract/api/errors.js';
import type { Chat } from '../contract/api/chats.js';
import type { ChatImage } from '../contract/images.js';
import { MEDIA_MARKER, type ChatTemplateResult, type MediaPrompt, type NativeModelInfo, type ReasoningFormat } from '../engine/protocol.js';
import { ChatTemplateError, renderChat, type ChatMessage } from '../chat/template.js';
import { renderChatBounded } from '../chat/template-budget.js';
import type { EngineClient } from '../engine/client.js';

/** the end of a turn in ChatML */
export const CHATML_END = '<|im_end|>';

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '" +
  CHATML_END +
  "' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** A message of a prompt: an earlier assistant reply may carry its thinking back (llama.cpp's reasoning_content). */
export type PromptMessage = ChatMessage & { reasoning_content?: string };

/** What a template is applied with beyond the messages (llama-server's request fields). */
export interface TemplateOptions {
  /** the template's enable_thinking (absent: true) */
  enableThinking?: boolean;
  /** more variables for the template (chat_template_kwargs) */
  chatTemplateKwargs?: Record<string, unknown>;
  /** how the reply's reasoning is told apart (absent: auto) */
  reasoningFormat?: ReasoningFormat;
}

/** A model's chat template applied by llama.cpp to OpenAI-form messages, with tools or none. */
export interface TemplateRequest extends TemplateOptions {
  messages: readonly unknown[];
  tools?: readonly unknown[];
  toolChoice?: 'auto' | 'none' | 'required';
  parallelToolCalls?: boolean;
}

/** Text already tokenized: a rendered prefix and its ids. */
export interface TokenMemo {
  text: string;
  tokens: number[];
}

/**
 * The messages a reply answers: the system prompt, then every message before `upTo`. A user
 * message's images are the media marker each, before its text, one part a line (as /v1 joins an
 * image_url part and a text part); promptImages gives their images in the same order. An
 * assistant reply that thought carries its thinking as reasoning_content: the template keeps or
 * drops it as it was written to.
 */
export function promptMessages(chat: Chat, upTo: number): PromptMessage[] {
  const out: PromptMessage[] = [];
  if (chat.systemPrompt) out.push({ role: 'system', content: chat.systemPrompt });
  for (const m of chat.messages.slice(0, upTo)) {
    const images = m.role === 'user' ? (m.images ?? []) : [];
    const content = images.length > 0 ? [...images.map(() => MEDIA_MARKER), ...(m.content ? [m.content] : [])].join('\n') : m.content;
    const thinking = m.role === 'assistant' ? m.thinking?.text : undefined;
    out.push({ role: m.role, content, ...(thinking ? { reasoning_content: thinking } : {}) });
  }
  return out;
}

/** The images of the messages before `upTo`, in the order promptMessages places their markers. */
export function promptImages(chat: Chat, upTo: number): ChatImage[] {
  return chat.messages.slice(0, upTo).flatMap((m) => (m.role === 'user' ? (m.images ?? []) : []));
}

export class Conversation {
  /** memos of this model load, longest text first when looked up */
  private memos: TokenMemo[] = [];
  private stopStrings: Promise<string[]> | null = null;

  constructor(
    readonly engine: EngineClient,
    readonly modelId: string,
    private readonly info: NativeModelInfo,
  ) {}

  /** The prompt's text (what `prompt` tokenizes). */
  async render(messages: readonly PromptMessage[], options: TemplateOptions = {}): Promise<string> {
    return (await this.apply(messages, options)).text;
  }

  /**
   * The prompt's text and, for a model with its own template, what llama.cpp's application of it
   * says the reply needs (null: the ChatML fallback, rendered here).
   */
  async apply(
    messages: readonly PromptMessage[],
    options: TemplateOptions = {},
  ): Promise<{ text: string; template: ChatTemplateResult | null }> {
    if (this.info.chatTemplate === null) {
      try {
        return { text: renderChat(CHATML_TEMPLATE, messages, await this.specialTokens()), template: null };
      } catch (error) {
        if (error instanceof ChatTemplateError) throw new PowerError('unsupported', error.message);
        throw error;
      }
    }
    const template = await this.applyTemplate({ messages, ...options });
    return { text: template.prompt, template };
  }

  /**
   * llama.cpp's application of the model's template (tools given or none), after the bounded
   * rendering here has shown that the template finishes within its budget. The one way chat
   * replies and /v1 (with tools or without) apply a model's template.
   */
  async applyTemplate(request: TemplateRequest): Promise<ChatTemplateResult> {
    if (this.info.chatTemplate !== null) await this.guard(request.messages);
    return this.engine.call('applyChat', {
      modelId: this.modelId,
      messages: [...request.messages],
      tools: [...(request.tools ?? [])],
      toolChoice: request.toolChoice ?? 'auto',
      ...(request.parallelToolCalls !== undefined ? { parallelToolCalls: request.parallelToolCalls } : {}),
      // as llama.cpp renders templates: a template that reads enable_thinking never sees it undefined
      enableThinking: request.enableThinking ?? true,
      ...(request.chatTemplateKwargs !== undefined ? { chatTemplateKwargs: request.chatTemplateKwargs } : {}),
      ...(request.reasoningFormat !== undefined ? { reasoningFormat: request.reasoningFormat } : {}),
    });
  }

  /**
   * The template rendered here with its budget: one that loops, explodes or builds too much is
   * refused with the reason. One that fails in a way of its own (a raise_exception, a filter
   * @huggingface/jinja lacks) is llama.cpp's to judge: it renders it next, and says why not.
   */
  private async guard(messages: readonly unknown[]): Promise<void> {
    const plain = messages.map((m) => {
      const message = m as { content?: unknown };
      return { ...message, content: contentText(message.content) } as ChatMessage;
    });
    try {
      await renderChatBounded(this.info.chatTemplate!, plain, await this.specialTokens());
    } catch (error) {
      if (!(error instanceof ChatTemplateError)) throw error;
      if (/^the model's chat template (does not parse|failed to render):/.test(error.message)) return;
      throw new PowerError('unsupported', error.message);
    }
  }

  private async specialTokens(): Promise<{ bos: string; eos: string }> {
    const special = async (id: number): Promise<string> =>
      id < 0 ? '' : this.engine.call('detokenize', { modelId: this.modelId, tokens: Int32Array.of(id), renderSpecial: true });
    return { bos: await special(this.info.bos), eos: await special(this.info.eos) };
  }

  /**
   * The prompt of a reply to `messages`: the rendered text, its ids, and what the template says
   * the reply needs. The one way chat replies and /v1/chat/completions turn messages into tokens.
   */
  async prompt(
    messages: readonly PromptMessage[],
    options: TemplateOptions = {},
  ): Promise<TokenMemo & { template: ChatTemplateResult | null }> {
    const { text, template } = await this.apply(messages, options);
    return { text, tokens: await this.tokens(text), template };
  }

  /**
   * The stop strings a reply needs: under the ChatML fallback its end-of-turn marker, unless the
   * model has it as its own end-of-generation token (then the engine stops there); none when
   * the model has a template of its own (llama.cpp's application of it may add some: its
   * additionalStops).
   */
  stops(): Promise<string[]> {
    if (this.stopStrings) return this.stopStrings;
    const asked = (async () => {
      if (this.info.chatTemplate !== null) return [];
      const ids = await this.engine.call('tokenize', { modelId: this.modelId, text: CHATML_END, addSpecial: false, parseSpecial: true });
      const endToken = ids.length === 1 && (ids[0] === this.info.eos || ids[0] === this.info.eot);
      return endToken ? [] : [CHATML_END];
    })();
    this.stopStrings = asked;
    // a failed look-up (the engine went away) is asked again next time
    asked.catch(() => {
      if (this.stopStrings === asked) this.stopStrings = null;
    });
    return asked;
  }

  /** The prompt ids of `text`, reusing the longest memo that is a prefix of it. */
  async tokens(text: string): Promise<number[]> {
    const memo = this.memos.filter((m) => text.startsWith(m.text)).sort((a, b) => b.text.length - a.text.length)[0];
    if (memo) {
      const rest = text.slice(memo.text.length);
      const more = rest ? await this.tokenize(rest, false) : [];
      return [...memo.tokens, ...more];
    }
    return this.tokenize(text, await this.addsBos(text));
  }

  /**
   * The prompt of a reply to `messages` that hold images (one MEDIA_MARKER each in their text):
   * the rendered text with the same BOS rule as `tokens`, tokenized in the engine with the images.
   */
  async mediaPrompt(
    messages: readonly PromptMessage[],
    images: MediaPrompt['images'],
    options: TemplateOptions = {},
  ): Promise<{ media: MediaPrompt; template: ChatTemplateResult | null }> {
    const { text, template } = await this.apply(messages, options);
    return { media: { text, images: [...images], addSpecial: await this.addsBos(text) }, template };
  }

  /** Whether tokenizing `text` adds the model's BOS: a template that writes the BOS text itself must not get a second one. */
  private async addsBos(text: string): Promise<boolean> {
    const bos =
      this.info.bos >= 0
        ? await this.engine.call('detokenize', { modelId: this.modelId, tokens: Int32Array.of(this.info.bos), renderSpecial: true })
        : '';
    return this.info.addBos && !(bos !== '' && text.startsWith(bos));
  }

  /** Remembers a prompt and the reply generated after it (the model's own ids). */
  remember(prompt: TokenMemo, reply: { text: string; tokens: number[] } | null): void {
    const add = (m: TokenMemo) => {
      this.memos = [m, ...this.memos.filter((x) => x.text !== m.text)].slice(0, 8);
    };
    add(prompt);
    if (reply && reply.tokens.length > 0) add({ text: prompt.text + reply.text, tokens: [...prompt.tokens, ...reply.tokens] });
  }

  private async tokenize(text: string, addSpecial: boolean): Promise<number[]> {
    return Array.from(await this.engine.call('tokenize', { modelId: this.modelId, text, addSpecial, parseSpecial: true }));
  }
}

/** a message's content as text: OpenAI's text parts joined (the guard's rendering takes text) */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')).join('\n');
}
