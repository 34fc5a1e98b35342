// Strategy availability fails closed and always says why.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ENGINE_STRATEGIES, noProposalsNote, STRATEGIES, strategyAvailability } from '../../app/contract/strategies.js';

test('every strategy has an answer, and every refusal a reason', () => {
  for (const facts of [
    { nextnLayers: 0 },
    { nextnLayers: 1 },
    { nextnLayers: 1, draft: { architecture: 'llama', compatible: true } },
    { nextnLayers: 2, draftOnly: true },
  ]) {
    const a = strategyAvailability(facts);
    assert.deepEqual(Object.keys(a).sort(), [...STRATEGIES].sort());
    for (const s of STRATEGIES) {
      if (!a[s].available) assert.ok(a[s].reason && a[s].reason.length > 10, `${s} needs a reason`);
      if (a[s].available) assert.ok(ENGINE_STRATEGIES.has(s), `${s} is offered only when the engine runs it`);
    }
  }
});

test('a file of NextN blocks only (a Gemma 4 assistant, an MTP sidecar) is no target: every strategy says it is a draft', () => {
  const table = strategyAvailability({ nextnLayers: 2, draftOnly: true });
  for (const s of STRATEGIES) assert.match(table[s].reason!, /it is a draft \(a gemma4-assistant or MTP sidecar\)/);
  assert.equal(strategyAvailability({ nextnLayers: 1, draftOnly: false }).mtp.available, true);
});

test('mtp needs NextN layers; draft artifacts need their own architecture', () => {
  assert.match(strategyAvailability({ nextnLayers: 0 }).mtp.reason!, /no NextN\/MTP layers/);
  assert.match(strategyAvailability({ nextnLayers: 0 }).mtp.reason!, /--draft <gemma4-assistant.gguf>/);
  const assistant = { architecture: 'gemma4-assistant', kind: 'mtp', compatible: true };
  assert.deepEqual(strategyAvailability({ nextnLayers: 0, draft: assistant }).mtp, { available: true });
  assert.match(
    strategyAvailability({ nextnLayers: 0, draft: assistant })['draft-model'].reason!,
    /a gemma4-assistant or MTP sidecar, not a plain draft model: use --strategy mtp/,
  );
  assert.match(
    strategyAvailability({ nextnLayers: 0, draft: { ...assistant, compatible: false, reason: 'vocabulary size differs' } }).mtp.reason!,
    /the draft is incompatible: vocabulary size differs/,
  );
  assert.ok(ENGINE_STRATEGIES.has('mtp'));
  assert.deepEqual(strategyAvailability({ nextnLayers: 1 }).mtp, { available: true });
  const llamaDraft = strategyAvailability({ nextnLayers: 0, draft: { architecture: 'llama', compatible: true } });
  assert.match(llamaDraft.dflash.reason!, /'llama' model, not a dflash artifact/);
  const eagle = strategyAvailability({ nextnLayers: 0, draft: { architecture: 'eagle3', compatible: true } });
  assert.deepEqual(eagle.eagle3, { available: true });
  assert.match(eagle['draft-model'].reason!, /eagle3 artifact, not a plain draft model/);
  assert.match(eagle.dflash.reason!, /eagle3 artifact, not a dflash artifact/);
  // a DSpark is a dflash GGUF: the check's strategy, not the architecture, decides
  const dspark = strategyAvailability({ nextnLayers: 0, draft: { architecture: 'dflash', kind: 'dspark', compatible: true } });
  assert.deepEqual(dspark.dspark, { available: true });
  assert.match(dspark.dflash.reason!, /dspark artifact, not a dflash artifact/);
  const bad = strategyAvailability({
    nextnLayers: 0,
    draft: { architecture: 'llama', compatible: false, reason: 'vocabulary size differs' },
  });
  assert.match(bad['draft-model'].reason!, /incompatible: vocabulary size differs/);
});

test("llama.cpp's n-gram families are strategies of their own, available on every target", () => {
  for (const s of ['ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache'] as const) {
    assert.ok(STRATEGIES.includes(s));
    assert.deepEqual(strategyAvailability({ nextnLayers: 0 })[s], { available: true });
  }
});

test('a speculative reply that proposed nothing says it ran as the control; the control and a drafting reply say nothing', () => {
  assert.equal(
    noProposalsNote('ngram-simple', 0),
    'ngram-simple proposed nothing (no earlier passage of the prompt or reply matched): this reply ran as the autoregressive control',
  );
  assert.match(noProposalsNote('draft-model', 0)!, /^draft-model proposed nothing \(the proposer drafted no token\)/);
  assert.equal(noProposalsNote('none', 0), null);
  assert.equal(noProposalsNote('ngram', 3), null);
});
