// Turns the user's prompt into the token ids the model sees: raw text, the model's chat
// template around one user message, or ids given directly.
import { readFile, stat } from 'node:fs/promises';

import { PowerError } from '../contract/api/errors.js';
import { MEDIA_MARKER, type MediaPrompt, type NativeModelInfo, type Tokens } from '../engine/protocol.js';
import { promptSizeProblem } from './resource-limits.js';
import { ChatTemplateError } from '../chat/template.js';
import { renderChatBounded } from '../chat/template-budget.js';
import { chatTemplateOf, checkRenderedKeepsMessages } from '../chat/template-source.js';
import type { EngineClient } from '../engine/client.js';
import type { GgufInfo } from '../gguf/types.js';
import { longestTokenBytes } from '../models/vocab-limits.js';

export type PromptSource = { kind: 'text'; text: string } | { kind: 'file'; path: string } | { kind: 'tokens'; tokens: number[] };

export interface PromptOptions {
  /** no chat template: the text goes to the model as it is */
  raw: boolean;
  /** the context the prompt must fit: a text too long for it is refused before tokenising */
  contextSize: number;
  /** cancels a template rendering in progress (a CancelledError) */
  signal?: AbortSignal;
}

async function sourceText(
  source: Exclude<PromptSource, { kind: 'tokens' }>,
  sizeProblem: (bytes: number) => string | null,
): Promise<string> {
  if (source.kind === 'text') return source.text;
  let st;
  try {
    st = await stat(source.path);
  } catch (error) {
    throw new PowerError('bad-input', `cannot read the prompt file ${source.path}: ${(error as Error).message}`);
  }
  // a FIFO or a device (/dev/zero) has no size to check and may never end
  if (!st.isFile()) throw new PowerError('bad-input', `the prompt file ${source.path} is not a regular file`);
  const problem = sizeProblem(st.size);
  if (problem) throw new PowerError('bad-input', problem.replace('the prompt is', `the prompt file ${source.path} is`));
  try {
    return await readFile(source.path, 'utf8');
  } catch (error) {
    throw new PowerError('bad-input', `cannot read the prompt file ${source.path}: ${(error as Error).message}`);
  }
}

/** The prompt as the model reads it, before tokenising: the template's text or the raw text. */
interface RenderedPrompt {
  text: string;
  addSpecial: boolean;
  parseSpecial: boolean;
}

async function renderPrompt(
  engine: EngineClient,
  modelId: string,
  info: NativeModelInfo,
  gguf: GgufInfo,
  source: Exclude<PromptSource, { kind: 'tokens' }>,
  options: PromptOptions,
  warn: (line: string) => void,
  /** put before the user's text (the image markers of a prompt with images) */
  prefix = '',
): Promise<RenderedPrompt> {
  const longest = longestTokenBytes(gguf);
  const sizeProblem = (bytes: number) => promptSizeProblem(bytes, options.contextSize, longest);
  const typed = await sourceText(source, sizeProblem);
  if (typed.length === 0) throw new PowerError('bad-input', 'the prompt is empty');
  const text = prefix + typed;
  const problem = sizeProblem(Buffer.byteLength(text));
  if (problem) throw new PowerError('bad-input', problem);
  let template: string | null;
  try {
    template = options.raw ? null : chatTemplateOf(gguf);
  } catch (error) {
    if (error instanceof ChatTemplateError) throw new PowerError('bad-input', `${error.message} (use --raw to send the prompt as it is)`);
    throw error;
  }
  if (template === null) {
    if (!options.raw) warn('the model has no chat template: the prompt is used as raw text');
    return { text, addSpecial: true, parseSpecial: false };
  }
  const special = async (id: number): Promise<string> =>
    id < 0 ? '' : engine.call('detokenize', { modelId, tokens: Int32Array.of(id), renderSpecial: true });
  const bos = await special(info.bos);
  let rendered: string;
  try {
    const messages = [{ role: 'user' as const, content: text }];
    rendered = await renderChatBounded(template, messages, { bos, eos: await special(info.eos) }, undefined, options.signal);
    checkRenderedKeepsMessages(rendered, [text]);
  } catch (error) {
    if (error instanceof ChatTemplateError) throw new PowerError('bad-input', `${error.message} (use --raw to skip it)`);
    throw error;
  }
  // a template that writes the BOS text itself must not get a second BOS
  const addSpecial = info.addBos && !(bos !== '' && rendered.startsWith(bos));
  return { text: rendered, addSpecial, parseSpecial: true };
}

export async function buildPrompt(
  engine: EngineClient,
  modelId: string,
  info: NativeModelInfo,
  gguf: GgufInfo,
  source: PromptSource,
  options: PromptOptions,
  warn: (line: string) => void,
): Promise<Tokens> {
  if (source.kind === 'tokens') {
    const bad = source.tokens.find((t) => t >= info.vocabSize);
    if (bad !== undefined)
      throw new PowerError('bad-input', `--prompt-tokens: token ${bad} is outside the vocabulary (size ${info.vocabSize})`);
    return Int32Array.from(source.tokens);
  }
  const { text, addSpecial, parseSpecial } = await renderPrompt(engine, modelId, info, gguf, source, options, warn);
  return engine.call('tokenize', { modelId, text, addSpecial, parseSpecial });
}

/**
 * A prompt with images: one MEDIA_MARKER per image (on a line of its own) before the user's text,
 * in the template as for a text prompt. llama.cpp's multimodal library tokenizes the text around
 * the markers in the engine, special tokens parsed (a raw prompt's too).
 */
export async function buildMediaPrompt(
  engine: EngineClient,
  modelId: string,
  info: NativeModelInfo,
  gguf: GgufInfo,
  source: PromptSource,
  images: MediaPrompt['images'],
  options: PromptOptions,
  warn: (line: string) => void,
): Promise<MediaPrompt> {
  if (source.kind === 'tokens')
    throw new PowerError('bad-input', 'images go with a text prompt (--prompt or --prompt-file), not --prompt-tokens');
  const prefix = images.map(() => `${MEDIA_MARKER}\n`).join('');
  const { text, addSpecial } = await renderPrompt(engine, modelId, info, gguf, source, options, warn, prefix);
  return { text, images, addSpecial };
}
