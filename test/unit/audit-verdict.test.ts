// What a divergence found by `power audit` means: on an engine that claims batch invariance any
// difference fails (never an "explained rounding"); elsewhere it is explained when the rows
// account for both tokens. And which sessions claim invariance: the flavour with the Flash
// Attention setting that ran.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { auditVerdict, type Divergence } from '../../app/service/audit.js';
import { batchInvariance, builtFlavours, claimsInvariance } from '../../app/engine/build-info.js';

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
    assert.equal(batchInvariance('cpu', 'off', false), true);
    assert.equal(batchInvariance('cpu', 'on', false), true, 'the patched CPU Flash Attention (scripts/native/patches)');
    assert.equal(batchInvariance('cpu', 'unknown', false), false, 'an unknown setting claims nothing');
    assert.equal(batchInvariance('cpu', 'on', true), true, 'expert products too (test/model/moe.test.ts)');
    if (built.has('cpu-prebuilt')) {
      assert.equal(batchInvariance('cpu-prebuilt', 'off', false), false);
      assert.equal(batchInvariance('cpu-prebuilt', 'on', false), false);
    }
  });

  test('Flash Attention on and off are claimed apart, and a Mixture-of-Experts model needs its own claim', () => {
    // cuda-src's claims: its patch covers attention with Flash Attention, not expert products
    const cudaSrc = { batchInvariant: false, flashAttnBatchInvariant: true, expertsBatchInvariant: false };
    assert.equal(claimsInvariance(cudaSrc, 'on', false), true);
    assert.equal(claimsInvariance(cudaSrc, 'off', false), false);
    assert.equal(claimsInvariance(cudaSrc, 'on', true), false, 'a MoE model on kernels whose expert products are not covered');
    assert.equal(claimsInvariance(cudaSrc, 'unknown', false), false);
    const vulkan = { batchInvariant: true, flashAttnBatchInvariant: false, expertsBatchInvariant: false };
    assert.equal(claimsInvariance(vulkan, 'off', false), true);
    assert.equal(claimsInvariance(vulkan, 'on', false), false);
    assert.equal(
      claimsInvariance({ batchInvariant: true, flashAttnBatchInvariant: true }, 'off', true),
      false,
      'an older build info claims nothing for experts',
    );
  });
});
