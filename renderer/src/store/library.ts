// The model library, what the pickers offer for the chosen target, the load settings, the
// memory estimate, the engine's state and load progress.
import { draftMember, settleFallbacks } from '../logic/chain.js';
import { draftFileOptions, draftMethodOptions, needsDraft, settleChoice } from '../logic/draft-options.js';
import { addPathProblem, bestMethod, defaultTarget, describeAdded, isArtifact } from '../logic/library.js';
import { checkLoadFields } from '../logic/load-settings.js';
import type { Strategy } from '../api-types.js';
import type { LibrarySlice, Slice, Store } from './types.js';

/** -1 (all layers) when empty; null when not a whole number ≥ -1. */
export function parseGpuLayers(text: string): number | null {
  const t = text.trim();
  if (t === '') return -1;
  if (!/^-?\d+$/.test(t)) return null;
  const n = Number(t);
  return n >= -1 ? n : null;
}

function activeS(state: Store, recurrent: boolean): number {
  if (!recurrent) return 0;
  const profile = state.profiles.find((p) => p.id === state.activeProfileId);
  return profile?.s ?? profile?.k ?? 0;
}

/** The chosen chain's member that loads a draft file, null when none needs one. */
function chosenDraftMember(state: Pick<Store, 'method' | 'fallbacks' | 'strategies'>): Strategy | null {
  return draftMember([state.method, ...state.fallbacks], state.strategies);
}

function message(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}

/**
 * What loading and its estimate start from, so that the estimate refuses as the load would:
 * nothing to do without the API or a target; else the load fields checked, or their problems
 * in one line.
 */
function loadInputs(state: Store) {
  const { api, targetId } = state;
  if (!api || !targetId) return null;
  const fields = checkLoadFields(state);
  return fields.ok ? { api, targetId, fields } : { problem: Object.values(fields.errors).join(' ') };
}

export const createLibrarySlice: Slice<LibrarySlice> = (set, get) => {
  /** bumped when the user picks a method: a target's best method never overrides a choice made meanwhile */
  let methodPicks = 0;
  /** the draft to show for the chosen chain: kept when still usable, none when no member needs one */
  const settledDraft = (): string | null => {
    const state = get();
    const member = chosenDraftMember(state);
    return member ? settleChoice(state.draftId, draftFileOptions(member, state.drafts, state.strategies)) : null;
  };
  return {
    models: [],
    targetId: null,
    strategies: null,
    drafts: [],
    method: 'none',
    fallbacks: [],
    draftId: null,
    gpuLayers: '-1',
    contextSize: '',
    threads: '',
    remote: '',
    device: 'auto',
    flashAttn: 'auto',
    devices: null,
    estimate: null,
    estimateError: null,
    engine: null,
    loadProgress: null,
    addResult: null,
    methodPinned: false,

    setModels(models) {
      set({ models });
      const { targetId } = get();
      const current = models.find((m) => m.id === targetId);
      if (targetId && (!current || isArtifact(current))) void get().selectTarget(defaultTarget(models), true);
      else if (!targetId) {
        const first = defaultTarget(models);
        if (first) void get().selectTarget(first, true);
      } else void get().selectTarget(targetId, !get().methodPinned);
    },

    async selectTarget(id, best = false) {
      const { api } = get();
      const changed = get().targetId !== id;
      // a new target's options replace the old ones only once read: meanwhile none are offered
      set({
        targetId: id,
        estimate: null,
        estimateError: null,
        ...(changed ? { strategies: null, drafts: [] } : {}),
        ...(best ? { methodPinned: false } : {}),
      });
      if (!api || !id) return;
      const picks = methodPicks;
      try {
        const [strategies, { drafts }] = await Promise.all([api.models.strategies({ targetId: id }), api.models.drafts({ targetId: id })]);
        if (get().targetId !== id) return;
        if (best && picks === methodPicks) {
          const choice = bestMethod(
            get().models.find((m) => m.id === id),
            strategies,
            drafts,
            get().models,
          );
          set({ strategies, drafts, method: choice.method, fallbacks: [], draftId: choice.draftId });
        } else {
          const methods = draftMethodOptions(strategies, drafts);
          const method = (settleChoice(get().method, methods) ?? 'none') as Strategy;
          const fallbacks = settleFallbacks(method, get().fallbacks, methods, strategies);
          set({ strategies, drafts, method, fallbacks });
          set({ draftId: settledDraft() });
        }
        await get().refreshEstimate();
      } catch (error) {
        get().fail('Reading the model', error);
      }
    },

    setMethod(method) {
      methodPicks++;
      set({ methodPinned: true });
      const { drafts, strategies } = get();
      const fallbacks = settleFallbacks(method, get().fallbacks, draftMethodOptions(strategies, drafts), strategies);
      set({ method, fallbacks });
      set({ draftId: settledDraft() });
      void get().refreshEstimate();
    },

    setFallbacks(fallbacks) {
      methodPicks++;
      set({ methodPinned: true });
      const { drafts, strategies, method } = get();
      set({ fallbacks: settleFallbacks(method, fallbacks, draftMethodOptions(strategies, drafts), strategies) });
      set({ draftId: settledDraft() });
      void get().refreshEstimate();
    },

    setDraft(id) {
      set({ draftId: id });
      void get().refreshEstimate();
    },

    setLoadField(field, text) {
      set({ [field]: text } as Pick<LibrarySlice, typeof field>);
      void get().refreshEstimate();
    },

    setDevice(device) {
      set({ device });
    },

    setFlashAttn(choice) {
      set({ flashAttn: choice });
      void get().refreshEstimate();
    },

    async refreshEstimate() {
      const state = get();
      const inputs = loadInputs(state);
      if (!inputs) return;
      if ('problem' in inputs) {
        set({ estimate: null, estimateError: inputs.problem });
        return;
      }
      const { api, targetId, fields } = inputs;
      const { draftId, method, fallbacks } = state;
      const target = state.models.find((m) => m.id === targetId);
      const members = [method, ...fallbacks];
      try {
        const estimate = await api.models.estimate({
          targetId,
          ...(chosenDraftMember(state) && draftId ? { draftId } : {}),
          ...(fields.contextSize !== undefined ? { contextSize: fields.contextSize } : {}),
          gpuLayers: fields.gpuLayers,
          s: activeS(state, target?.facts?.recurrent ?? false),
          flashAttn: state.flashAttn !== 'off',
          loadMtp: members.includes('mtp') && !needsDraft('mtp', state.strategies),
        });
        if (get().targetId === targetId) set({ estimate, estimateError: null });
      } catch (error) {
        if (get().targetId === targetId) set({ estimate: null, estimateError: message(error) });
      }
    },

    async refreshDevices() {
      const { api } = get();
      if (!api) return;
      try {
        set({ devices: await api.engine.devices({}) });
      } catch {
        // the Device picker then offers auto and CPU only
      }
    },

    async load() {
      const state = get();
      const inputs = loadInputs(state);
      if (!inputs) return;
      if ('problem' in inputs) {
        get().fail('Loading', { code: 'bad-input', message: inputs.problem });
        return;
      }
      const { api, targetId, fields } = inputs;
      const { method, fallbacks, draftId } = state;
      const member = chosenDraftMember(state);
      const withDraft = member !== null;
      if (withDraft && !draftId) {
        get().fail('Loading', { code: 'bad-input', message: `The ${member} method needs a draft model: pick one under Draft model.` });
        return;
      }
      set({ loadProgress: { target: 0, draft: withDraft ? 0 : null, running: true }, notice: null });
      try {
        const engine = await api.engine.load({
          modelId: targetId,
          device: state.device,
          gpuLayers: fields.gpuLayers,
          ...(fields.contextSize !== undefined ? { contextSize: fields.contextSize } : {}),
          ...(fields.threads !== undefined ? { threads: fields.threads } : {}),
          ...(fields.rpc ? { rpc: fields.rpc } : {}),
          ...(state.flashAttn === 'auto' ? {} : { flashAttn: state.flashAttn }),
          draftMethod: { strategy: method, fallbacks, ...(withDraft && draftId ? { draftId } : {}) },
        });
        set({ engine });
        void get().refreshDevices();
      } catch (error) {
        get().fail('Loading the model', error);
      } finally {
        const progress = get().loadProgress;
        set({ loadProgress: progress ? { ...progress, running: false } : null });
      }
    },

    async unload() {
      const { api } = get();
      if (!api) return;
      try {
        set({ engine: await api.engine.unload({}), loadProgress: null });
        void get().refreshDevices();
      } catch (error) {
        get().fail('Unloading', error);
      }
    },

    setEngine(engine) {
      set({ engine });
    },

    setLoadProgress(role, progress) {
      const current = get().loadProgress ?? { target: 0, draft: null, running: true };
      set({ loadProgress: { ...current, [role]: progress } });
    },

    async addModels(kind, path) {
      const { api } = get();
      if (!api) return false;
      const problem = addPathProblem(kind, path);
      if (problem) {
        set({ addResult: { text: problem, failed: true } });
        return false;
      }
      try {
        const result = await api.models.add({ path: path.trim() });
        set({ addResult: { text: describeAdded(result), failed: result.added.length === 0 } });
        const { entries } = await api.models.list({});
        get().setModels(entries);
        return result.added.length > 0;
      } catch (error) {
        set({ addResult: { text: `Adding ${path.trim()} failed: ${message(error)}`, failed: true } });
        return false;
      }
    },

    async removeModel(id) {
      const { api } = get();
      if (!api) return;
      const name = get().models.find((m) => m.id === id)?.name ?? 'the model';
      try {
        await api.models.remove({ modelId: id });
        set({ addResult: { text: `Removed ${name} from the library (the file stays where it is).`, failed: false } });
        const { entries } = await api.models.list({});
        get().setModels(entries);
      } catch (error) {
        set({ addResult: { text: `Removing ${name} failed: ${message(error)}`, failed: true } });
      }
    },
  };
};
