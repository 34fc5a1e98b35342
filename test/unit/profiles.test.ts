// K/S profiles: presets, custom ones checked against the loaded target, and TOML that
// round-trips through the format `power generate --profile` reads.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { resolveKS } from '../../app/contract/profile.js';
import { readProfile } from '../../app/cli/profile.js';
import { PROFILE_PRESETS as PRESETS } from '../../app/contract/api/profiles.js';
import { ProfileStore, resolveProfile } from '../../app/service/profiles.js';
import { SettingsFile } from '../../app/service/settings.js';
import type { Strategy } from '../../app/contract/strategies.js';

const RECURRENT = { recurrent: true };
/** a model loaded for one strategy */
const one = (strategy: Strategy) => ({ strategy, fallbacks: [] });
const ATTENTION = { recurrent: false };

describe('profiles', () => {
  let dir: string;
  let profiles: ProfileStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-profiles-'));
    profiles = new ProfileStore(await SettingsFile.open(dir));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('Balanced K7/S7 is the default; Peak K7/S6 and the autoregressive control are presets', () => {
    const { profiles: list, activeId } = profiles.list();
    assert.equal(activeId, 'balanced');
    assert.deepEqual(
      list.map((p) => [p.id, p.k, p.s, p.strategy]),
      [
        ['balanced', 7, null, null],
        ['peak', 7, 6, null],
        ['autoregressive', null, null, 'none'],
      ],
    );
    assert.deepEqual(resolveProfile(PRESETS[1]!, one('mtp')), { entry: PRESETS[1], strategy: 'mtp', fallbacks: [], k: 7, s: 6 });
    assert.equal(resolveProfile(PRESETS[2]!, one('mtp')).strategy, 'none');
    assert.deepEqual(
      resolveProfile(PRESETS[0]!, one('mtp')),
      { entry: PRESETS[0], strategy: 'mtp', fallbacks: [], k: 7, s: 7 },
      'Balanced: S = K',
    );
  });

  test("one K/S resolver: a request's K and S over the profile's, S = K by default, S above K refused naming both sources", () => {
    assert.deepEqual(resolveProfile(PRESETS[0]!, one('ngram'), { k: 3 }), {
      entry: PRESETS[0],
      strategy: 'ngram',
      fallbacks: [],
      k: 3,
      s: 3,
    });
    assert.deepEqual(resolveProfile(PRESETS[1]!, one('ngram'), { k: 5, s: 2 }), {
      entry: PRESETS[1],
      strategy: 'ngram',
      fallbacks: [],
      k: 5,
      s: 2,
    });
    assert.throws(
      () => resolveProfile(PRESETS[1]!, one('ngram'), { k: 3 }),
      /^PowerError: S of the profile 'Peak K7\/S6 \(guarded\)' must be from 0 to K \(3\) \(got 6\)$/,
    );
    assert.deepEqual(
      resolveProfile(PRESETS[1]!, one('ngram'), { s: 7 }),
      { entry: PRESETS[1], strategy: 'ngram', fallbacks: [], k: 7, s: 7 },
      "the request's S over the profile's",
    );
    assert.deepEqual(resolveKS([{ kName: '--k', sName: '--s' }]), { k: 7, s: 7 });
    assert.throws(() => resolveKS([{ k: 3, s: 4, kName: '--k', sName: '--s' }]), /^PowerError: --s must be from 0 to K \(3\) \(got 4\)$/);
    assert.throws(
      () => resolveKS([{ s: 9, kName: '--k', sName: '--s' }]),
      /--s must be from 0 to K \(7\) \(got 9\); K is from the default K/,
    );
  });

  test('every profile round-trips through TOML that the CLI reads', async () => {
    const custom = await profiles.create({ name: 'mine', strategy: 'ngram', k: 5, s: 3 }, RECURRENT);
    for (const p of [...PRESETS, custom]) {
      const toml = profiles.exportToml(p.id, one('mtp'));
      const file = join(dir, `${p.id}.toml`);
      await writeFile(file, toml);
      const read = await readProfile(file); // what `power generate --profile` sees
      assert.equal(read.spec_mode, p.strategy ?? 'mtp');
      assert.equal(read.spec_draft_max, p.strategy === 'none' ? undefined : (p.k ?? undefined));
      const back = await profiles.importToml(`${p.name} again`, toml, RECURRENT);
      assert.deepEqual([back.strategy, back.k, back.s], [p.strategy ?? 'mtp', p.k, p.s]);
    }
  });

  test("an FR profile (spec_mtp_fr_vocab_size) round-trips through TOML and reaches the mtp session's request", async () => {
    const fr = await profiles.importToml('fr', 'spec_mode = "mtp"\nspec_draft_max = 3\nspec_mtp_fr_vocab_size = 256', RECURRENT);
    assert.equal(fr.frVocab, 256);
    assert.deepEqual(resolveProfile(fr, one('mtp')), { entry: fr, strategy: 'mtp', fallbacks: [], k: 3, s: 3, frVocab: 256 });
    const file = join(dir, 'fr.toml');
    await writeFile(file, profiles.exportToml(fr.id, one('mtp')));
    assert.equal((await readProfile(file)).spec_mtp_fr_vocab_size, 256, 'what `power generate --profile` reads');
    await assert.rejects(
      profiles.create({ name: 'x', strategy: 'ngram', k: 3, s: null, frVocab: 64 }, ATTENTION),
      /applies to strategy 'mtp' only/,
    );
    // a profile of the loaded strategy is checked against the loaded chain
    await assert.rejects(
      profiles.create({ name: 'x', strategy: null, k: 3, s: null, frVocab: 64 }, { ...ATTENTION, chain: one('ngram') }),
      /applies to strategy 'mtp' only, not 'ngram'/,
    );
    const onChain = await profiles.create(
      { name: 'y', strategy: null, k: 3, s: null, frVocab: 64 },
      { ...ATTENTION, chain: { strategy: 'ngram', fallbacks: ['mtp'] } },
    );
    assert.equal(onChain.frVocab, 64);
  });

  test('a chain with p-min and adaptive K round-trips through TOML and reaches the session request; the profile is the chain', async () => {
    const toml = 'spec_mode = "ngram-mod,mtp"\nspec_draft_max = 5\nspec_p_min = 0.5\nspec_adaptive_k = true\nspec_mtp_fr_vocab_size = 300';
    const chain = await profiles.importToml('chain', toml, RECURRENT);
    assert.deepEqual([chain.strategy, chain.fallbacks, chain.pMin, chain.adaptiveK, chain.frVocab], ['ngram-mod', ['mtp'], 0.5, true, 300]);
    // the loaded chain does not matter: the profile names its own
    const resolved = resolveProfile(chain, one('ngram'));
    assert.deepEqual(
      { ...resolved, entry: undefined },
      { entry: undefined, strategy: 'ngram-mod', fallbacks: ['mtp'], k: 5, s: 5, frVocab: 300, pMin: 0.5, adaptiveK: true },
    );
    // a profile without a strategy takes the loaded chain; a request's own chain and policy win
    assert.deepEqual(resolveProfile(PRESETS[0]!, { strategy: 'ngram', fallbacks: ['mtp'] }).fallbacks, ['mtp']);
    const asked = resolveProfile(chain, one('ngram'), { chain: one('mtp'), pMin: 0, adaptiveK: false });
    assert.deepEqual([asked.strategy, asked.fallbacks, asked.pMin, asked.adaptiveK], ['mtp', [], undefined, undefined]);
    const file = join(dir, 'chain.toml');
    await writeFile(file, profiles.exportToml(chain.id, one('none')));
    const read = await readProfile(file); // what `power generate --profile` sees
    assert.deepEqual(
      [read.spec_mode, read.spec_draft_max, read.spec_p_min, read.spec_adaptive_k, read.spec_mtp_fr_vocab_size],
      ['ngram-mod,mtp', 5, 0.5, true, 300],
    );
    // the loaded chain is what a strategy-less profile exports
    await writeFile(file, profiles.exportToml('balanced', { strategy: 'ngram', fallbacks: ['mtp'] }));
    assert.equal((await readProfile(file)).spec_mode, 'ngram,mtp');
  });

  test('custom K/S is checked against the loaded model; bad TOML is refused with the reason', async () => {
    await assert.rejects(
      profiles.create({ name: 'x', strategy: null, k: 4, s: 2 }, ATTENTION),
      /does not apply to this attention-only target/,
    );
    assert.equal((await profiles.create({ name: 'y', strategy: null, k: 4, s: null }, ATTENTION)).s, null);
    await assert.rejects(profiles.create({ name: 'x', strategy: null, k: 3, s: 5 }, RECURRENT), /must not exceed K/);
    await assert.rejects(profiles.importToml('t', 'spec_mode = ', RECURRENT), (e: { code: string }) => e.code === 'bad-input');
    await assert.rejects(profiles.importToml('t', 'spec_mode = "warp"', RECURRENT), /invalid: spec_mode/);
    await assert.rejects(
      profiles.importToml('t', 'spec_mode = "ngram"\nspec_mtp_fr_vocab_size = 8192', RECURRENT),
      /applies to strategy 'mtp' only, not 'ngram'/,
    );
    await assert.rejects(profiles.importToml('t', 'spec_mode = "ngram,ngram"', RECURRENT), /appears twice/);
    await assert.rejects(
      profiles.create({ name: 'x', strategy: null, fallbacks: ['mtp'], k: 3, s: null }, RECURRENT),
      /names its first strategy/,
    );
    await assert.rejects(profiles.delete('balanced'), /preset/);
    await assert.rejects(profiles.select('nope'), (e: { code: string }) => e.code === 'not-found');
  });

  test('the selection and custom profiles persist in settings.json', async () => {
    const mine = await profiles.create({ name: 'kept', strategy: null, k: 3, s: 3 }, RECURRENT);
    await profiles.select(mine.id);
    const reopened = new ProfileStore(await SettingsFile.open(dir));
    assert.equal(reopened.list().activeId, mine.id);
    assert.equal(reopened.get(mine.id).name, 'kept');
  });
});
