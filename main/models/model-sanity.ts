// Things llama.cpp accepts while loading and then aborts on at the first decode (or computes
// garbage from): tensors with a zero-size dimension (e.g. an empty vocabulary embedding), an
// empty vocabulary, and hyperparameters that are not finite numbers (a NaN norm epsilon).
import type { GgufInfo } from '../gguf/types.js';

/** null when the model looks usable, else the first problem found. */
export function modelSanityProblem(info: GgufInfo, architecture: string): string | null {
  for (const t of info.tensors) {
    if (t.shape.some((d) => d === 0)) return `tensor "${t.name}" has a zero-size dimension [${t.shape.join(', ')}]`;
  }
  const tokens = info.metadata.get('tokenizer.ggml.tokens');
  if (tokens?.type === 'array' && tokens.value.length === 0) return 'the vocabulary (tokenizer.ggml.tokens) is empty';
  for (const [key, v] of info.metadata) {
    if (!key.startsWith(`${architecture}.`)) continue;
    const values = v.type === 'f32' || v.type === 'f64' ? [v.value] : v.type === 'array' && (v.itemType === 'f32' || v.itemType === 'f64') ? v.value : [];
    const bad = values.find((x) => !Number.isFinite(x));
    if (bad !== undefined) return `hyperparameter ${key} is ${bad}, not a finite number`;
  }
  return null;
}
