// A chat as the token ids the model sees. The model's own chat template (Jinja from the GGUF,
// rendered by @huggingface/jinja as `power generate` does) wraps the messages; a model without
// one gets ChatML, what llama.cpp's server falls back to (the same text; docs/app.md "Chat
// templates"). ChatML's end-of-turn marker `<|im_end|>` is then, for
// most such models (Gemma 3 270M base), no token of theirs: the model can only write it as text
// and never ends its turn with an end-of-generation token, so the reply stops where its text
// reaches the marker (`stops()`: a stop string of runRequest), the marker not shown. Across
// turns the ids of the previous prompt and of the reply the model itself generated are kept as
// they were (when the new rendering extends that text), so the engine finds them in its
// KV/recurrent state and evaluates only the new part.
import { PowerError } from '../contract/api/errors.js';
import type { Chat } from '../contract/api/chats.js';
import type { ChatImage } from '../contract/images.js';
import { MEDIA_MARKER, type MediaPrompt, type NativeModelInfo } from '../engine/protocol.js';
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

/** Text already tokenized: a rendered prefix and its ids. */
export interface TokenMemo {
  text: string;
  tokens: number[];
}

/**
 * The messages a reply answers: the system prompt, then every message before `upTo`. A user
 * message's images are the media marker each, before its text, one part a line (as /v1 joins an
 * image_url part and a text part); promptImages gives their images in the same order.
 */
export function promptMessages(chat: Chat, upTo: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (chat.systemPrompt) out.push({ role: 'system', content: chat.systemPrompt });
  for (const m of chat.messages.slice(0, upTo)) {
    const images = m.role === 'user' ? (m.images ?? []) : [];
    const content = images.length > 0 ? [...images.map(() => MEDIA_MARKER), ...(m.content ? [m.content] : [])].join('\n') : m.content;
    out.push({ role: m.role, content });
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
    private readonly engine: EngineClient,
    private readonly modelId: string,
    private readonly info: NativeModelInfo,
  ) {}

  async render(messages: ChatMessage[]): Promise<string> {
    const special = async (id: number): Promise<string> =>
      id < 0 ? '' : this.engine.call('detokenize', { modelId: this.modelId, tokens: Int32Array.of(id), renderSpecial: true });
    const tokens = { bos: await special(this.info.bos), eos: await special(this.info.eos) };
    try {
      // the model's template is code from the model file: rendered with a time, heap and output
      // budget in a child process, like power generate's; our ChatML fallback runs in place
      if (this.info.chatTemplate === null) return renderChat(CHATML_TEMPLATE, messages, tokens);
      return await renderChatBounded(this.info.chatTemplate, messages, tokens);
    } catch (error) {
      if (error instanceof ChatTemplateError) throw new PowerError('unsupported', error.message);
      throw error;
    }
  }

  /**
   * The prompt of a reply to `messages`: the rendered text and its ids. The one way chat replies
   * and /v1/chat/completions turn messages into tokens.
   */
  async prompt(messages: ChatMessage[]): Promise<TokenMemo> {
    const text = await this.render(messages);
    return { text, tokens: await this.tokens(text) };
  }

  /**
   * The stop strings a reply needs: under the ChatML fallback its end-of-turn marker, unless the
   * model has it as its own end-of-generation token (then the engine stops there); none when
   * the model has a template of its own.
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
  async mediaPrompt(messages: ChatMessage[], images: MediaPrompt['images']): Promise<MediaPrompt> {
    const text = await this.render(messages);
    return { text, images: [...images], addSpecial: await this.addsBos(text) };
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
