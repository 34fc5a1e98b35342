// Which chat template a model file really carries. llama.cpp hands the template over as a C
// string, so a template that is not text is silently absent and one with a NUL byte is silently
// cut; an empty one renders nothing. Any of those would drop or replace the user's prompt
// without a word, so they are refused here, from the GGUF metadata itself.
import type { GgufInfo } from '../gguf/types.js';
import { ChatTemplateError } from './template.js';

export const CHAT_TEMPLATE_KEY = 'tokenizer.chat_template';

/** The model's chat template, null when it has none; throws when it has an unusable one. */
export function chatTemplateOf(gguf: GgufInfo): string | null {
  const v = gguf.metadata.get(CHAT_TEMPLATE_KEY);
  if (v === undefined) return null;
  if (v.type !== 'string') {
    const what = v.type === 'array' ? `an array of ${v.itemType}` : `a ${v.type}`;
    throw new ChatTemplateError(`the model's chat template (${CHAT_TEMPLATE_KEY}) is ${what}, not text`);
  }
  if (v.value.trim() === '') throw new ChatTemplateError(`the model's chat template (${CHAT_TEMPLATE_KEY}) is empty`);
  const nul = v.value.indexOf('\0');
  if (nul >= 0) {
    throw new ChatTemplateError(
      `the model's chat template (${CHAT_TEMPLATE_KEY}) contains a NUL byte at character ${nul} (llama.cpp would cut it there)`,
    );
  }
  return v.value;
}

/** A rendering must carry every message's text; a template that drops the prompt is refused. */
export function checkRenderedKeepsMessages(rendered: string, contents: readonly string[]): void {
  for (const content of contents) {
    if (!rendered.includes(content.trim())) {
      throw new ChatTemplateError("the model's chat template left the prompt out of its output");
    }
  }
}
