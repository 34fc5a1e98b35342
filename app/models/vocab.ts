// Synthetic SentencePiece-style ("llama") vocabulary for the test models.
// llama.cpp's SPM tokenizer only reaches a piece through merges of pieces that
// are themselves in the vocabulary, so every word comes with all its prefixes.
import { gv, kv } from '../gguf/types.js';
import type { GgufEntry } from '../gguf/types.js';

/** llama.cpp `llama_token_type`. */
export const TokenType = {
  NORMAL: 1,
  UNKNOWN: 2,
  CONTROL: 3,
  USER_DEFINED: 4,
  UNUSED: 5,
  BYTE: 6,
} as const;

export const SPACE = '\u2581'; // "▁", SentencePiece's leading-space marker

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

/**
 * Phi-3 layout, so llama.cpp's built-in formatter (which detects this template
 * as "phi3") and a Jinja renderer produce the same text.
 */
export const CHAT_TEMPLATE =
  '{% for m in messages %}' +
  "{% if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('unsupported role: ' + m['role']) }}{% endif %}" +
  "<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n" +
  '{% endfor %}' +
  '{% if add_generation_prompt %}<|assistant|>\n{% endif %}';

export const DEFAULT_WORDS: readonly string[] = [
  'the',
  'and',
  'of',
  'to',
  'a',
  'in',
  'is',
  'it',
  'you',
  'that',
  'he',
  'was',
  'for',
  'on',
  'are',
  'with',
  'as',
  'I',
  'his',
  'they',
  'be',
  'at',
  'one',
  'have',
  'this',
  'from',
  'or',
  'had',
  'by',
  'not',
  'but',
  'what',
  'all',
  'were',
  'we',
  'when',
  'your',
  'can',
  'said',
  'there',
  'use',
  'an',
  'each',
  'which',
  'she',
  'do',
  'how',
  'their',
  'if',
  'will',
  'up',
  'other',
  'about',
  'out',
  'many',
  'then',
  'them',
  'these',
  'so',
  'some',
  'her',
  'would',
  'make',
  'like',
  'him',
  'into',
  'time',
  'has',
  'look',
  'two',
  'more',
  'write',
  'go',
  'see',
  'number',
  'no',
  'way',
  'could',
  'people',
  'my',
  'than',
  'first',
  'water',
  'been',
  'call',
  'who',
  'now',
  'find',
  'long',
  'down',
  'day',
  'did',
  'get',
  'come',
  'made',
  'may',
  'part',
  'hello',
  'world',
  'power',
  'model',
  'token',
  'fast',
  'speed',
  'draft',
  'target',
  'test',
  'chat',
  'answer',
  'question',
  'yes',
  'story',
  'quick',
  'brown',
  'fox',
  'jumps',
  'over',
  'lazy',
  'dog',
];

/** A short, reordered list: the "incompatible draft" vocabulary. */
export const ALT_WORDS: readonly string[] = [
  'zebra',
  'yak',
  'xylophone',
  'walrus',
  'violet',
  'umbrella',
  'tiger',
  'salmon',
  'raven',
  'quartz',
];

const PUNCTUATION = ['.', ',', '!', '?', ':', ';', "'", '"', '-', '(', ')'];
const LOWER = [...'abcdefghijklmnopqrstuvwxyz'];
const UPPER = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'];
const DIGITS = [...'0123456789'];

export interface Vocab {
  tokens: string[];
  scores: number[];
  tokenTypes: number[];
  unk: number;
  bos: number;
  eos: number;
  /** `<|end|>`: closes every chat turn. */
  eot: number;
  /** Chat control tokens by text, e.g. `<|user|>`. */
  control: Record<string, number>;
}

export interface VocabOptions {
  /** Words added as pieces with and without a leading `▁`. */
  words?: readonly string[];
}

function prefixes(word: string): string[] {
  const chars = [...word];
  return chars.map((_, i) => chars.slice(0, i + 1).join(''));
}

export function buildVocab(options: VocabOptions = {}): Vocab {
  const words = options.words ?? DEFAULT_WORDS;
  const tokens: string[] = [];
  const scores: number[] = [];
  const tokenTypes: number[] = [];
  const index = new Map<string, number>();
  const add = (text: string, type: number, score: number): void => {
    if (index.has(text)) return; // llama.cpp aborts on duplicate token strings
    index.set(text, tokens.length);
    tokens.push(text);
    scores.push(score);
    tokenTypes.push(type);
  };

  // Fixed ids 0..2 match llama.cpp's SPM defaults.
  add('<unk>', TokenType.UNKNOWN, 0);
  add('<s>', TokenType.CONTROL, 0);
  add('</s>', TokenType.CONTROL, 0);
  for (let b = 0; b < 256; b++) {
    add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, TokenType.BYTE, 0);
  }
  for (const role of CHAT_ROLES) add(`<|${role}|>`, TokenType.CONTROL, 0);
  add('<|end|>', TokenType.CONTROL, 0);

  // Merges prefer the higher score: longer pieces win, earlier (commoner) ones break ties.
  const normal: string[] = [SPACE, ...LOWER, ...UPPER, ...DIGITS, ...PUNCTUATION, ...LOWER.map((c) => SPACE + c)];
  for (const w of words) {
    normal.push(...prefixes(SPACE + w).slice(1));
    normal.push(...prefixes(w).slice(1));
  }
  normal.forEach((piece, i) => add(piece, TokenType.NORMAL, [...piece].length - i * 1e-5));

  const id = (text: string): number => {
    const v = index.get(text);
    if (v === undefined) throw new Error(`vocab has no token ${text}`);
    return v;
  };
  const control: Record<string, number> = {};
  for (const role of CHAT_ROLES) control[`<|${role}|>`] = id(`<|${role}|>`);
  control['<|end|>'] = id('<|end|>');
  return { tokens, scores, tokenTypes, unk: 0, bos: 1, eos: 2, eot: id('<|end|>'), control };
}

/** The vocabulary shared by the target and every compatible draft. */
export function makeVocab(): Vocab {
  return buildVocab();
}

/** A vocabulary that llama.cpp's draft compatibility check rejects (size differs by > 128, texts differ). */
export function makeAltVocab(): Vocab {
  return buildVocab({ words: ALT_WORDS });
}

/** `tokenizer.*` metadata for a `llama` (SPM) tokenizer. */
export function vocabMetadata(vocab: Vocab): GgufEntry[] {
  return [
    kv('tokenizer.ggml.model', gv.str('llama')),
    kv('tokenizer.ggml.tokens', gv.strings(vocab.tokens)),
    kv('tokenizer.ggml.scores', gv.f32s(vocab.scores)),
    kv('tokenizer.ggml.token_type', gv.i32s(vocab.tokenTypes)),
    kv('tokenizer.ggml.bos_token_id', gv.u32(vocab.bos)),
    kv('tokenizer.ggml.eos_token_id', gv.u32(vocab.eos)),
    kv('tokenizer.ggml.unknown_token_id', gv.u32(vocab.unk)),
    kv('tokenizer.ggml.eot_token_id', gv.u32(vocab.eot)),
    kv('tokenizer.ggml.add_bos_token', gv.bool(true)),
    kv('tokenizer.ggml.add_eos_token', gv.bool(false)),
    kv('tokenizer.chat_template', gv.str(CHAT_TEMPLATE)),
  ];
}
