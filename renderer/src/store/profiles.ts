// K/S profiles: the presets and the user's custom ones; the active one applies to the next reply.
// The picker's choice is kept here with the Custom form, so that Send knows when the profile the
// picker shows is not the one that would run (an invalid or unapplied Custom K/S).
import { checkCustomProfile, customProfileName, type CustomCheck } from '../logic/custom-profile.js';
import { customApplied } from '../logic/send-gate.js';
import type { ProfileEntry, Strategy } from '../api-types.js';
import type { ProfilesSlice, Slice, Store } from './types.js';

/** The loaded target's recurrent state, else the picked one's (null: unknown). */
export function targetRecurrent(s: Pick<Store, 'engine' | 'models' | 'targetId'>): boolean | null {
  return s.engine?.model ? s.engine.recurrent : (s.models.find((m) => m.id === s.targetId)?.facts?.recurrent ?? null);
}

/** The loaded draft method as a chain, [strategy, ...fallbacks] (null: nothing loaded). */
export function loadedChain(s: Pick<Store, 'engine'>): Strategy[] | null {
  const method = s.engine?.model ? s.engine.options?.draftMethod : undefined;
  return method ? [method.strategy, ...method.fallbacks] : null;
}

/** The Custom form as the store holds it, checked against the target and the loaded chain. */
export function checkCustomForm(
  s: Pick<Store, 'customK' | 'customS' | 'customPMin' | 'customAdaptiveK' | 'customFr' | 'engine' | 'models' | 'targetId'>,
): CustomCheck {
  return checkCustomProfile(
    s.customK,
    s.customS,
    targetRecurrent(s),
    { pMin: s.customPMin, adaptiveK: s.customAdaptiveK, frVocab: s.customFr },
    loadedChain(s),
  );
}

/** The form's fields filled from a profile (K 7 when it has none). */
function formOf(p: ProfileEntry | undefined) {
  return {
    customK: String(p?.k ?? 7),
    customS: p?.s == null ? '' : String(p.s),
    customPMin: p?.pMin ? String(p.pMin) : '',
    customAdaptiveK: p?.adaptiveK ?? false,
    customFr: p?.frVocab === undefined ? '' : String(p.frVocab),
  };
}

export const createProfilesSlice: Slice<ProfilesSlice> = (set, get) => ({
  profiles: [],
  activeProfileId: null,
  profileChoice: null,
  customK: '',
  customS: '',
  customPMin: '',
  customAdaptiveK: false,
  customFr: '',
  customTried: false,

  setProfiles(profiles, activeId) {
    const active = profiles.find((p) => p.id === activeId);
    const choice = get().profileChoice;
    // the picker follows the service unless the Custom form is being filled in
    if (active && !active.preset && choice !== 'custom') {
      set({ profiles, activeProfileId: activeId, profileChoice: 'custom', ...formOf(active), customK: String(active.k ?? '') });
    } else set({ profiles, activeProfileId: activeId, profileChoice: choice === 'custom' ? 'custom' : activeId });
  },

  async chooseProfile(choice) {
    set({ customTried: false });
    if (choice === 'custom') {
      const active = get().profiles.find((p) => p.id === get().activeProfileId);
      // start from the active profile's K/S and drafting policy
      if (get().profileChoice !== 'custom') set(formOf(active));
      set({ profileChoice: 'custom' });
      return;
    }
    set({ profileChoice: choice });
    await get().selectProfile(choice);
  },

  setCustomField(field, text) {
    const key = ({ k: 'customK', s: 'customS', pMin: 'customPMin', frVocab: 'customFr' } as const)[field];
    set({ [key]: text } as Pick<ProfilesSlice, typeof key>);
  },

  setCustomAdaptiveK(on) {
    set({ customAdaptiveK: on });
  },

  async selectProfile(id) {
    const { api } = get();
    if (!api) return;
    try {
      const list = await api.profiles.select({ profileId: id });
      set({ profiles: list.profiles, activeProfileId: list.activeId });
      void get().refreshEstimate();
    } catch (error) {
      get().fail('Choosing the profile', error);
    }
  },

  async applyCustom() {
    const { api, profiles } = get();
    set({ customTried: true });
    const check = checkCustomForm(get());
    if (!api || !check.ok) return;
    const { k, s, pMin, adaptiveK, frVocab } = check;
    try {
      const existing = profiles.find((p) => customApplied(check, p));
      const profile =
        existing ??
        (await api.profiles.create({
          name: customProfileName(k, s, check),
          k,
          s,
          ...(pMin !== undefined ? { pMin } : {}),
          ...(adaptiveK ? { adaptiveK } : {}),
          ...(frVocab !== undefined ? { frVocab } : {}),
        }));
      await get().selectProfile(profile.id);
    } catch (error) {
      get().fail('Saving the custom profile', error);
    }
  },
});
