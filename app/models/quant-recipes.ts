// `power quantize` recipes: what llama.cpp's quantizer (llama_model_quantize) is asked for. A
// standard recipe is one of llama.cpp's file types (its base tensor type and llama.cpp's own mix
// for the rest); TBQ4 is Power's artifact recipe for an MTP model; a pattern file adds per-tensor
// types (llama.cpp's --tensor-type) over either. docs/cli.md "power quantize" describes them.
import type { GgufInfo } from '../gguf/types.js';
import { nextnBlocks } from './tensor-groups.js';

/** A per-tensor type: an ECMAScript regex searched in a tensor's name (the first that matches wins). */
export interface TensorTypeOverride {
  pattern: string;
  type: string;
}

export interface QuantPlan {
  /** llama_ftype */
  ftype: number;
  /** the tensors no pattern names take the base type (no llama.cpp mix) */
  pure: boolean;
  overrides: TensorTypeOverride[];
}

/** llama.cpp's file types by the names llama-quantize takes (those that need no importance matrix). */
export const STANDARD_RECIPES: Readonly<Record<string, number>> = {
  f32: 0,
  f16: 1,
  bf16: 32,
  q4_0: 2,
  q4_1: 3,
  q5_0: 8,
  q5_1: 9,
  q8_0: 7,
  q2_k: 10,
  q3_k_s: 11,
  q3_k_m: 12,
  q3_k_l: 13,
  q4_k_s: 14,
  q4_k_m: 15,
  q5_k_s: 16,
  q5_k_m: 17,
  q6_k: 18,
  iq4_nl: 25,
  iq4_xs: 30,
  tq1_0: 36,
  tq2_0: 37,
};

/** Base recipes whose tensors are not quantized: llama.cpp applies no per-tensor type over them. */
const UNQUANTIZED_BASES: ReadonlySet<number> = new Set([0, 1, 32]);

export const RECIPE_NAMES: readonly string[] = ['tbq4', ...Object.keys(STANDARD_RECIPES)];

/**
 * Tensor types a pattern may name, as ggml names them; the very-low-bit IQ types are left out:
 * llama.cpp refuses them without an importance matrix, which power quantize does not take.
 */
export const PATTERN_TYPES: readonly string[] = [
  'f32',
  'f16',
  'bf16',
  'q4_0',
  'q4_1',
  'q5_0',
  'q5_1',
  'q8_0',
  'q2_K',
  'q3_K',
  'q4_K',
  'q5_K',
  'q6_K',
  'iq4_nl',
  'iq4_xs',
  'iq3_s',
  'tq1_0',
  'tq2_0',
  'mxfp4',
  'q1_0',
  'q2_0',
];

export class RecipeError extends Error {}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * TBQ4 for this model: its NextN/MTP block at q6_K (the draft quality MTP's acceptance rests on),
 * the MTP block's own head (the separate draft head) at q4_K, the main FFN at q4_0, the output
 * head and token embeddings at q6_K (as llama.cpp's Q4_K_M keeps its output), everything else
 * (attention, recurrent projections) at the base q4_K. Norms and 1-D tensors stay as they are.
 * Rows that a type's block does not divide fall back as llama.cpp's quantizer decides (q6_K to
 * q8_0, q4_K to q5_0 when ne0 is not a multiple of 256).
 */
export function tbq4Overrides(info: GgufInfo): TensorTypeOverride[] {
  const mtp = nextnBlocks(info);
  return [
    { pattern: '\\.nextn\\.shared_head_head\\.', type: 'q4_K' },
    ...(mtp.length > 0 ? [{ pattern: `^blk\\.(${mtp.join('|')})\\.`, type: 'q6_K' }] : []),
    { pattern: '^blk\\.\\d+\\.ffn_(gate|up|down)(_exps|_shexp)?\\.weight$', type: 'q4_0' },
    { pattern: `^${escape('output.weight')}$`, type: 'q6_K' },
    { pattern: `^${escape('token_embd.weight')}$`, type: 'q6_K' },
  ];
}

/**
 * A pattern file: one `regex=type` per line (the last `=` splits them); blank lines and lines
 * starting with `#` are skipped. A bad line is refused with its number.
 */
export function parseTensorTypes(text: string, file: string): TensorTypeOverride[] {
  const out: TensorTypeOverride[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${file}:${i + 1}`;
    const eq = line.lastIndexOf('=');
    if (eq < 0) throw new RecipeError(`${where}: expected regex=type (got '${line}')`);
    const pattern = line.slice(0, eq).trim();
    const typeName = line.slice(eq + 1).trim();
    if (pattern === '') throw new RecipeError(`${where}: the pattern before '=' is empty`);
    try {
      new RegExp(pattern);
    } catch (error) {
      throw new RecipeError(`${where}: '${pattern}' is not a regular expression (${(error as Error).message})`);
    }
    const type = PATTERN_TYPES.find((t) => t.toLowerCase() === typeName.toLowerCase());
    if (!type) throw new RecipeError(`${where}: unknown tensor type '${typeName}' (known: ${PATTERN_TYPES.join(', ')})`);
    out.push({ pattern, type });
  });
  if (out.length === 0) throw new RecipeError(`${file}: no regex=type line`);
  return out;
}

/** What llama.cpp is asked for: the recipe, with the pattern file's types ahead of the recipe's own. */
export function quantPlan(recipe: string, info: GgufInfo, custom: readonly TensorTypeOverride[] = []): QuantPlan {
  const name = recipe.toLowerCase();
  if (name === 'tbq4') return { ftype: STANDARD_RECIPES.q4_k_m!, pure: true, overrides: [...custom, ...tbq4Overrides(info)] };
  const ftype = STANDARD_RECIPES[name];
  if (ftype === undefined) throw new RecipeError(`unknown recipe '${recipe}' (known: ${RECIPE_NAMES.join(', ')})`);
  if (custom.length > 0 && UNQUANTIZED_BASES.has(ftype)) {
    throw new RecipeError(`llama.cpp applies per-tensor types only over a quantized recipe, not '${name}' (try q8_0 or q4_k_m)`);
  }
  return { ftype, pure: false, overrides: [...custom] };
}
