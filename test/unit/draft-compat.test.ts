// Draft and artifact compatibility from GGUF headers alone (app/models/draft-compat.ts): what a
// file is, the facts it declares, and each refusal with its reason, before llama.cpp sees it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { strategyAvailability } from '../../app/contract/strategies.js';
import { gv, type GgufInfo, type GgufValue } from '../../app/gguf/types.js';
import { checkDraftCompatibility, checkDraftK, draftKind } from '../../app/models/draft-compat.js';
import { makeModelSpec, SYNTHETIC_MODELS, type SyntheticModelName } from '../../tools/models/synthetic.js';
import { infoOfSpec } from '../fixtures/gguf-info.js';

const info = (name: SyntheticModelName): GgufInfo => infoOfSpec(makeModelSpec(SYNTHETIC_MODELS[name].params), name);
const target = info('target.gguf');

function withMeta(base: GgufInfo, key: string, value: GgufValue | undefined): GgufInfo {
  const metadata = new Map(base.metadata);
  if (value === undefined) metadata.delete(key);
  else metadata.set(key, value);
  return { ...base, metadata };
}

describe('draft compatibility', () => {
  test('tells the kinds apart as llama.cpp does: the Markov head makes a dflash file dspark', () => {
    assert.equal(draftKind(info('eagle3-close.gguf')), 'eagle3');
    assert.equal(draftKind(info('dflash-close.gguf')), 'dflash');
    assert.equal(draftKind(info('dspark-close.gguf')), 'dspark');
    assert.equal(draftKind(info('draft-close.gguf')), 'draft-model');
  });

  test('accepts the synthetic artifacts for their target and reports what they declare', () => {
    const eagle3 = checkDraftCompatibility(target, info('eagle3-close.gguf'));
    assert.equal(eagle3.compatible, true, eagle3.reason);
    assert.deepEqual(eagle3.artifact?.targetLayers, [1, 2, 3]);
    assert.equal(eagle3.artifact?.targetHidden, 128);
    assert.equal(eagle3.artifact?.maxDraft, undefined);
    for (const name of ['eagle3-far.gguf', 'dflash-far.gguf'] as const) {
      const c = checkDraftCompatibility(target, info(name));
      assert.equal(c.compatible, true, c.reason);
      assert.equal(c.artifact?.ownEmbeddings, false);
    }
    const dflash = checkDraftCompatibility(target, info('dflash-close.gguf'));
    assert.equal(dflash.compatible, true, dflash.reason);
    assert.equal(dflash.artifact?.blockSize, 8);
    assert.equal(dflash.artifact?.maskToken, 0);
    assert.equal(dflash.artifact?.maxDraft, 7);
    const dspark = checkDraftCompatibility(target, info('dspark-close.gguf'));
    assert.equal(dspark.compatible, true, dspark.reason);
    assert.equal(dspark.kind, 'dspark');
    assert.equal(dspark.artifact?.sampleFromAnchor, true);
    assert.equal(dspark.artifact?.maxDraft, 8);
    // and for the hybrid: llama.cpp extracts qwen35's trunk layer inputs as well
    const hybrid = info('hybrid-mtp.gguf');
    for (const name of ['hybrid-eagle3-close.gguf', 'hybrid-dflash-close.gguf'] as const) {
      const c = checkDraftCompatibility(hybrid, info(name));
      assert.equal(c.compatible, true, c.reason);
    }
    // an artifact made for one target is refused by a target of another width
    const wider = withMeta(target, 'llama.embedding_length', gv.u32(256));
    assert.match(
      checkDraftCompatibility(wider, info('eagle3-close.gguf')).reason!,
      /made for target hidden size 128 .* the target has 256/,
    );
  });

  test('refuses another target hidden size and another vocabulary', () => {
    const hidden = checkDraftCompatibility(target, info('eagle3-wrong-hidden.gguf'));
    assert.equal(hidden.compatible, false);
    assert.match(hidden.reason!, /made for target hidden size 96 .* the target has 128/);
    const vocab = checkDraftCompatibility(target, info('eagle3-wrong-vocab.gguf'));
    assert.equal(vocab.compatible, false);
    assert.match(vocab.reason!, /vocabulary size differs \(target 882, draft \d+\)/);
  });

  test('refuses target layers the target does not have (llama.cpp would abort)', () => {
    const eagle3 = info('eagle3-close.gguf');
    const beyond = checkDraftCompatibility(target, withMeta(eagle3, 'eagle3.target_layers', gv.i32s([1, 2, 4])));
    assert.match(beyond.reason!, /reads target layer 4, but the target has layers 0\.\.3/);
    const two = checkDraftCompatibility(target, withMeta(eagle3, 'eagle3.target_layers', gv.i32s([1, 2])));
    assert.match(two.reason!, /reads exactly 3 target layers \(it declares 2\)/);
    const none = checkDraftCompatibility(target, withMeta(eagle3, 'eagle3.target_layers', undefined));
    assert.match(none.reason!, /target_layers is missing/);
    // the MTP block of the hybrid is no layer llama.cpp extracts: 4 trunk layers, ids 0..3
    const dflash = info('dflash-close.gguf');
    const hybrid = info('hybrid-mtp.gguf');
    assert.match(
      checkDraftCompatibility(hybrid, withMeta(dflash, 'dflash.target_layers', gv.i32s([1, 4]))).reason!,
      /target has layers 0\.\.3/,
    );
  });

  test('refuses a dflash whose hidden size differs, that has no mask token, or whose token map is too large', () => {
    const dflash = info('dflash-close.gguf');
    const hidden = checkDraftCompatibility(target, withMeta(dflash, 'dflash.embedding_length', gv.u32(96)));
    assert.match(hidden.reason!, /hidden size 96 differs from the target's 128/);
    const mask = checkDraftCompatibility(target, withMeta(dflash, 'tokenizer.ggml.mask_token_id', undefined));
    assert.match(mask.reason!, /no mask token/);
    const d2t = {
      ...dflash,
      tensors: [...dflash.tensors, { name: 'd2t', shape: [5000], type: 27, typeName: 'I64', offset: 0, byteSize: 40000 }],
    };
    assert.match(checkDraftCompatibility(target, d2t).reason!, /token map \(d2t\) has 5000 entries for a 882-token vocabulary/);
  });

  test('refuses a target whose graph llama.cpp does not extract features from', () => {
    const other = withMeta(target, 'general.architecture', gv.str('phi2'));
    assert.match(checkDraftCompatibility(other, info('eagle3-close.gguf')).reason!, /does not expose the layer inputs of 'phi2' targets/);
  });

  test('K against the block size: a DFlash block drafts block_size − 1, anchor-first DSpark block_size', () => {
    const dflash = checkDraftCompatibility(target, info('dflash-close.gguf'));
    assert.equal(checkDraftK(dflash, 7), undefined);
    assert.match(checkDraftK(dflash, 8)!, /K = 8 exceeds what this dflash artifact drafts in one round \(block size 8: at most 7\)/);
    const bonusAnchor = withMeta(info('dspark-close.gguf'), 'dflash.sample_from_anchor', gv.bool(false));
    assert.equal(checkDraftCompatibility(target, bonusAnchor).artifact?.maxDraft, 7);
    assert.equal(checkDraftK(checkDraftCompatibility(target, info('eagle3-close.gguf')), 64), undefined);
  });

  test('a plain llama draft is refused for eagle3, and an artifact is no plain draft model', () => {
    const plain = strategyAvailability({ nextnLayers: 0, draft: checkDraftCompatibility(target, info('draft-close.gguf')) });
    assert.match(plain.eagle3.reason!, /the draft is a plain 'llama' model, not an eagle3 artifact/);
    const eagle3 = strategyAvailability({ nextnLayers: 0, draft: checkDraftCompatibility(target, info('eagle3-close.gguf')) });
    assert.match(eagle3['draft-model'].reason!, /the draft is an? eagle3 artifact, not a plain draft model/);
    const dflash = strategyAvailability({ nextnLayers: 0, draft: checkDraftCompatibility(target, info('dflash-close.gguf')) });
    assert.match(dflash.dspark.reason!, /the draft is a dflash artifact, not a dspark artifact/);
  });

  test('a gemma4-assistant is an mtp drafter, checked against what it reads of the target', () => {
    const gemma4 = info('gemma4-target.gguf');
    const assistant = info('gemma4-assistant.gguf');
    assert.equal(draftKind(assistant), 'mtp');
    const fits = checkDraftCompatibility(gemma4, assistant);
    assert.deepEqual(fits, { architecture: 'gemma4-assistant', kind: 'mtp', compatible: true });
    assert.deepEqual(strategyAvailability({ nextnLayers: 0, draft: fits }).mtp, { available: true });
    const refused = (t: GgufInfo, d: GgufInfo) => checkDraftCompatibility(t, d).reason ?? '';
    assert.match(refused(target, assistant), /a gemma4-assistant drafts for a gemma4 target, this one is 'llama'/);
    const a = 'gemma4-assistant';
    assert.match(
      refused(gemma4, withMeta(assistant, `${a}.embedding_length_out`, gv.u32(96))),
      /made for a target hidden size of 96 \(gemma4-assistant.embedding_length_out\), the target has 64/,
    );
    assert.match(
      refused(gemma4, withMeta(assistant, `${a}.attention.sliding_window`, gv.u32(32))),
      /sliding window of 32 cells, the target's is 16/,
    );
    assert.match(
      refused(gemma4, withMeta(assistant, `${a}.attention.head_count_kv`, gv.u32(2))),
      /its layer 0 reads 2 KV heads of size 16, the target's sliding-window cache holds 1 of size 16/,
    );
    assert.match(
      refused(gemma4, withMeta(assistant, `${a}.attention.key_length`, gv.u32(64))),
      /its layer 1 reads 1 KV heads of size 64, the target's full-attention cache holds 1 of size 32/,
    );
    // a target whose last layer slides: the assistant's full-attention layers would read a sliding cache
    const sliding = withMeta(gemma4, 'gemma4.attention.sliding_window_pattern', gv.bools([true, true, false, true]));
    assert.match(refused(sliding, assistant), /reads target layer 3 as full attention, but that layer is sliding-window attention/);
    assert.match(
      refused(gemma4, withMeta(assistant, `${a}.attention.sliding_window_pattern`, gv.bools([false, false]))),
      /no sliding-window layer/,
    );
    // a plain draft is no assistant
    assert.match(
      strategyAvailability({ nextnLayers: 0, draft: checkDraftCompatibility(target, info('draft-close.gguf')) }).mtp.reason!,
      /a plain 'llama' model, not a gemma4-assistant or MTP sidecar/,
    );
  });

  test('an MTP sidecar (a NextN block without its trunk) is an mtp drafter for a target of its architecture and width', () => {
    const hybrid = info('hybrid-mtp.gguf');
    const sidecar = info('mtp-hybrid.gguf');
    assert.equal(draftKind(sidecar), 'mtp');
    // the whole hybrid, trunk included, is no sidecar
    assert.equal(draftKind(hybrid), 'draft-model');
    assert.deepEqual(checkDraftCompatibility(hybrid, sidecar), { architecture: 'qwen35', kind: 'mtp', compatible: true });
    assert.match(checkDraftCompatibility(target, sidecar).reason!, /the MTP sidecar is a 'qwen35' model, the target a 'llama' one/);
    const wide = withMeta(sidecar, 'qwen35.embedding_length', gv.u32(96));
    assert.match(checkDraftCompatibility(hybrid, wide).reason!, /the MTP sidecar's hidden size 96 differs from the target's 128/);
  });
});
