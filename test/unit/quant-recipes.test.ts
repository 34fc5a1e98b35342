// The recipes `power quantize` asks llama.cpp for, the pattern-file parser, and the grouping of
// tensors `power info` reports, on the synthetic models' headers (no file written).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { parseTensorTypes, quantPlan, RecipeError, STANDARD_RECIPES, tbq4Overrides } from '../../app/models/quant-recipes.js';
import { describeGroups, ggmlTypeName, nextnBlocks, tensorGroup, tensorTypesByGroup } from '../../app/models/tensor-groups.js';
import { makeLlamaModelSpec, makeQwen35ModelSpec, SYNTHETIC_MODELS, type Qwen35ModelParams } from '../../tools/models/synthetic.js';
import { infoOfSpec } from '../fixtures/gguf-info.js';

const hybrid = infoOfSpec(makeQwen35ModelSpec(SYNTHETIC_MODELS['hybrid-mtp-e256.gguf'].params as Qwen35ModelParams));
const target = infoOfSpec(makeLlamaModelSpec(SYNTHETIC_MODELS['target.gguf'].params));

/** the type the first matching override gives (undefined: none matches), as llama.cpp picks it */
const typeOf = (overrides: { pattern: string; type: string }[], name: string) =>
  overrides.find((o) => new RegExp(o.pattern).test(name))?.type;

describe('tensor groups', () => {
  test('the NextN block is the last nextn_predict_layers blocks; a model without one has none', () => {
    assert.deepEqual(nextnBlocks(hybrid), [4]);
    assert.deepEqual(nextnBlocks(target), []);
  });

  test('each tensor name goes to its part of the model', () => {
    const mtp = new Set([4]);
    const cases: [string, string][] = [
      ['blk.4.nextn.shared_head_head.weight', 'draftHead'],
      ['blk.4.nextn.eh_proj.weight', 'mtp'],
      ['blk.4.ffn_up.weight', 'mtp'],
      ['blk.4.attn_norm.weight', 'mtp'],
      ['blk.0.ffn_down.weight', 'ffn'],
      ['blk.1.ffn_gate_exps.weight', 'ffn'],
      ['blk.1.ffn_norm.weight', 'other'],
      ['blk.1.attn_q.weight', 'attention'],
      ['blk.1.attn_q_norm.weight', 'other'],
      ['blk.0.ssm_out.weight', 'other'],
      ['token_embd.weight', 'embeddings'],
      ['output.weight', 'embeddings'],
      ['output_norm.weight', 'other'],
    ];
    for (const [name, group] of cases) assert.equal(tensorGroup(name, mtp), group, name);
  });

  test('every tensor is counted once, by ggml type name; the text lists the groups that have tensors', () => {
    const groups = tensorTypesByGroup(hybrid);
    assert.equal(
      groups.reduce((n, g) => n + g.tensors, 0),
      hybrid.tensors.length,
    );
    assert.deepEqual(
      groups.find((g) => g.group === 'draftHead'),
      { group: 'draftHead', tensors: 1, types: { f32: 1 } },
    );
    const lines = describeGroups(tensorTypesByGroup(target));
    assert.ok(!lines.some((l) => l.startsWith('mtp block') || l.startsWith('draft head')), lines.join('\n'));
    assert.ok(
      lines.some((l) => /^ffn: +f32 ×12$/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(['Q6_K', 'Q4_0', 'IQ4_XS', 'BF16', 'F32'].map(ggmlTypeName), ['q6_K', 'q4_0', 'iq4_xs', 'bf16', 'f32']);
  });
});

describe('recipes', () => {
  test('tbq4: MTP block q6_K, its own head q4_K, FFN q4_0, output and embeddings q6_K, the rest the pure base q4_K', () => {
    const plan = quantPlan('TBQ4', hybrid);
    assert.deepEqual([plan.ftype, plan.pure], [STANDARD_RECIPES.q4_k_m, true]);
    const cases: [string, string | undefined][] = [
      ['blk.4.nextn.shared_head_head.weight', 'q4_K'],
      ['blk.4.ffn_up.weight', 'q6_K'],
      ['blk.4.attn_q.weight', 'q6_K'],
      ['blk.4.nextn.eh_proj.weight', 'q6_K'],
      ['blk.0.ffn_down.weight', 'q4_0'],
      ['blk.14.ffn_up.weight', 'q4_0'],
      ['output.weight', 'q6_K'],
      ['token_embd.weight', 'q6_K'],
      ['blk.1.attn_q.weight', undefined],
    ];
    for (const [name, type] of cases) assert.equal(typeOf(plan.overrides, name), type, name);
    // without a NextN block nothing is named as one
    assert.equal(typeOf(tbq4Overrides(target), 'blk.3.attn_q.weight'), undefined);
  });

  test("a pattern file's types come before the recipe's; a standard recipe keeps llama.cpp's mix", () => {
    const custom = [{ pattern: 'ffn_down', type: 'q8_0' }];
    assert.equal(typeOf(quantPlan('tbq4', hybrid, custom).overrides, 'blk.0.ffn_down.weight'), 'q8_0');
    assert.deepEqual(quantPlan('q4_k_m', target), { ftype: 15, pure: false, overrides: [] });
    assert.throws(() => quantPlan('q4_k_x', target), RecipeError);
    assert.throws(() => quantPlan('bf16', target, custom), /only over a quantized recipe/);
  });

  test('a pattern file: regex=type per line, split at the last =, comments and blank lines skipped', () => {
    assert.deepEqual(parseTensorTypes('# mix\n\n  a=b=Q4_K \r\nffn=F16\n', 'f'), [
      { pattern: 'a=b', type: 'q4_K' },
      { pattern: 'ffn', type: 'f16' },
    ]);
    assert.throws(() => parseTensorTypes('x=q4_0\n=q4_0\n', 'f'), /^Error: f:2: the pattern before '=' is empty$/);
    assert.throws(() => parseTensorTypes('x=q3_K_M\n', 'f'), /f:1: unknown tensor type 'q3_K_M'/);
  });
});
