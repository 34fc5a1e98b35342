// The profiles concern: the presets and the user's K/S profiles, TOML in and out.
import type { ServiceImplementation } from '../types.js';
import type { EngineSupervisor } from '../engine-supervisor.js';
import type { ProfileStore } from '../profiles.js';

export function profilesApi(profiles: ProfileStore, supervisor: EngineSupervisor): ServiceImplementation['profiles'] {
  const loadedTarget = () => {
    const t = supervisor.loaded();
    return t ? { recurrent: t.info.recurrent, chain: { strategy: t.strategy, fallbacks: t.fallbacks } } : null;
  };
  return {
    list: async () => profiles.list(),
    select: async (p) => profiles.select(p.profileId),
    create: async (p) => profiles.create(p, loadedTarget()),
    delete: async (p) => {
      await profiles.delete(p.profileId);
      return { ok: true as const };
    },
    importToml: async (p) => {
      return profiles.importToml(p.name, p.toml, loadedTarget());
    },
    exportToml: async (p) => ({
      toml: profiles.exportToml(p.profileId, supervisor.loadedOptions()?.draftMethod ?? null),
    }),
    onChanged: profiles.changed.on,
  };
}
