// The device-memory estimate that guards loading on CUDA: checked against llama.cpp's own
// placement rules on shapes whose sizes are known by hand.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { checkFit, estimateMemory, GIB, MIB, modelPlacement, RESERVE_BYTES } from '../../app/engine/memory-estimate.js';
import {
  makeLlamaModelSpec,
  makeQwen35ModelSpec,
  SYNTHETIC_MODELS,
  type LlamaModelParams,
  type Qwen35ModelParams,
} from '../../tools/models/synthetic.js';
import { infoOfSpec, TARGET_INFO, targetPlan } from '../fixtures/gguf-info.js';

const target = TARGET_INFO;
const hybrid = infoOfSpec(makeQwen35ModelSpec(SYNTHETIC_MODELS['hybrid-mtp.gguf'].params as Qwen35ModelParams));
const bytesOf = (info: typeof target, pred: (name: string) => boolean) =>
  info.tensors.filter((t) => pred(t.name)).reduce((n, t) => n + t.byteSize, 0);

const plan = targetPlan;

describe('memory estimate', () => {
  test('all layers: every weight but the token embedding, F16 KV per attention block', () => {
    const p = modelPlacement(target, plan());
    assert.equal(
      p.weights,
      bytesOf(target, (n) => n !== 'token_embd.weight'),
    );
    // 4 blocks x 2048 ctx x 2 kv heads x (32 + 32) dims x 2 bytes (llama.cpp logs 2.00 MiB)
    assert.equal(p.kv, 4 * 2048 * 2 * 64 * 2);
    assert.equal(p.recurrent, 0);
    assert.equal(p.offloadedBlocks, 4);
  });

  test('N GPU layers take the last blocks, and the output head from N >= 1 (llama.cpp i_gpu_start)', () => {
    const two = modelPlacement(target, plan({ gpuLayers: 2 }));
    // i_gpu_start = 4 + 1 - 2 = 3: block 3 and the output head
    assert.equal(
      two.weights,
      bytesOf(target, (n) => n.startsWith('blk.3.') || n.startsWith('output')),
    );
    assert.equal(two.kv, 2048 * 2 * 64 * 2);
    const none = estimateMemory(plan({ gpuLayers: 0 }));
    assert.deepEqual(none, { weights: 0, kv: 0, recurrent: 0, draft: 0, projector: 0, compute: 0, reserve: 0, total: 0 });
  });

  test('recurrent blocks pay (1 + S) state rows, attention blocks pay KV', () => {
    const p = modelPlacement(hybrid, plan({ target: hybrid, s: 7 }));
    // conv kernel 4, inner 64, groups 2, state 16: r = 3 x (64 + 2 x 2 x 16) = 384, s = 16 x 64 = 1024 floats
    const row = (384 + 1024) * 4;
    assert.equal(p.recurrent, 2 * row * 8); // blocks 0 and 2 are recurrent
    // blocks 1 and 3 are attention: 2 kv heads x (32 + 32) x 2 bytes per position; these match
    // what llama.cpp logs for this model on the CPU (KV 1.00 MiB, RS 0.09 MiB with S = 7)
    assert.equal(p.kv, 2 * 2048 * 2 * 64 * 2);
    // the NextN block 4 counts only when the MTP layers are loaded
    assert.equal(modelPlacement(hybrid, plan({ target: hybrid, s: 7, loadMtp: true })).kv, 3 * 2048 * 2 * 64 * 2);
    assert.equal(modelPlacement(hybrid, plan({ target: hybrid, s: 0 })).recurrent, 2 * row);
  });

  test('a tied output head is a GPU copy of the embedding', () => {
    const spec = makeLlamaModelSpec(SYNTHETIC_MODELS['target.gguf'].params);
    const tied = infoOfSpec({ ...spec, tensors: spec.tensors.filter((t) => t.name !== 'output.weight') });
    const p = modelPlacement(tied, plan({ target: tied }));
    assert.equal(
      p.weights,
      bytesOf(tied, () => true),
    );
  });

  test('the draft adds its weights and KV; Flash Attention off adds the score matrix', () => {
    const draft = infoOfSpec(makeLlamaModelSpec(SYNTHETIC_MODELS['draft-far.gguf'].params));
    const withDraft = estimateMemory(plan({ draft }));
    const d = modelPlacement(draft, plan({ target: draft }));
    assert.equal(withDraft.draft, d.weights + d.kv);
    const on = estimateMemory(plan());
    const off = estimateMemory(plan({ flashAttn: false }));
    assert.equal(off.compute - on.compute, 512 * 2048 * 4 * 4); // batch x ctx x heads x f32
    assert.equal(on.reserve, RESERVE_BYTES);
    assert.equal(on.total, on.weights + on.kv + on.recurrent + on.draft + on.compute + on.reserve);
  });

  test('an 8B-shaped F16 model (tiny vocabulary): 13 GiB of blocks, KV linear in the context', () => {
    const big: LlamaModelParams = {
      arch: 'llama',
      name: 'big',
      vocab: 'default',
      seed: 1,
      dtype: 'f16',
      embd: 4096,
      layers: 32,
      heads: 32,
      kvHeads: 8,
      ff: 14336,
      contextLength: 8192,
    };
    const info = infoOfSpec(makeLlamaModelSpec(big));
    const at4k = estimateMemory(plan({ target: info, contextSize: 4096 }));
    const at8k = estimateMemory(plan({ target: info, contextSize: 8192 }));
    // per block: q, o 4096^2; k, v 4096 x 1024; gate, up, down 4096 x 14336; F16
    const block = (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) * 2;
    assert.ok(Math.abs(at4k.weights - 32 * block) < 10 * MIB, `${at4k.weights}`);
    assert.equal(at4k.kv, 32 * 4096 * 8 * 256 * 2); // 512 MiB, as llama.cpp reports for Llama-3-8B at 4k
    assert.equal(at8k.kv, 2 * at4k.kv);
    assert.ok(at4k.total > 13 * GIB && at4k.total < 14.5 * GIB, `${at4k.total / GIB}`);
  });

  test('refuses with numbers when it does not fit', () => {
    const e = estimateMemory(plan());
    assert.equal(checkFit(e, plan(), { name: 'CUDA0', freeBytes: e.total }), null);
    const why = checkFit(e, plan(), { name: 'CUDA0', freeBytes: e.total - 1 });
    assert.match(
      why!,
      /^not enough memory on CUDA0: needs about [\d.]+ MiB \(weights [\d.]+ MiB, KV 2\.0 MiB at 2048 ctx, compute [\d.]+ MiB, reserve 256\.0 MiB\) but [\d.]+ MiB is free; lower --ctx/,
    );
  });
});
