// The models concern: the library, the drafts and strategies a target can use, the memory estimate.
import type { ServiceImplementation } from '../types.js';
import { PowerError } from '../../contract/api/errors.js';
import { strategyAvailability } from '../../contract/strategies.js';
import { describeEstimate, estimateMemory } from '../../engine/memory-estimate.js';
import { checkDraftCompatibility, draftKind } from '../../models/draft-compat.js';
import { defaultContextSize } from '../../runtime/open-model.js';
import type { EngineSupervisor } from '../engine-supervisor.js';
import type { ModelLibrary } from '../library.js';

export function modelsApi(library: ModelLibrary, supervisor: EngineSupervisor): ServiceImplementation['models'] {
  return {
    list: async () => ({ entries: library.list() }),
    get: async (p) => library.get(p.modelId),
    add: async (p) => library.add(p.path),
    remove: async (p) => {
      const { modelId } = p;
      const loaded = supervisor.loadedOptions();
      if (loaded && (loaded.modelId === modelId || loaded.draftMethod.draftId === modelId)) {
        throw new PowerError('busy', 'the model is loaded: unload it first');
      }
      await library.remove(modelId);
      return { ok: true as const };
    },
    drafts: async (p) => {
      const { targetId } = p;
      const target = await library.gguf(targetId);
      const drafts = [];
      for (const entry of library.list()) {
        if (entry.id === targetId) continue;
        let gguf;
        try {
          gguf = await library.gguf(entry.id);
        } catch (error) {
          drafts.push({
            modelId: entry.id,
            name: entry.name,
            strategy: 'draft-model',
            compatible: false,
            reason: (error as Error).message,
          });
          continue;
        }
        const check = checkDraftCompatibility(target, gguf);
        // the kind names the strategy it serves (a dflash file with a Markov head is dspark)
        drafts.push({
          modelId: entry.id,
          name: entry.name,
          strategy: check.kind,
          compatible: check.compatible,
          ...(check.reason ? { reason: check.reason } : {}),
        });
      }
      return { drafts };
    },
    strategies: async (p) => {
      const { targetId, draftId } = p;
      const target = await library.gguf(targetId);
      const facts = library.get(targetId).facts;
      const draft = draftId ? checkDraftCompatibility(target, await library.gguf(draftId)) : undefined;
      return strategyAvailability({
        nextnLayers: facts?.nextnLayers ?? 0,
        draftOnly: draftKind(target) === 'mtp',
        ...(draft ? { draft } : {}),
      });
    },
    estimate: async (p) => {
      const target = await library.gguf(p.targetId);
      const projector = await library.projector(p.targetId);
      const plan = {
        target,
        ...(p.draftId ? { draft: await library.gguf(p.draftId) } : {}),
        ...(projector ? { projector } : {}),
        contextSize: p.contextSize ?? defaultContextSize(library.get(p.targetId).facts?.contextLength ?? 0),
        batchSize: 512,
        gpuLayers: p.gpuLayers,
        s: p.s,
        flashAttn: p.flashAttn,
        loadMtp: p.loadMtp,
      };
      const e = estimateMemory(plan);
      return { ...e, contextSize: plan.contextSize, description: describeEstimate(e, plan) };
    },
    onLibraryChanged: library.changed.on,
  };
}
