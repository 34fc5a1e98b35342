// The renderer's pure pieces for chains and the drafting policy (no engine, no DOM): the "then
// try" picker's options, the chain's draft member, a reply's rounds per member, the Custom form's
// p-min / adaptive K / FR and whether a profile is the one the form describes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  chainFigures,
  chainLabel,
  chainStatsParts,
  draftMember,
  fallbackOptions,
  roundMembers,
  settleFallbacks,
} from '../../renderer/src/logic/chain.js';
import { checkCustomProfile, customProblems, customProfileName, NO_POLICY } from '../../renderer/src/logic/custom-profile.js';
import { draftMethodOptions } from '../../renderer/src/logic/draft-options.js';
import { customApplied, profileSettings, profileToRun } from '../../renderer/src/logic/send-gate.js';
import { strategyAvailability } from '../../app/contract/strategies.js';
import type { ApiRound, ProfileEntry, Strategies } from '../../renderer/src/api-types.js';

/** a hybrid target with NextN layers (mtp from its own head) and a plain one (mtp only with an assistant) */
const NEXTN: Strategies = strategyAvailability({ nextnLayers: 1 });
const PLAIN: Strategies = strategyAvailability({ nextnLayers: 0 });
const DRAFTS = [
  { modelId: 'd', name: 'draft-close', strategy: 'draft-model', compatible: true },
  { modelId: 'a', name: 'gemma4-assistant', strategy: 'mtp', compatible: true },
];

function round(index: number, proposed: number, accepted: number, member?: number): ApiRound {
  return {
    index,
    proposed,
    accepted,
    replay: false,
    clampedTo: null,
    ...(member === undefined ? {} : { member }),
    tokenIds: [1],
    origins: ['target'],
    startUs: 0,
    endUs: 0,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
  };
}

describe('the "then try" picker', () => {
  test('offers what the Draft method picker offers, less none, refusing what cannot follow with the reason', () => {
    const methods = draftMethodOptions(NEXTN, []);
    const options = fallbackOptions('ngram-mod', [], methods, NEXTN);
    assert.ok(!options.some((o) => o.value === 'none'), 'none never follows');
    const mtp = options.find((o) => o.value === 'mtp');
    assert.deepEqual(mtp, { value: 'mtp', label: 'mtp', disabled: false });
    const self = options.find((o) => o.value === 'ngram-mod')!;
    assert.equal(self.disabled, true);
    assert.match(self.reason!, /'ngram-mod' appears twice/);
  });

  test('a strategy the target cannot serve stays disabled with its own reason', () => {
    const options = fallbackOptions('ngram', [], draftMethodOptions(PLAIN, []), PLAIN);
    assert.ok(!options.some((o) => o.value === 'mtp'), 'mtp is not offered without NextN layers or an assistant');
    assert.ok(!options.some((o) => o.value === 'draft-model'), 'draft-model is not offered without a draft in the library');
  });

  test('two members that each need a draft file are refused', () => {
    const methods = draftMethodOptions(PLAIN, DRAFTS);
    const options = fallbackOptions('draft-model', [], methods, PLAIN);
    const mtp = options.find((o) => o.value === 'mtp')!;
    assert.equal(mtp.disabled, true);
    assert.match(mtp.reason!, /draft-model and mtp would each need a draft file/);
    // on a target with NextN layers mtp needs no file, so it may follow draft-model
    assert.equal(
      fallbackOptions('draft-model', [], draftMethodOptions(NEXTN, DRAFTS), NEXTN).find((o) => o.value === 'mtp')!.disabled,
      false,
    );
  });

  test('the draft member is the chain member that needs the file', () => {
    assert.equal(draftMember(['ngram-mod', 'mtp'], NEXTN), null);
    assert.equal(draftMember(['ngram-mod', 'mtp'], PLAIN), 'mtp');
    assert.equal(draftMember(['ngram', 'draft-model'], NEXTN), 'draft-model');
  });

  test('changing the method keeps the fallbacks that still hold, in order', () => {
    const methods = draftMethodOptions(NEXTN, []);
    assert.deepEqual(settleFallbacks('ngram-mod', ['mtp', 'ngram'], methods, NEXTN), ['mtp', 'ngram']);
    assert.deepEqual(settleFallbacks('mtp', ['mtp', 'ngram'], methods, NEXTN), ['ngram'], 'mtp cannot follow itself');
    assert.deepEqual(settleFallbacks('none', ['mtp'], methods, NEXTN), [], 'nothing follows none');
    assert.deepEqual(settleFallbacks('ngram', ['mtp'], draftMethodOptions(PLAIN, []), PLAIN), [], 'a target without mtp drops it');
  });

  test('a chain reads as its members with arrows', () => {
    assert.equal(chainLabel('ngram-mod', ['mtp']), 'ngram-mod → mtp');
    assert.equal(chainLabel('mtp'), 'mtp');
  });
});

describe("a chain's reply, per member", () => {
  test('counts the rounds, proposals and acceptance of each member, and the rounds none drafted', () => {
    const rounds = [round(1, 0, 0), round(2, 4, 3, 0), round(3, 4, 1, 1), round(4, 2, 2, 0), round(5, 0, 0)];
    const figures = chainFigures(rounds, 'ngram-mod', ['mtp'])!;
    assert.deepEqual(figures.members, [
      { member: 0, strategy: 'ngram-mod', rounds: 2, proposed: 6, accepted: 5, acceptanceRate: 5 / 6 },
      { member: 1, strategy: 'mtp', rounds: 1, proposed: 4, accepted: 1, acceptanceRate: 0.25 },
    ]);
    assert.equal(figures.undrafted, 2);
  });

  test('a member that drafted nothing has no acceptance, and one strategy is no chain', () => {
    const figures = chainFigures([round(1, 3, 3, 0)], 'ngram', ['mtp'])!;
    assert.equal(figures.members[1]!.acceptanceRate, null);
    assert.equal(chainFigures([round(1, 3, 3)], 'mtp'), null);
  });

  test('each round is told by the member that drafted it, for the token origins', () => {
    const members = roundMembers([round(1, 0, 0), round(2, 4, 3, 0), round(3, 4, 1, 1)], 'ngram-mod', ['mtp'])!;
    assert.deepEqual(
      [...members],
      [
        [2, 'ngram-mod'],
        [3, 'mtp'],
      ],
    );
    assert.equal(roundMembers([round(1, 3, 3)], 'mtp'), null);
  });

  test("the reply's figures name each member's share and the drafting policy", () => {
    const rounds = [round(1, 4, 3, 0), round(2, 4, 1, 1)];
    assert.deepEqual(chainStatsParts(rounds, { strategy: 'ngram-mod', fallbacks: ['mtp'], pMin: 0.3, adaptiveK: true }), [
      'by ngram-mod 1 round (75.0%), mtp 1 round (25.0%)',
      'p-min 0.3',
      'adaptive K',
    ]);
    assert.deepEqual(chainStatsParts(rounds, { strategy: 'mtp', frVocab: 4096 }), ['FR 4096']);
  });
});

describe('the Custom form: p-min, adaptive K, FR', () => {
  test('p-min is a number from 0 to 1; empty and 0 are off', () => {
    for (const bad of ['1.5', '-0.1', 'half', '1e-3']) {
      const r = checkCustomProfile('7', '', false, { ...NO_POLICY, pMin: bad });
      assert.equal(r.ok, false, bad);
      if (!r.ok) assert.match(r.pMinError!, /p-min must be a number from 0 to 1/);
    }
    assert.deepEqual(checkCustomProfile('7', '', false, { ...NO_POLICY, pMin: '0.25' }), { ok: true, k: 7, s: null, pMin: 0.25 });
    assert.deepEqual(checkCustomProfile('7', '', false, { ...NO_POLICY, pMin: '0' }), { ok: true, k: 7, s: null });
    assert.deepEqual(checkCustomProfile('7', '', false, { ...NO_POLICY, adaptiveK: true }), { ok: true, k: 7, s: null, adaptiveK: true });
  });

  test('FR needs a loaded chain with mtp', () => {
    const fr = { ...NO_POLICY, frVocab: '4096' };
    const none = checkCustomProfile('7', '', false, fr, null);
    assert.equal(none.ok, false);
    if (!none.ok) assert.match(customProblems(none), /FR needs a loaded model whose draft method includes mtp/);
    const ngram = checkCustomProfile('7', '', false, fr, ['ngram']);
    assert.equal(ngram.ok, false);
    if (!ngram.ok) assert.match(ngram.frError!, /applies to strategy 'mtp' only/);
    assert.deepEqual(checkCustomProfile('7', '', false, fr, ['ngram-mod', 'mtp']), { ok: true, k: 7, s: null, frVocab: 4096 });
    const zero = checkCustomProfile('7', '', false, { ...NO_POLICY, frVocab: '0' }, ['mtp']);
    assert.equal(zero.ok, false);
    if (!zero.ok) assert.match(zero.frError!, /whole number from 1/);
  });

  test('the saved name says what the form set', () => {
    assert.equal(customProfileName(7, null, { pMin: 0.3, adaptiveK: true }), 'Custom K7 · p-min 0.3 · adaptive K');
    assert.equal(customProfileName(5, 3, { frVocab: 4096 }), 'Custom K5/S3 · FR 4096');
  });
});

describe('the applied Custom profile includes the drafting policy', () => {
  const base: ProfileEntry = {
    id: 'c',
    name: 'Custom K7 · p-min 0.3 · adaptive K',
    preset: false,
    strategy: null,
    k: 7,
    s: null,
    note: '',
  };
  const withPolicy: ProfileEntry = { ...base, pMin: 0.3, adaptiveK: true };

  test('p-min and adaptive K must match', () => {
    const form = checkCustomProfile('7', '', false, { pMin: '0.3', adaptiveK: true, frVocab: '' });
    assert.equal(customApplied(form, withPolicy), true);
    assert.equal(customApplied(form, base), false);
    assert.equal(customApplied(checkCustomProfile('7', '', false), withPolicy), false);
    assert.equal(customApplied(checkCustomProfile('7', '', false, { pMin: '0.4', adaptiveK: true, frVocab: '' }), withPolicy), false);
  });

  test('FR must match, and the profile must run on the loaded strategy or chain', () => {
    const form = checkCustomProfile('7', '', false, { ...NO_POLICY, frVocab: '64' }, ['ngram-mod', 'mtp']);
    const fr: ProfileEntry = { ...base, frVocab: 64 };
    assert.equal(customApplied(form, fr), true);
    assert.equal(customApplied(form, { ...fr, frVocab: 32 }), false);
    assert.equal(
      customApplied(form, { ...fr, strategy: 'ngram-mod', fallbacks: ['mtp'] }),
      false,
      'a profile naming its own chain is not the form',
    );
  });

  test("a profile's summary lists its policy and chain", () => {
    const fr: ProfileEntry = { ...withPolicy, strategy: 'ngram-mod', fallbacks: ['mtp'], frVocab: 64 };
    assert.equal(profileSettings(fr), 'K7 · p-min 0.3 · adaptive K · FR 64 · ngram-mod → mtp');
    assert.equal(profileToRun(withPolicy), 'Custom K7 · p-min 0.3 · adaptive K');
    assert.equal(profileToRun({ ...withPolicy, name: 'mine' }), 'mine (K7 · p-min 0.3 · adaptive K)');
  });
});
