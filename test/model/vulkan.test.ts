// The exactness contract on a GPU backend: the vulkan flavour (llama.cpp's Vulkan backend with
// our patches) on the machine's Vulkan device, in CI Mesa's lavapipe (a Vulkan device that runs
// on the CPU: ggml picks its kernels for it as for a GPU, so a verify row that a released kernel
// sums differently from the one-row decode shows here too; as released, the first of these
// configurations left its control at token 38). Every layer on the device, Flash Attention off
// (the configuration the patch makes batch-invariant), sampled on the CPU (app/engine/sampling-path.ts):
// greedy and seeded; a draft model with K = 16 (verify passes of 17 rows, beyond the mat-vec
// kernels' 8 columns), n-gram lookup, MTP with S < K and an EAGLE-3 artifact; replies
// that cross 256 positions, where llama.cpp doubles the attention's KV length. Without
// the vulkan flavour it skips, except in CI (CI=true), where .ci/run installs what it needs: there
// it fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { DeviceInfo, SamplingOptions } from '../../app/contract/engine-types.js';
import { builtFlavours } from '../../app/engine/build-info.js';
import { EngineClient } from '../../app/engine/client.js';
import { pickVulkanDevice } from '../../app/engine/device-select.js';
import type { GenerationOutcome } from '../../app/service/request.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertSameAsControl, cachedControl, configLabel, counterTotals, promptRunner, type ContractConfig } from '../fixtures/contract.js';
import { GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';

// long prompts (prefilled in one batch), so that short replies cross position 256: on lavapipe
// every decode is a few hundred kernel launches on the CPU
const PROMPTS: number[][] = [
  [1, ...Array.from({ length: 238 }, (_, i) => 300 + ((i * 7) % 61))],
  [1, ...Array.from({ length: 244 }, (_, i) => 500 + (i % 2) + ((i >> 5) % 3))],
];
/** with the prompts, past position 256 */
const TOKENS = 40;
const SEEDED: SamplingOptions = { ...GREEDY, temperature: 0.9, seed: 77, topK: 40, topP: 0.95, minP: 0.05, path: 'cpu' };

type Config = ContractConfig<keyof ModelSet>;
const CONFIGS: Config[] = [
  { target: 'target-q4_0.gguf', strategy: 'draft-model', draft: 'draft-close-q4_0.gguf', k: 16, s: 16 },
  { target: 'target.gguf', strategy: 'ngram', k: 7, s: 7 },
  { target: 'hybrid-mtp.gguf', strategy: 'mtp', k: 3, s: 2 },
  { target: 'target.gguf', strategy: 'eagle3', draft: 'eagle3-close.gguf', k: 3, s: 3 },
];

const vulkanBuilt = builtFlavours().some((b) => b.flavour === 'vulkan');

describe(
  'exactness contract on the Vulkan engine',
  {
    // CI's machine builds it (scripts/setup-system.sh installs glslc, libvulkan-dev and lavapipe)
    skip: requirePrerequisite(!vulkanBuilt && 'the vulkan flavour is not built (glslc and libvulkan-dev missing)'),
  },
  () => {
    let engine: EngineClient;
    let device: DeviceInfo;
    const summary: string[] = [];

    const runner = promptRunner({
      engine: () => engine,
      paths: syntheticModels,
      load: () => ({ gpuLayers: -1, devices: [device.name] }),
      session: { contextSize: 512, threads: 2, flashAttn: 'off' },
      prompts: PROMPTS,
      maxTokens: TOKENS,
    });

    async function runAll(c: Config, sampling: SamplingOptions): Promise<GenerationOutcome[]> {
      const outcomes = await runner.run(c, sampling);
      for (const outcome of outcomes) assert.equal(outcome.sampling?.path ?? 'cpu', 'cpu');
      return outcomes;
    }

    const control = cachedControl(runAll);

    before(async () => {
      engine = EngineClient.start({ flavour: 'vulkan' });
      const hello = await engine.call('hello', {});
      const picked = pickVulkanDevice(hello.devices, true);
      assert.ok(picked, `the vulkan flavour found a Vulkan device (it has ${hello.devices.map((d) => d.name).join(', ')})`);
      device = picked;
    });

    after(async () => {
      for (const modelId of runner.modelIds()) await engine.call('disposeModel', { modelId });
      await engine.close();
      console.log(
        `Vulkan contract on ${device.name} (${device.description}), ${PROMPTS.length} prompts × ${TOKENS} tokens:\n${summary.join('\n')}`,
      );
    });

    test('the build claims batch invariance for Flash Attention off only', () => {
      const info = builtFlavours().find((b) => b.flavour === 'vulkan')!;
      assert.deepEqual([info.batchInvariant, info.flashAttnBatchInvariant], [true, false]);
      assert.ok(info.llamaPatches?.includes('ggml-vulkan-verify-rows-as-decode.patch'));
    });

    for (const c of CONFIGS) {
      for (const [mode, sampling] of [
        ['greedy', { ...GREEDY, path: 'cpu' }],
        ['seeded', SEEDED],
      ] as const) {
        test(`${configLabel(c)} ${mode} emits the control's tokens across position 256`, async () => {
          const controlRuns = await control(c.target, mode, sampling);
          const runs = await runAll(c, sampling);
          for (const [i, run] of runs.entries()) {
            assert.equal(run.tokens.length, TOKENS, `prompt ${i} ran to its length`);
            assertSameAsControl(run, controlRuns[i]!, `prompt ${i}`);
          }
          const { proposed, accepted, replays } = counterTotals(runs);
          assert.ok(proposed > 0, 'the proposer proposed: verify passes of several rows ran');
          if (c.s < c.k && mode === 'greedy') assert.ok(replays > 0, 'S < K triggers the guarded replay somewhere');
          summary.push(
            `  ${configLabel(c).padEnd(56)} ${mode.padEnd(7)} identical  acceptance ${(accepted / proposed).toFixed(3)}  replays ${replays}`,
          );
        });
      }
    }
  },
);
