// What a divergence found by `power audit` means: on an engine that claims batch invariance any
// difference fails (never an "explained rounding"); elsewhere it is explained when the rows
// account for both tokens. And which sessions claim invariance: the flavour with the Flash
// Attention setting that ran.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { auditVerdict, type Divergence } from '../../app/service/audit.js';
import { batchInvariance, builtFlavours, claimsInvariance, invarianceClaim } from '../../app/engine/build-info.js';
import { K_MAX } from '../../app/contract/profile.js';
import { ROOT } from '../../app/paths.js';

/** The row limit a GPU patch defines (the one place it is set), read out of the patch. */
function patchRowLimit(patch: string, definition: RegExp): number {
  const text = readFileSync(join(ROOT, 'scripts', 'native', 'patches', patch), 'utf8');
  const m = definition.exec(text);
  assert.ok(m, `${patch} defines its row limit (${definition.source})`);
  return Number(m[1]);
}
const ROW_LIMITS: Record<string, number> = {
  'cuda-src': patchRowLimit('ggml-cuda-verify-rows-as-decode.patch', /^\+#define GGML_CUDA_INVARIANT_MAX_ROWS (\d+)$/m),
  vulkan: patchRowLimit('ggml-vulkan-verify-rows-as-decode.patch', /^\+static constexpr int64_t power_vk_invariant_max_rows = (\d+);$/m),
};
const { FLAVOURS } = (await import(join(ROOT, 'scripts', 'native', 'flavours.mjs'))) as {
  FLAVOURS: Record<string, { invariantVerifyRows?: number; variantEnv?: string }>;
};

const divergence = (rowsAccount: boolean): Divergence => ({
  index: 3,
  controlToken: 10,
  specToken: 11,
  controlMargin: 0.01,
  rowMaxAbsDiff: 0.05,
  rowsAccount,
});

describe('audit verdict', () => {
  test('identical runs are identical on any engine', () => {
    for (const invariant of [true, false]) assert.equal(auditVerdict({ identical: true, firstDivergence: null }, invariant), 'identical');
  });

  test('a batch-invariant engine fails on any divergence, even one the rows account for', () => {
    assert.equal(auditVerdict({ identical: false, firstDivergence: divergence(true) }, true), 'not-invariant');
    assert.equal(auditVerdict({ identical: false, firstDivergence: divergence(false) }, true), 'not-invariant');
  });

  test('elsewhere the rows explain a divergence or a bug is found', () => {
    assert.equal(auditVerdict({ identical: false, firstDivergence: divergence(true) }, false), 'explained');
    assert.equal(auditVerdict({ identical: false, firstDivergence: divergence(false) }, false), 'unexplained');
  });
});

describe('batch invariance of what ran', () => {
  test('the default flavour is invariant with Flash Attention on and off; the prebuilt one with neither', () => {
    const built = new Set(builtFlavours().map((f) => f.flavour));
    assert.ok(built.has('cpu'), 'npm ci builds the cpu flavour');
    assert.equal(batchInvariance('cpu', { flashAttn: 'off', experts: false, k: 7 }), true);
    assert.equal(
      batchInvariance('cpu', { flashAttn: 'on', experts: false, k: 7 }),
      true,
      'the patched CPU Flash Attention (scripts/native/patches)',
    );
    assert.equal(batchInvariance('cpu', { flashAttn: 'unknown', experts: false, k: 7 }), false, 'an unknown setting claims nothing');
    assert.equal(batchInvariance('cpu', { flashAttn: 'on', experts: true, k: 7 }), true, 'expert products too (test/model/moe.test.ts)');
    if (built.has('cpu-prebuilt')) {
      assert.equal(batchInvariance('cpu-prebuilt', { flashAttn: 'off', experts: false, k: 7 }), false);
      assert.equal(batchInvariance('cpu-prebuilt', { flashAttn: 'on', experts: false, k: 7 }), false);
    }
  });

  test('Flash Attention on and off are claimed apart, and a Mixture-of-Experts model needs its own claim', () => {
    // a patch that covers attention with Flash Attention, not expert products (cuda-src's, whose
    // claim with Flash Attention on also depends on the device: test/unit/cuda-invariance.test.ts)
    const cudaSrc = { batchInvariant: false, flashAttnBatchInvariant: true, expertsBatchInvariant: false };
    assert.equal(claimsInvariance(cudaSrc, { flashAttn: 'on', experts: false, k: 7 }), true);
    assert.equal(claimsInvariance(cudaSrc, { flashAttn: 'off', experts: false, k: 7 }), false);
    assert.equal(
      claimsInvariance(cudaSrc, { flashAttn: 'on', experts: true, k: 7 }),
      false,
      'a MoE model on kernels whose expert products are not covered',
    );
    assert.equal(claimsInvariance(cudaSrc, { flashAttn: 'unknown', experts: false, k: 7 }), false);
    const vulkan = { batchInvariant: true, flashAttnBatchInvariant: false, expertsBatchInvariant: false };
    assert.equal(claimsInvariance(vulkan, { flashAttn: 'off', experts: false, k: 7 }), true);
    assert.equal(claimsInvariance(vulkan, { flashAttn: 'on', experts: false, k: 7 }), false);
    assert.equal(
      claimsInvariance({ batchInvariant: true, flashAttnBatchInvariant: true }, { flashAttn: 'off', experts: true, k: 7 }),
      false,
      'an older build info claims nothing for experts',
    );
  });

  test('a CPU build for an architecture whose kernels were never checked row by row (arm64) claims nothing, and says why', () => {
    const cpu = (platform: string) => ({
      flavour: 'cpu',
      platform,
      gpu: null,
      batchInvariant: true,
      flashAttnBatchInvariant: true,
      expertsBatchInvariant: true,
    });
    for (const flashAttn of ['on', 'off'] as const) {
      const run = { flashAttn, experts: false, k: 7 };
      assert.equal(invarianceClaim(cpu('linux-x64'), run).claimed, true);
      assert.equal(invarianceClaim(cpu('win32-x64'), run).claimed, true);
      for (const platform of ['linux-arm64', 'darwin-arm64', 'win32-arm64']) {
        const claim = invarianceClaim(cpu(platform), run);
        assert.equal(claim.claimed, false, platform);
        assert.match(claim.why ?? '', new RegExp(`built for ${platform}: .*checked .* on x86-64 only, never on arm64`));
      }
    }
    // a GPU flavour's claim is its GPU kernels', whatever the host CPU
    const vulkanOnArm = {
      flavour: 'vulkan',
      platform: 'linux-arm64',
      gpu: 'vulkan',
      batchInvariant: true,
      flashAttnBatchInvariant: false,
    } as const;
    assert.equal(invarianceClaim(vulkanOnArm, { flashAttn: 'off', experts: false, k: 7 }).claimed, true);
  });

  test('a GPU flavour whose patch the environment turns off (GGML_*_BATCH_VARIANT) claims nothing, and says why', () => {
    const vulkan = {
      flavour: 'vulkan',
      batchInvariant: true,
      flashAttnBatchInvariant: false,
      expertsBatchInvariant: false,
      variantEnv: 'GGML_VK_BATCH_VARIANT',
    };
    const run = { flashAttn: 'off', experts: false, k: 7 } as const;
    assert.equal(invarianceClaim(vulkan, { ...run, env: {} }).claimed, true);
    const off = invarianceClaim(vulkan, { ...run, env: { GGML_VK_BATCH_VARIANT: '1' } });
    assert.equal(off.claimed, false);
    assert.match(off.why ?? '', /GGML_VK_BATCH_VARIANT is set/);
    // the variable is the patch's own: an empty value turns it off too (getenv != nullptr)
    assert.equal(invarianceClaim(vulkan, { ...run, env: { GGML_VK_BATCH_VARIANT: '' } }).claimed, false);
    // the table names the variable each patch reads
    for (const [flavour, patch] of [
      ['cuda-src', 'ggml-cuda-verify-rows-as-decode.patch'],
      ['vulkan', 'ggml-vulkan-verify-rows-as-decode.patch'],
    ] as const) {
      const name = FLAVOURS[flavour]?.variantEnv ?? '';
      const text = readFileSync(join(ROOT, 'scripts', 'native', 'patches', patch), 'utf8');
      assert.ok(name !== '' && text.includes(`getenv("${name}")`), `${flavour}: ${name || 'no variantEnv'} is the variable ${patch} reads`);
    }
  });

  test("a GPU flavour vouches for verify passes up to its patch's row limit, the CPU for any K", () => {
    const limit = ROW_LIMITS.vulkan!;
    const vulkan = { batchInvariant: true, flashAttnBatchInvariant: false, expertsBatchInvariant: false, invariantVerifyRows: limit };
    assert.equal(claimsInvariance(vulkan, { flashAttn: 'off', experts: false, k: limit - 1 }), true, `K${limit - 1}: ${limit} rows`);
    assert.equal(
      claimsInvariance(vulkan, { flashAttn: 'off', experts: false, k: limit }),
      false,
      `K${limit}: ${limit + 1} rows, past the patch`,
    );
    assert.equal(claimsInvariance(vulkan, { flashAttn: 'off', experts: false, k: 0 }), true, 'no proposer: one-row passes');
    assert.equal(batchInvariance('cpu', { flashAttn: 'on', experts: false, k: K_MAX }), true);
  });

  test("each GPU patch's row limit is the one its flavour declares and its build wrote", () => {
    for (const [flavour, limit] of Object.entries(ROW_LIMITS)) {
      assert.equal(FLAVOURS[flavour]?.invariantVerifyRows, limit, `scripts/native/flavours.mjs: ${flavour} declares its patch's limit`);
    }
    for (const info of builtFlavours().filter((f) => f.flavour in ROW_LIMITS)) {
      assert.equal(
        info.invariantVerifyRows,
        ROW_LIMITS[info.flavour],
        `${info.flavour}: the build writes the patch's limit (rebuild a stale build-info.json)`,
      );
    }
  });
});
