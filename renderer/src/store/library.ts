// The model bar: the library, the chosen target and draft method, load options, the memory
// estimate before loading, the engine's state and load progress.
import { draftFileOptions, draftMethodOptions, needsDraft, settleChoice } from '../logic/draft-options.js';
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

export const createLibrarySlice: Slice<LibrarySlice> = (set, get) => ({
  models: [],
  targetId: null,
  strategies: null,
  drafts: [],
  method: 'none',
  draftId: null,
  gpuLayers: '-1',
  flashAttn: 'auto',
  estimate: null,
  estimateError: null,
  engine: null,
  loadProgress: null,

  setModels(models) {
    set({ models });
    const { targetId } = get();
    if (targetId && !models.some((m) => m.id === targetId)) void get().selectTarget(null);
    else if (!targetId && models.length > 0) {
      // targets outweigh their drafts: start with the largest usable model
      const usable = models.filter((m) => !m.problem && m.facts);
      const largest = usable.reduce<(typeof usable)[number] | null>((best, m) => (best && best.sizeBytes >= m.sizeBytes ? best : m), null);
      if (largest) void get().selectTarget(largest.id);
    } else if (targetId) void get().selectTarget(targetId);
  },

  async selectTarget(id) {
    const { api } = get();
    const changed = get().targetId !== id;
    // a new target's options replace the old ones only once read: meanwhile none are offered
    set({ targetId: id, estimate: null, estimateError: null, ...(changed ? { strategies: null, drafts: [] } : {}) });
    if (!api || !id) return;
    try {
      const [strategies, { drafts }] = await Promise.all([api.models.strategies({ targetId: id }), api.models.drafts({ targetId: id })]);
      if (get().targetId !== id) return;
      const methods = draftMethodOptions(strategies, drafts);
      const method = (settleChoice(get().method, methods) ?? 'none') as Strategy;
      const files = draftFileOptions(method, drafts);
      set({ strategies, drafts, method, draftId: needsDraft(method) ? settleChoice(get().draftId, files) : null });
      await get().refreshEstimate();
    } catch (error) {
      get().fail('Reading the model', error);
    }
  },

  setMethod(method) {
    const files = draftFileOptions(method, get().drafts);
    set({ method, draftId: needsDraft(method) ? settleChoice(get().draftId, files) : null });
    void get().refreshEstimate();
  },

  setDraft(id) {
    set({ draftId: id });
    void get().refreshEstimate();
  },

  setGpuLayers(text) {
    set({ gpuLayers: text });
    void get().refreshEstimate();
  },

  setFlashAttn(choice) {
    set({ flashAttn: choice });
    void get().refreshEstimate();
  },

  async refreshEstimate() {
    const state = get();
    const { api, targetId, draftId, method } = state;
    const gpuLayers = parseGpuLayers(state.gpuLayers);
    if (!api || !targetId) return;
    if (gpuLayers === null) {
      set({ estimate: null, estimateError: 'GPU layers must be a whole number (-1 for all layers).' });
      return;
    }
    const target = state.models.find((m) => m.id === targetId);
    try {
      const estimate = await api.models.estimate({
        targetId,
        ...(needsDraft(method) && draftId ? { draftId } : {}),
        gpuLayers,
        s: activeS(state, target?.facts?.recurrent ?? false),
        flashAttn: state.flashAttn !== 'off',
        loadMtp: method === 'mtp',
      });
      if (get().targetId === targetId) set({ estimate, estimateError: null });
    } catch (error) {
      if (get().targetId === targetId) set({ estimate: null, estimateError: error instanceof Error ? error.message : String(error) });
    }
  },

  async load() {
    const state = get();
    const { api, targetId, method, draftId } = state;
    if (!api || !targetId) return;
    const gpuLayers = parseGpuLayers(state.gpuLayers);
    if (gpuLayers === null) {
      get().fail('Loading', { code: 'bad-input', message: 'GPU layers must be a whole number (-1 for all layers).' });
      return;
    }
    if (needsDraft(method) && !draftId) {
      get().fail('Loading', { code: 'bad-input', message: `The ${method} method needs a draft model: pick one under Draft model.` });
      return;
    }
    set({ loadProgress: { target: 0, draft: needsDraft(method) ? 0 : null }, notice: null });
    try {
      const engine = await api.engine.load({
        modelId: targetId,
        gpuLayers,
        ...(state.flashAttn === 'auto' ? {} : { flashAttn: state.flashAttn }),
        method: { strategy: method, ...(needsDraft(method) && draftId ? { draftId } : {}) },
      });
      set({ engine });
    } catch (error) {
      get().fail('Loading the model', error);
    } finally {
      set({ loadProgress: null });
    }
  },

  setEngine(engine) {
    set({ engine });
  },

  setLoadProgress(role, progress) {
    const current = get().loadProgress ?? { target: 0, draft: null };
    set({ loadProgress: { ...current, [role]: progress } });
  },
});
