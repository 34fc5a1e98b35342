// The engine concern: load and unload (each holds the reply slot while it runs, so no reply
// starts on a model that is being replaced), the state, the devices.
import type { ServiceImplementation } from '../types.js';
import { devicesReport } from '../../runtime/devices.js';
import { asPowerError } from '../../runtime/target.js';
import type { EngineSupervisor } from '../engine-supervisor.js';
import type { ModelLibrary } from '../library.js';
import type { ReplySlot } from '../reply-slot.js';
import type { SettingsFile } from '../settings.js';
import type { SuffixStoreSetting } from '../suffix-store.js';

export function engineApi(deps: {
  library: ModelLibrary;
  supervisor: EngineSupervisor;
  settings: SettingsFile;
  slot: ReplySlot;
  suffixStore: SuffixStoreSetting;
}): ServiceImplementation['engine'] {
  const { library, supervisor, settings, slot, suffixStore } = deps;
  return {
    load: async (p) => {
      library.get(p.modelId);
      if (p.draftMethod.draftId) library.get(p.draftMethod.draftId);
      const lease = slot.take({ kind: 'load' });
      try {
        const state = await supervisor.load(p);
        settings.data.lastLoad = p;
        await settings.save();
        return state;
      } catch (error) {
        throw asPowerError(error);
      } finally {
        lease.release();
      }
    },
    unload: async () => {
      const lease = slot.take({ kind: 'load' });
      try {
        return await supervisor.unload();
      } finally {
        lease.release();
      }
    },
    state: async () => supervisor.state(),
    devices: async () => devicesReport(),
    suffixStore: () => suffixStore.state(),
    setSuffixStore: (p) => suffixStore.set(p),
    onLoadProgress: supervisor.loadProgress.on,
    onStateChanged: supervisor.stateChanged.on,
  };
}
