// The synthetic Mixture-of-Experts target (qwen3moe, 8 experts, 2 per token) and its draft:
// speculative decoding on it is exact (draft-model and ngram, greedy and seeded), on the F32 pair
// and on the quantized one (Q4_0 gate and up experts, repacked on x86; Q8_0 down experts on
// vec_dot), where the verify rows run the CPU's quantized expert kernels; and keeping
// its expert tensors in host memory (--cpu-moe, --n-cpu-moe, llama.cpp's tensor buffer
// overrides) gives the same tokens, on the CPU and with the rest of the model on a `power rpc`
// server; the memory estimate puts the experts in host memory.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../../app/contract/engine-types.js';
import { GenerationResult } from '../../app/contract/generation-result.js';
import { batchInvariance } from '../../app/engine/build-info.js';
import type { Strategy } from '../../app/contract/strategies.js';
import type { SplitRequest } from '../../app/engine/split.js';
import { MODELS_CACHE } from '../../app/paths.js';
import type { OpenedTarget } from '../../app/runtime/target.js';
import { makeMoeModels, type MoeModelSet } from '../../tools/models/synthetic-moe.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { startRpcServer, type RpcServer } from '../fixtures/rpc-servers.js';
import { runControlAndStrategy, type TargetRuns } from '../fixtures/target-runs.js';

const SEEDED: SamplingOptions = { ...SAMPLING_DEFAULTS, temperature: 0.9, seed: 99 };
const PROMPTS = [
  [1, 300, 301, 302, 303],
  [1, 263, 400, 500, 600, 700, 263, 400],
  [1, 42],
];
const MAX_TOKENS = 64;
// the quantized pair: replies past 256 positions, K4 and K7 (verify passes of 5 and 8 rows)
const Q_MAX_TOKENS = 300;
const Q_KS = [4, 7];

/** The control and `strategy` on each prompt, greedy and seeded, on one opened target. */
function runAll(models: MoeModelSet, strategy: Strategy, split?: SplitRequest, gpuLayers = -1): Promise<TargetRuns> {
  return runControlAndStrategy(
    {
      path: models['moe-target.gguf'],
      device: 'cpu',
      gpuLayers,
      strategy,
      ...(strategy === 'draft-model' ? { draftPath: models['moe-draft-close.gguf'] } : {}),
      s: 4,
      contextSize: 512,
      ...(split ? { split } : {}),
    },
    { k: 4, seeded: SEEDED, prompts: PROMPTS, maxTokens: MAX_TOKENS },
  );
}

function expertBytes(target: OpenedTarget, blocks?: number): number {
  return target.gguf.tensors
    .filter(
      (t) =>
        /^blk\.(\d+)\.ffn_(up|down|gate)_exps/.test(t.name) && (blocks === undefined || Number(/^blk\.(\d+)/.exec(t.name)![1]) < blocks),
    )
    .reduce((a, t) => a + t.byteSize, 0);
}

describe('the synthetic MoE target (qwen3moe)', () => {
  let models: MoeModelSet;
  let server: RpcServer;

  before(async () => {
    models = await makeMoeModels(MODELS_CACHE);
    server = await startRpcServer();
  });
  after(async () => {
    await server?.stop();
  });

  for (const strategy of ['draft-model', 'ngram'] as const) {
    test(`${strategy} on the MoE target emits exactly the autoregressive control's tokens, greedy and seeded`, async () => {
      const { runs, target } = await runAll(models, strategy);
      // what backs the cpu flavour's expertsBatchInvariant claim (scripts/native/flavours.mjs)
      assert.equal(target.experts, true, 'the expert tensors are seen');
      assert.equal(batchInvariance(target.placement.flavour, { flashAttn: 'on', experts: target.experts, k: 4 }), true);
      let accepted = 0;
      for (const [key, run] of runs) {
        if (!key.startsWith('none ')) continue;
        assert.equal(run.tokens.length, MAX_TOKENS, key);
        const spec = runs.get(key.replace(/^none /, `${strategy} `))!;
        assert.deepEqual(spec.tokens, run.tokens, key.replace(/^none /, `${strategy} `));
        accepted += spec.stats.accepted;
      }
      assert.ok(accepted > 0, 'the proposer was accepted at all (the speculative path ran)');
    });
  }

  for (const strategy of ['draft-model', 'ngram'] as const) {
    test(`${strategy} on the quantized MoE target (Q4_0 and Q8_0 experts), K4 and K7, emits exactly the control's ${Q_MAX_TOKENS} tokens, greedy and seeded`, async (t) => {
      for (const k of Q_KS) {
        const { runs, target } = await runControlAndStrategy(
          {
            path: models['moe-target-q4.gguf'],
            device: 'cpu',
            gpuLayers: -1,
            strategy,
            ...(strategy === 'draft-model' ? { draftPath: models['moe-draft-close-q4.gguf'] } : {}),
            s: 4,
            contextSize: 512,
          },
          { k, seeded: SEEDED, prompts: PROMPTS, maxTokens: Q_MAX_TOKENS },
        );
        // the experts are the quantized ones the claim is about
        const typeOf = (kind: string): string[] => [
          ...new Set(target.gguf.tensors.filter((x) => x.name.endsWith(`ffn_${kind}_exps.weight`)).map((x) => x.typeName)),
        ];
        assert.deepEqual([typeOf('gate'), typeOf('up'), typeOf('down')], [['Q4_0'], ['Q4_0'], ['Q8_0']]);
        assert.equal(target.experts, true, 'the expert tensors are seen');
        for (const flashAttn of ['on', 'off'] as const) {
          assert.equal(
            batchInvariance(target.placement.flavour, { flashAttn, experts: true, k }),
            true,
            `claimed, flash attention ${flashAttn}`,
          );
        }
        for (const mode of ['greedy', 'seeded']) {
          let proposed = 0;
          let accepted = 0;
          for (const i of PROMPTS.keys()) {
            const control = runs.get(`none ${mode} prompt ${i}`)!;
            const spec = runs.get(`${strategy} ${mode} prompt ${i}`)!;
            assert.equal(control.tokens.length, Q_MAX_TOKENS, `K${k} ${mode} prompt ${i}`);
            assert.deepEqual(spec.tokens, control.tokens, `${strategy} K${k} ${mode} prompt ${i}`);
            proposed += spec.stats.proposed;
            accepted += spec.stats.accepted;
          }
          t.diagnostic(`${strategy} K${k} ${mode}: ${accepted} of ${proposed} proposals accepted`);
          // the verify passes ran, with rows kept: a batch of more than one row was compared
          assert.ok(proposed > 0, `${strategy} K${k} ${mode}: proposals`);
          assert.ok(accepted > 0, `${strategy} K${k} ${mode}: accepted`);
        }
      }
    });
  }

  test('power audit of the quantized MoE target on two threads, K7: identical and claimed batch-invariant; llama.cpp repacks its Q4_0 experts', () => {
    const common = [
      '--json',
      '--threads',
      '2',
      '--device',
      'cpu',
      '--model',
      models['moe-target-q4.gguf'],
      '--prompt-tokens',
      '1,263,400,500',
    ];
    for (const sampling of [[], ['--temperature', '0.9', '--seed', '99']]) {
      const audit = power([
        'audit',
        ...common,
        '--draft',
        models['moe-draft-close-q4.gguf'],
        '--strategy',
        'draft-model',
        '--k',
        '7',
        '--max-tokens',
        '300',
        ...sampling,
      ]);
      assert.equal(audit.code, 0, audit.stderr);
      const verdict = jsonOf<{ identical: boolean; verdict: string; batchInvariant: boolean; tokens: number }>(audit);
      assert.deepEqual(
        { identical: verdict.identical, verdict: verdict.verdict, batchInvariant: verdict.batchInvariant, tokens: verdict.tokens },
        { identical: true, verdict: 'identical', batchInvariant: true, tokens: 300 },
        sampling.join(' ') || 'greedy',
      );
    }
    // where the CPU has a repacked Q4_0 layout (x86 AVX2) the gate and up experts take it, so the
    // expert products above ran the repacked kernel; the Q8_0 down experts have none (vec_dot)
    const gen = power(['generate', ...common, '--verbose', '--max-tokens', '4']);
    assert.equal(gen.code, 0, gen.stderr);
    const repacked = gen.stderr.match(/repack tensor blk\.\d+\.ffn_\w+_exps\.weight with \w+/g) ?? [];
    if (process.arch === 'x64') {
      assert.deepEqual([...new Set(repacked.map((l) => l.replace(/blk\.\d+\./, 'blk.N.')))].sort(), [
        'repack tensor blk.N.ffn_gate_exps.weight with q4_0_8x8',
        'repack tensor blk.N.ffn_up_exps.weight with q4_0_8x8',
      ]);
      assert.equal(repacked.length, 2 * 4);
    }
  });

  test('--cpu-moe and --n-cpu-moe give the same tokens on the CPU and with the model on a power rpc server, the experts in host memory', async () => {
    const plain = await runAll(models, 'draft-model');
    const remote = { rpc: [server.endpoint] };
    const variants: [string, SplitRequest | undefined][] = [
      ['--cpu-moe on the CPU', { cpuMoe: true }],
      ['on the rpc server', remote],
      ['--cpu-moe, the rest on the rpc server', { ...remote, cpuMoe: true }],
      ['--n-cpu-moe 2, the rest on the rpc server', { ...remote, nCpuMoe: 2 }],
    ];
    let onServer: number | null = null;
    for (const [name, split] of variants) {
      const { runs, target } = await runAll(models, 'draft-model', split);
      for (const [key, run] of plain.runs) assert.deepEqual(runs.get(key)?.tokens, run.tokens, `${name}: ${key}`);
      const shares = target.memory?.shares;
      if (!split?.rpc || !shares) continue;
      const device = shares.find((s) => s.device?.name === 'RPC0')!;
      const host = shares.find((s) => s.device === null)!;
      if (!split.cpuMoe && !split.nCpuMoe) {
        onServer = device.weights;
        continue;
      }
      // the estimate moves the experts (all of them, or those of blocks 0 and 1) to host memory
      const moved = expertBytes(target, split.cpuMoe ? undefined : split.nCpuMoe);
      assert.ok(moved > 0);
      assert.equal(device.weights, onServer! - moved, name);
      assert.ok(host.weights >= moved, name);
    }
  });

  test('power generate --cpu-moe with --rpc: llama.cpp keeps the expert tensors in host memory, same tokens', () => {
    const common = [
      'generate',
      '--json',
      '--verbose',
      '--threads',
      '1',
      '--model',
      models['moe-target.gguf'],
      '--prompt-tokens',
      '1,300,301,302',
      '--max-tokens',
      '32',
      '--device',
      'cpu',
      '--rpc',
      server.endpoint,
    ];
    const all = power(common);
    const moe = power([...common, '--cpu-moe']);
    assert.equal(moe.code, 0, moe.stderr);
    assert.deepEqual(GenerationResult.passthrough().parse(jsonOf(moe)).tokens, GenerationResult.passthrough().parse(jsonOf(all)).tokens);
    // llama.cpp's own log: every expert tensor overridden to the CPU buffer, the rest on RPC0
    assert.equal(
      (moe.stderr.match(/tensor blk\.\d+\.ffn_(up|down|gate)_exps\.weight \([^)]*\) buffer type overridden to CPU/g) ?? []).length,
      4 * 3,
    );
    assert.doesNotMatch(all.stderr, /buffer type overridden/);
    const n = power([...common, '--n-cpu-moe', '1']);
    assert.equal((n.stderr.match(/buffer type overridden to CPU/g) ?? []).length, 3);
    assert.deepEqual(GenerationResult.passthrough().parse(jsonOf(n)).tokens, GenerationResult.passthrough().parse(jsonOf(all)).tokens);
    const both = power([...common, '--cpu-moe', '--n-cpu-moe', '1']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^error: give either --cpu-moe \(every block\) or --n-cpu-moe N/);
  });
});
