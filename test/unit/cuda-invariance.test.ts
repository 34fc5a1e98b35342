// The cuda-src flavour's batch-invariance claim per CUDA compute capability (app/engine/cuda-invariance.ts,
// docs/exactness.md "The claim per architecture"), the reasons the front doors show when it is
// withheld, and the evidence that carries them.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { DeviceInfo } from '../../app/contract/engine-types.js';
import { EngineEvidence } from '../../app/contract/generation-result.js';
import { invarianceClaim, type InvarianceQuestion } from '../../app/engine/build-info.js';
import {
  attentionHeads,
  capabilityNumber,
  cudaArchitecture,
  cudaDeviceClaim,
  cudaFlashAttnWithheld,
  type AttentionHeads,
} from '../../app/engine/cuda-invariance.js';
import type { GgufInfo, GgufValue } from '../../app/gguf/types.js';
import { ROOT } from '../../app/paths.js';
import { backendOf, batchInvarianceOf } from '../../app/runtime/target.js';

const { FLAVOURS } = (await import(join(ROOT, 'scripts', 'native', 'flavours.mjs'))) as {
  FLAVOURS: Record<string, { flashAttnBatchInvariant: boolean | string; batchInvariant: boolean; invariantVerifyRows?: number }>;
};

/** Llama-3.1-8B's attention: heads of 128 */
const HEADS_128: AttentionHeads[] = [{ keyHead: 128, valueHead: 128 }];
/** heads the vector Flash Attention kernel does not have */
const HEADS_80: AttentionHeads[] = [{ keyHead: 80, valueHead: 80 }];

/** The capabilities users have, with what the patched build claims with Flash Attention on for heads of 128. */
const TABLE: { cc: string; arch: string; claimed: boolean }[] = [
  { cc: '6.1', arch: 'Pascal (sm_61)', claimed: false },
  { cc: '7.0', arch: 'Volta (sm_70)', claimed: false },
  { cc: '7.5', arch: 'Turing (sm_75)', claimed: true },
  { cc: '8.0', arch: 'Ampere (sm_80)', claimed: true },
  { cc: '8.6', arch: 'Ampere (sm_86)', claimed: true },
  { cc: '8.7', arch: 'Ampere (sm_87)', claimed: true },
  { cc: '8.9', arch: 'Ada Lovelace (sm_89)', claimed: true },
  { cc: '9.0', arch: 'Hopper (sm_90)', claimed: true },
  { cc: '10.0', arch: 'Blackwell (sm_100)', claimed: true },
  { cc: '12.0', arch: 'Blackwell (sm_120)', claimed: true },
  { cc: '12.1', arch: 'Blackwell GB10 (sm_121)', claimed: true },
];

const CUDA_SRC = { flavour: 'cuda-src', ...FLAVOURS['cuda-src']! } as Parameters<typeof invarianceClaim>[0];

function gpu(cc: string | undefined, name = 'CUDA0'): Pick<DeviceInfo, 'name' | 'description' | 'computeCapability'> {
  return { name, description: `a GPU of ${cc ?? 'unknown'}`, ...(cc ? { computeCapability: cc } : {}) };
}

function question(over: Partial<InvarianceQuestion>): InvarianceQuestion {
  return { flashAttn: 'on', experts: false, k: 7, cudaDevices: [gpu('9.0')], attention: HEADS_128, ...over };
}

const num = (value: number): GgufValue => ({ type: 'u32', value });
function gguf(arch: string, entries: Record<string, GgufValue>): GgufInfo {
  const metadata = new Map<string, GgufValue>([['general.architecture', { type: 'string', value: arch }]]);
  for (const [k, v] of Object.entries(entries)) metadata.set(`${arch}.${k}`, v);
  return { path: 'x.gguf', version: 3, alignment: 32, dataOffset: 0, fileSize: 0, metadata, tensors: [] };
}

describe('the cuda-src claim per compute capability (Flash Attention on, F16 KV cache)', () => {
  test('capabilities are read as ggml numbers them and named by architecture', () => {
    assert.equal(capabilityNumber('8.6'), 860);
    assert.equal(capabilityNumber('12.1'), 1210);
    assert.equal(capabilityNumber(undefined), null);
    assert.equal(capabilityNumber('8'), null);
    for (const row of TABLE) assert.equal(cudaArchitecture(capabilityNumber(row.cc)!), row.arch, row.cc);
  });

  test('heads of 64, 128 and 256 are claimed from Turing on, below it nothing', () => {
    for (const row of TABLE) {
      const why = cudaFlashAttnWithheld(capabilityNumber(row.cc), HEADS_128);
      assert.equal(why === null, row.claimed, `${row.arch}: ${why}`);
      if (why !== null)
        assert.ok(why.startsWith(`${row.arch}: the patch's Flash Attention choices below Turing (sm_75) were not examined`), why);
    }
    for (const heads of [64, 256])
      assert.equal(cudaFlashAttnWithheld(860, [{ keyHead: heads, valueHead: heads }]), null, `heads of ${heads}`);
  });

  test('heads the vector kernel lacks are withheld on every capability', () => {
    for (const heads of [
      { keyHead: 80, valueHead: 80 },
      { keyHead: 96, valueHead: 96 },
      { keyHead: 576, valueHead: 512 },
      { keyHead: 192, valueHead: 128 },
    ]) {
      for (const row of TABLE.filter((r) => r.claimed)) {
        const why = cudaFlashAttnWithheld(capabilityNumber(row.cc), [...HEADS_128, heads]);
        assert.match(
          why ?? 'claimed',
          /the vector Flash Attention kernel has no heads of/,
          `${row.arch}, heads ${heads.keyHead}/${heads.valueHead}`,
        );
      }
    }
  });

  test('power devices says per capability what is claimed there, whatever the model', () => {
    for (const cc of [750, 860, 900]) {
      assert.equal(
        cudaDeviceClaim(cc),
        'batch-invariant with Flash Attention on for models with heads of 64, 128 or 256 (not with it off)',
      );
    }
    assert.match(cudaDeviceClaim(610), /^not batch-invariant: Pascal \(sm_61\): the patch's Flash Attention choices below Turing/);
    assert.match(cudaDeviceClaim(null), /^not batch-invariant: the engine did not report/);
  });

  test('a device whose capability was not reported claims nothing, and says how to get it', () => {
    assert.match(cudaFlashAttnWithheld(null, HEADS_128)!, /did not report the CUDA device's compute capability.*npm run build:native/);
  });
});

describe("the claim's reasons", () => {
  test('cuda-src is claimed per device with Flash Attention on, never with it off', () => {
    assert.equal(FLAVOURS['cuda-src']!.flashAttnBatchInvariant, 'by-compute-capability');
    assert.deepEqual(invarianceClaim(CUDA_SRC, question({})), { claimed: true, why: null });
    const off = invarianceClaim(CUDA_SRC, question({ flashAttn: 'off' }));
    assert.deepEqual(off, {
      claimed: false,
      why: "the cuda-src flavour's kernels are not batch-invariant with Flash Attention off; with --flash-attn on they are",
    });
    assert.deepEqual(invarianceClaim(CUDA_SRC, question({ cudaDevices: [gpu('8.6')] })), { claimed: true, why: null });
    const heads80 = invarianceClaim(CUDA_SRC, question({ cudaDevices: [gpu('8.6')], attention: HEADS_80 }));
    assert.equal(heads80.claimed, false);
    assert.match(heads80.why!, /^CUDA0 \(a GPU of 8\.6\), Ampere \(sm_86\): the vector Flash Attention kernel has no heads of 80/);
    assert.match(heads80.why!, /the claim is withheld with Flash Attention on.*--device vulkan --flash-attn off, or --device cpu$/);
    const heads80Off = invarianceClaim(CUDA_SRC, question({ cudaDevices: [gpu('8.6')], attention: HEADS_80, flashAttn: 'off' }));
    assert.equal(
      heads80Off.why,
      "the cuda-src flavour's kernels are not batch-invariant with Flash Attention off",
      'no hint where on is withheld too',
    );
  });

  test('every GPU of a split must qualify: the first that does not is named', () => {
    const split = invarianceClaim(CUDA_SRC, question({ cudaDevices: [gpu('9.0', 'CUDA0'), gpu('7.0', 'CUDA1')] }));
    assert.match(split.why ?? 'claimed', /^CUDA1 \(a GPU of 7\.0\), Volta \(sm_70\)/);
    assert.match(invarianceClaim(CUDA_SRC, question({ cudaDevices: [] })).why ?? 'claimed', /no CUDA device was reported/);
    assert.match(invarianceClaim(CUDA_SRC, question({ cudaDevices: [gpu(undefined)] })).why ?? 'claimed', /rebuild it/);
  });

  test('K past the patch, expert products and an unknown Flash Attention setting each say so', () => {
    const limit = FLAVOURS['cuda-src']!.invariantVerifyRows!;
    assert.equal(invarianceClaim(CUDA_SRC, question({ k: limit - 1 })).claimed, true);
    assert.match(invarianceClaim(CUDA_SRC, question({ k: limit })).why ?? 'claimed', new RegExp(`^K ${limit}: .* up to K ${limit - 1}`));
    assert.match(invarianceClaim(CUDA_SRC, question({ experts: true })).why ?? 'claimed', /expert products \(mul_mat_id\)/);
    assert.match(
      invarianceClaim(CUDA_SRC, question({ flashAttn: 'unknown' })).why ?? 'claimed',
      /did not say whether Flash Attention is on/,
    );
    const vulkan = { flavour: 'vulkan', ...FLAVOURS.vulkan! } as Parameters<typeof invarianceClaim>[0];
    assert.equal(
      invarianceClaim(vulkan, question({ flashAttn: 'on' })).why,
      "the vulkan flavour's kernels are not batch-invariant with Flash Attention on; with --flash-attn off they are",
    );
  });
});

describe("a model's attention as the dispatch sees it", () => {
  test('head sizes per attention block, recurrent blocks (no KV heads) left out', () => {
    const hybrid = gguf('qwen35', {
      block_count: num(4),
      embedding_length: num(2048),
      'attention.head_count': num(16),
      'attention.head_count_kv': { type: 'array', itemType: 'u32', value: [0, 0, 0, 4] },
      'attention.key_length': num(256),
      'attention.value_length': num(256),
    });
    assert.deepEqual(attentionHeads(hybrid), [{ keyHead: 256, valueHead: 256 }]);
    const mha = gguf('llama', { block_count: num(2), embedding_length: num(1024), 'attention.head_count': num(8) });
    assert.deepEqual(attentionHeads(mha), [{ keyHead: 128, valueHead: 128 }]);
    const mla = gguf('deepseek2', {
      block_count: num(1),
      embedding_length: num(2048),
      'attention.head_count': num(16),
      'attention.head_count_kv': num(1),
      'attention.key_length': num(576),
      'attention.value_length': num(512),
    });
    assert.match(cudaFlashAttnWithheld(900, attentionHeads(mla))!, /no heads of 576 \(K\) and 512 \(V\)/);
  });
});

describe('the evidence every front door reports', () => {
  const cpu: DeviceInfo = { name: 'CPU', description: 'a CPU', type: 'cpu', backend: 'CPU', freeBytes: 0, totalBytes: 0 };
  const placement = {
    flavour: 'cpu',
    kind: 'cpu' as const,
    device: cpu,
    note: null,
    devices: [cpu],
    cuda: null,
    llamaCppRelease: 'b1',
    remote: [],
  };
  const loaded = {
    placement,
    experts: false,
    split: {},
    gguf: gguf('llama', { block_count: num(2), embedding_length: num(512), 'attention.head_count': num(4) }),
    loadDevices: [],
  } as unknown as Parameters<typeof batchInvarianceOf>[0];
  const run = { gpuLayers: 0, flashAttn: 'on' as const, memoryEstimateBytes: null, sampling: { path: 'cpu' as const, reason: null } };

  test('a claim has no reason; a withheld one carries it', () => {
    const claimed = batchInvarianceOf(loaded, { flashAttn: 'on', k: 4 });
    assert.deepEqual(claimed, { claimed: true, why: null });
    const evidence = EngineEvidence.parse(backendOf(placement, { ...run, batchInvariant: true, batchInvariantWhy: null }));
    assert.equal(evidence.batchInvariantWhy, null);
    const unknown = batchInvarianceOf(loaded, { flashAttn: 'unknown', k: 4 });
    const withheld = EngineEvidence.parse(
      backendOf(placement, { ...run, batchInvariant: unknown.claimed, batchInvariantWhy: unknown.why }),
    );
    assert.deepEqual([withheld.batchInvariant, withheld.batchInvariantWhy], [false, 'llama.cpp did not say whether Flash Attention is on']);
  });

  test('no session, remote machines and a row split are withheld with their reason', () => {
    assert.equal(batchInvarianceOf(loaded, null).why, 'no session has run');
    const remote = { ...loaded, placement: { ...placement, remote: [{ ...cpu, name: 'RPC0', endpoint: 'h:1' }] } } as typeof loaded;
    assert.match(batchInvarianceOf(remote, { flashAttn: 'on', k: 4 }).why ?? 'claimed', /remote machines/);
    const row = { ...loaded, split: { splitMode: 'row' } } as typeof loaded;
    assert.match(batchInvarianceOf(row, { flashAttn: 'on', k: 4 }).why ?? 'claimed', /row split/);
  });
});
