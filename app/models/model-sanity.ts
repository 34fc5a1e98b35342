// Things llama.cpp accepts while loading and then aborts on at the first decode (or computes
// garbage from): tensors with a zero-size dimension (e.g. an empty vocabulary embedding), an
// empty vocabulary, and hyperparameters that are not finite numbers (a NaN norm epsilon).
import type { GgufInfo } from '../gguf/types.js';

// llama_token_type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
const TEXT_TOKEN_TYPES = new Set([1, 4, 6]);

/**
 * A vocabulary a reply cannot be made of: every token is a control, unknown or unused token, or
 * an end of generation (llama.cpp loads such a file, then throws on the first text it meets).
 */
function unusableVocabulary(info: GgufInfo): string | null {
  const tokens = info.metadata.get('tokenizer.ggml.tokens');
  const types = info.metadata.get('tokenizer.ggml.token_type');
  if (tokens?.type !== 'array' || types?.type !== 'array' || types.value.length !== tokens.value.length) return null;
  const ends = new Set(
    ['tokenizer.ggml.eos_token_id', 'tokenizer.ggml.eot_token_id', 'tokenizer.ggml.eom_token_id']
      .map((k) => info.metadata.get(k))
      .flatMap((v) => (v && typeof v.value === 'number' ? [v.value] : v && typeof v.value === 'bigint' ? [Number(v.value)] : [])),
  );
  const text = (types.value as readonly (number | bigint)[]).some((t, id) => TEXT_TOKEN_TYPES.has(Number(t)) && !ends.has(id));
  if (text) return null;
  return `the vocabulary has no token a reply can be made of (${tokens.value.length} token${tokens.value.length === 1 ? '' : 's'}: control, unknown, unused or end-of-generation only)`;
}

/** null when the model looks usable, else the first problem found. */
export function modelSanityProblem(info: GgufInfo, architecture: string): string | null {
  for (const t of info.tensors) {
    if (t.shape.some((d) => d === 0)) return `tensor "${t.name}" has a zero-size dimension [${t.shape.join(', ')}]`;
  }
  const tokens = info.metadata.get('tokenizer.ggml.tokens');
  if (tokens?.type === 'array' && tokens.value.length === 0) return 'the vocabulary (tokenizer.ggml.tokens) is empty';
  const unusable = unusableVocabulary(info);
  if (unusable) return unusable;
  for (const [key, v] of info.metadata) {
    if (!key.startsWith(`${architecture}.`)) continue;
    const values =
      v.type === 'f32' || v.type === 'f64'
        ? [v.value]
        : v.type === 'array' && (v.itemType === 'f32' || v.itemType === 'f64')
          ? v.value
          : [];
    const bad = values.find((x) => !Number.isFinite(x));
    if (bad !== undefined) return `hyperparameter ${key} is ${bad}, not a finite number`;
  }
  return null;
}
