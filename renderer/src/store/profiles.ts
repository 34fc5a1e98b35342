// K/S profiles: the presets and the user's custom ones; the active one applies to the next reply.
import { customProfileName } from '../logic/custom-profile.js';
import type { ProfilesSlice, Slice } from './types.js';

export const createProfilesSlice: Slice<ProfilesSlice> = (set, get) => ({
  profiles: [],
  activeProfileId: null,

  setProfiles(profiles, activeId) {
    set({ profiles, activeProfileId: activeId });
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

  async applyCustom(k, s) {
    const { api, profiles } = get();
    if (!api) return;
    try {
      const existing = profiles.find((p) => !p.preset && p.strategy === null && p.k === k && p.s === s);
      const profile = existing ?? (await api.profiles.create({ name: customProfileName(k, s), k, s }));
      await get().selectProfile(profile.id);
    } catch (error) {
      get().fail('Saving the custom profile', error);
    }
  },
});
