// Whether a draft model can propose tokens for a target: the proposals are token ids, so both
// must share the tokenizer exactly (type, size, special tokens, every token's bytes).
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

interface TokenList {
  text: readonly string[];
  raw: ReadonlyMap<number, Uint8Array> | undefined;
}

function tokens(info: GgufInfo): TokenList | undefined {
  const v = meta(info, 'tokenizer.ggml.tokens');
  return v && v.type === 'array' && v.itemType === 'string' ? { text: v.value, raw: v.raw } : undefined;
}

/** A token's bytes as stored in the file (decoded text loses invalid UTF-8). */
function tokenBytes(list: TokenList, i: number): Uint8Array {
  return list.raw?.get(i) ?? Buffer.from(list.text[i]!, 'utf8');
}

function sameToken(a: TokenList, b: TokenList, i: number): boolean {
  if (a.text[i] !== b.text[i]) return false;
  if (!a.raw?.has(i) && !b.raw?.has(i)) return true;
  return Buffer.from(tokenBytes(a, i)).equals(tokenBytes(b, i));
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
  if (tTokens.text.length !== dTokens.text.length) {
    return no(`vocabulary size differs (target ${tTokens.text.length}, draft ${dTokens.text.length})`);
  }
  for (const key of ['bos_token_id', 'eos_token_id', 'eot_token_id']) {
    const t = scalar(target, `tokenizer.ggml.${key}`);
    const d = scalar(draft, `tokenizer.ggml.${key}`);
    if (t !== d) return no(`special token ${key} differs (target ${t}, draft ${d})`);
  }
  // compared as bytes: two different invalid byte sequences decode to the same text
  const mismatch = tTokens.text.findIndex((_, i) => !sameToken(tTokens, dTokens, i));
  if (mismatch >= 0) {
    if (tTokens.text[mismatch] !== dTokens.text[mismatch]) {
      return no(`token ${mismatch} differs (target '${tTokens.text[mismatch]}', draft '${dTokens.text[mismatch]}')`);
    }
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    return no(`token ${mismatch} differs in its bytes (target 0x${hex(tokenBytes(tTokens, mismatch))}, draft 0x${hex(tokenBytes(dTokens, mismatch))})`);
  }
  return { architecture, compatible: true };
}
