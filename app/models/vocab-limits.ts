// Facts about a model's vocabulary that bound what a text can cost, read from the GGUF.
import type { GgufInfo } from '../gguf/types.js';

/** When the vocabulary is unknown: llama.cpp's own piece buffers are this long. */
const FALLBACK_TOKEN_BYTES = 256;

/** The byte length of the longest token string (a token never covers more text than that). */
export function longestTokenBytes(gguf: GgufInfo): number {
  const v = gguf.metadata.get('tokenizer.ggml.tokens');
  if (!v || v.type !== 'array' || v.itemType !== 'string' || v.value.length === 0) return FALLBACK_TOKEN_BYTES;
  let longest = 1;
  for (const t of v.value) longest = Math.max(longest, Buffer.byteLength(t));
  return longest;
}
