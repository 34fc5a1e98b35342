// K/S profiles: the presets and the user's custom ones; the active one applies to the next reply.
// The picker's choice is kept here with the Custom form, so that Send knows when the profile the
// picker shows is not the one that would run (an invalid or unapplied Custom K/S).
import { checkCustomProfile, customProfileName } from '../logic/custom-profile.js';
import type { ProfilesSlice, Slice, Store } from './types.js';

/** The loaded target's recurrent state, else the picked one's (null: unknown). */
export function targetRecurrent(s: Pick<Store, 'engine' | 'models' | 'targetId'>): boolean | null {
  return s.engine?.model ? s.engine.recurrent : (s.models.find((m) => m.id === s.targetId)?.facts?.recurrent ?? null);
}

export const createProfilesSlice: Slice<ProfilesSlice> = (set, get) => ({
  profiles: [],
  activeProfileId: null,
  profileChoice: null,
  customK: '',
  customS: '',
  customTried: false,

  setProfiles(profiles, activeId) {
    const active = profiles.find((p) => p.id === activeId);
    const choice = get().profileChoice;
    // the picker follows the service unless the Custom form is being filled in
    if (active && !active.preset && choice !== 'custom') {
      set({
        profiles,
        activeProfileId: activeId,
        profileChoice: 'custom',
        customK: String(active.k ?? ''),
        customS: active.s === null ? '' : String(active.s),
      });
    } else set({ profiles, activeProfileId: activeId, profileChoice: choice === 'custom' ? 'custom' : activeId });
  },

  async chooseProfile(choice) {
    set({ customTried: false });
    if (choice === 'custom') {
      const active = get().profiles.find((p) => p.id === get().activeProfileId);
      // start from the active profile's K/S
      if (get().profileChoice !== 'custom') set({ customK: String(active?.k ?? 7), customS: active?.s == null ? '' : String(active.s) });
      set({ profileChoice: 'custom' });
      return;
    }
    set({ profileChoice: choice });
    await get().selectProfile(choice);
  },

  setCustomField(field, text) {
    set(field === 'k' ? { customK: text } : { customS: text });
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
    const check = checkCustomProfile(get().customK, get().customS, targetRecurrent(get()));
    if (!api || !check.ok) return;
    const { k, s } = check;
    try {
      const existing = profiles.find((p) => !p.preset && p.strategy === null && p.k === k && p.s === s);
      const profile = existing ?? (await api.profiles.create({ name: customProfileName(k, s), k, s }));
      await get().selectProfile(profile.id);
    } catch (error) {
      get().fail('Saving the custom profile', error);
    }
  },
});
