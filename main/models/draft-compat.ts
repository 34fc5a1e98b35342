// Whether a draft model can propose tokens for a target: the proposals are token ids, so both
// must share the tokenizer exactly (type, size, special tokens, every token string).
import type { GgufInfo, GgufValue } from '../gguf/types.js';

export interface DraftCompatibility {
  architecture: string;
  compatible: boolean;
  reason?: string;
}

function meta(info: GgufInfo, key: string): GgufValue | undefined {
  return info.metadata.get(key);
}

function scalar(info: GgufInfo, key: string): string | undefined {
  const v = meta(info, key);
  return v && v.type !== 'array' ? String(v.value) : undefined;
}

function tokens(info: GgufInfo): readonly string[] | undefined {
  const v = meta(info, 'tokenizer.ggml.tokens');
  return v && v.type === 'array' && v.itemType === 'string' ? (v.value as string[]) : undefined;
}

export function checkDraftCompatibility(target: GgufInfo, draft: GgufInfo): DraftCompatibility {
  const architecture = scalar(draft, 'general.architecture') ?? 'unknown';
  const no = (reason: string): DraftCompatibility => ({ architecture, compatible: false, reason });

  const tModel = scalar(target, 'tokenizer.ggml.model');
  const dModel = scalar(draft, 'tokenizer.ggml.model');
  if (tModel !== dModel) return no(`tokenizer type differs (target ${tModel}, draft ${dModel})`);

  const tTokens = tokens(target);
  const dTokens = tokens(draft);
  if (!tTokens || !dTokens) return no('a vocabulary is missing from the GGUF metadata');
  if (tTokens.length !== dTokens.length) {
    return no(`vocabulary size differs (target ${tTokens.length}, draft ${dTokens.length})`);
  }
  for (const key of ['bos_token_id', 'eos_token_id', 'eot_token_id']) {
    const t = scalar(target, `tokenizer.ggml.${key}`);
    const d = scalar(draft, `tokenizer.ggml.${key}`);
    if (t !== d) return no(`special token ${key} differs (target ${t}, draft ${d})`);
  }
  const mismatch = tTokens.findIndex((t, i) => t !== dTokens[i]);
  if (mismatch >= 0) {
    return no(`token ${mismatch} differs (target '${tTokens[mismatch]}', draft '${dTokens[mismatch]}')`);
  }
  return { architecture, compatible: true };
}
