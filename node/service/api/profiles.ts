// The profiles concern: the presets and the user's K/S profiles, TOML in and out.
import type { PowerApi } from '../../../contract/api/index.js';
import type { EngineSupervisor } from '../engine-supervisor.js';
import type { Profiles } from '../profiles.js';
import { input } from './input.js';

export function profilesApi(profiles: Profiles, supervisor: EngineSupervisor): PowerApi['profiles'] {
  const loadedTarget = () => {
    const t = supervisor.loaded();
    return t ? { recurrent: t.info.recurrent } : null;
  };
  return {
    list: async (raw) => (input('profiles', 'list', raw), profiles.list()),
    select: async (raw) => profiles.select(input('profiles', 'select', raw).profileId),
    create: async (raw) => profiles.create(input('profiles', 'create', raw), loadedTarget()),
    delete: async (raw) => {
      await profiles.delete(input('profiles', 'delete', raw).profileId);
      return { ok: true as const };
    },
    importToml: async (raw) => {
      const p = input('profiles', 'importToml', raw);
      return profiles.importToml(p.name, p.toml, loadedTarget());
    },
    exportToml: async (raw) => ({
      toml: profiles.exportToml(input('profiles', 'exportToml', raw).profileId, supervisor.loadedOptions()?.method.strategy ?? null),
    }),
    onChanged: profiles.changed.on,
  };
}
