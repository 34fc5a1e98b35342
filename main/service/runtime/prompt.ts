// Turns the user's prompt into the token ids the model sees: raw text, the model's chat
// template around one user message, or ids given directly.
import { readFile } from 'node:fs/promises';

import { PowerError } from '../../../app/api/errors.js';
import type { NativeModelInfo, Tokens } from '../../../app/engine-protocol.js';
import { ChatTemplateError, renderChat } from '../../chat/template.js';
import type { EngineClient } from '../../engine/client.js';

export type PromptSource =
  | { kind: 'text'; text: string }
  | { kind: 'file'; path: string }
  | { kind: 'tokens'; tokens: number[] };

export interface PromptOptions {
  /** no chat template: the text goes to the model as it is */
  raw: boolean;
}

async function sourceText(source: Exclude<PromptSource, { kind: 'tokens' }>): Promise<string> {
  if (source.kind === 'text') return source.text;
  try {
    return await readFile(source.path, 'utf8');
  } catch {
    throw new PowerError('bad-input', `cannot read the prompt file ${source.path}`);
  }
}

export async function buildPrompt(
  engine: EngineClient,
  modelId: string,
  info: NativeModelInfo,
  source: PromptSource,
  options: PromptOptions,
  warn: (line: string) => void,
): Promise<Tokens> {
  if (source.kind === 'tokens') {
    const bad = source.tokens.find((t) => t >= info.vocabSize);
    if (bad !== undefined) throw new PowerError('bad-input', `--prompt-tokens: token ${bad} is outside the vocabulary (size ${info.vocabSize})`);
    return Int32Array.from(source.tokens);
  }
  const text = await sourceText(source);
  if (text.length === 0) throw new PowerError('bad-input', 'the prompt is empty');
  if (options.raw || info.chatTemplate === null) {
    if (!options.raw) warn('the model has no chat template: the prompt is used as raw text');
    return engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false });
  }
  const special = async (id: number): Promise<string> =>
    id < 0 ? '' : engine.call('detokenize', { modelId, tokens: Int32Array.of(id), renderSpecial: true });
  const bos = await special(info.bos);
  let rendered: string;
  try {
    rendered = renderChat(info.chatTemplate, [{ role: 'user', content: text }], { bos, eos: await special(info.eos) });
  } catch (error) {
    if (error instanceof ChatTemplateError) throw new PowerError('bad-input', `${error.message} (use --raw to skip it)`);
    throw error;
  }
  // a template that writes the BOS text itself must not get a second BOS
  const addSpecial = info.addBos && !(bos !== '' && rendered.startsWith(bos));
  return engine.call('tokenize', { modelId, text: rendered, addSpecial, parseSpecial: true });
}
