import { useShallow } from 'zustand/react/shallow';

import { draftFileOptions, draftMethodOptions, needsDraft } from '../logic/draft-options.js';
import { bytes, modelSummary } from '../logic/format.js';
import type { FlashAttnChoice, Strategy } from '../api-types.js';
import { usePower } from './store-context.js';

function EngineLine() {
  const engine = usePower((s) => s.engine);
  if (!engine || !engine.model) return <span className="muted">Nothing loaded.</span>;
  const method = engine.options?.method.strategy ?? 'none';
  const draft = engine.draft ? `: ${engine.draft.name}` : '';
  const where = engine.backend ? ` on ${engine.backend.device}` : '';
  const pending = engine.reloadPending ? ' (the engine restarted: it reloads on the next message)' : '';
  return (
    <span className="engine-line" data-status={engine.status}>
      {engine.status === 'loading' ? 'Loading' : 'Loaded'} <strong>{engine.model.name}</strong> with {method}
      {draft}
      {where}
      {pending}
    </span>
  );
}

export function ModelBar() {
  const { models, targetId, strategies, drafts, method, draftId, gpuLayers, flashAttn, estimate, estimateError, loadProgress, streaming } = usePower(
    useShallow((s) => ({
      models: s.models,
      targetId: s.targetId,
      strategies: s.strategies,
      drafts: s.drafts,
      method: s.method,
      draftId: s.draftId,
      gpuLayers: s.gpuLayers,
      flashAttn: s.flashAttn,
      estimate: s.estimate,
      estimateError: s.estimateError,
      loadProgress: s.loadProgress,
      streaming: s.streaming !== null,
    })),
  );
  const actions = usePower(useShallow((s) => ({ selectTarget: s.selectTarget, setMethod: s.setMethod, setDraft: s.setDraft, setGpuLayers: s.setGpuLayers, setFlashAttn: s.setFlashAttn, load: s.load })));
  const target = models.find((m) => m.id === targetId);
  const methods = draftMethodOptions(strategies, drafts);
  const files = draftFileOptions(method, drafts);
  const methodReason = methods.filter((o) => o.disabled && o.reason).map((o) => `${o.label}: ${o.reason}`);
  const loading = loadProgress !== null;
  const progress = loadProgress ? (loadProgress.draft === null ? loadProgress.target : (loadProgress.target + loadProgress.draft) / 2) : 0;

  return (
    <section className="model-bar" aria-label="Model bar">
      <div className="field">
        <label htmlFor="target">Model</label>
        <select id="target" value={targetId ?? ''} onChange={(e) => void actions.selectTarget(e.target.value || null)}>
          {models.length === 0 && <option value="">No models in the library</option>}
          {models.map((m) => (
            <option key={m.id} value={m.id} disabled={m.problem !== null}>
              {m.name}
            </option>
          ))}
        </select>
        <small className="hint">{target ? modelSummary(target) : 'Add models with `power serve --models-dir DIR`.'}</small>
      </div>

      <div className="field">
        <label htmlFor="method">Draft method</label>
        <select id="method" value={method} onChange={(e) => actions.setMethod(e.target.value as Strategy)} disabled={!target}>
          {methods.map((o) => (
            <option key={o.value} value={o.value} disabled={o.disabled} title={o.reason}>
              {o.label}
            </option>
          ))}
        </select>
        {methodReason.length > 0 && <small className="hint">{methodReason.join('; ')}</small>}
      </div>

      <div className="field">
        <label htmlFor="draft">Draft model</label>
        <select id="draft" value={draftId ?? ''} onChange={(e) => actions.setDraft(e.target.value || null)} disabled={!needsDraft(method)}>
          {!needsDraft(method) && <option value="">not needed for {method}</option>}
          {needsDraft(method) && files.length === 0 && <option value="">no draft in the library</option>}
          {files.map((o) => (
            <option key={o.value} value={o.value} disabled={o.disabled} title={o.reason}>
              {o.label}
            </option>
          ))}
        </select>
      </div>

      <div className="field narrow">
        <label htmlFor="gpu-layers">GPU layers</label>
        <input id="gpu-layers" inputMode="numeric" value={gpuLayers} onChange={(e) => actions.setGpuLayers(e.target.value)} title="-1: all layers (ignored on the CPU)" />
      </div>

      <div className="field narrow">
        <label htmlFor="flash-attn">Flash Attention</label>
        <select
          id="flash-attn"
          value={flashAttn}
          onChange={(e) => actions.setFlashAttn(e.target.value as FlashAttnChoice)}
          title="Default: off on the CPU (exact either way there, and faster off), on with CUDA"
        >
          <option value="auto">default</option>
          <option value="on">on</option>
          <option value="off">off</option>
        </select>
      </div>

      <div className="field load">
        <button type="button" onClick={() => void actions.load()} disabled={!target || loading || streaming}>
          Load
        </button>
        {loading && <progress aria-label="Loading progress" max={1} value={progress} />}
      </div>
      <div className="engine">
        <EngineLine />
        {!loading && (estimate || estimateError) && (
          <small className="hint estimate" title={estimate?.description}>
            {' · '}
            {estimateError ? `estimate: ${estimateError}` : estimate ? `this load needs about ${bytes(estimate.total)} (weights ${bytes(estimate.weights)}, KV ${bytes(estimate.kv)}${estimate.draft > 0 ? `, draft ${bytes(estimate.draft)}` : ''}${estimate.recurrent > 0 ? `, snapshots ${bytes(estimate.recurrent)}` : ''}) at ctx ${estimate.contextSize}` : ''}
          </small>
        )}
      </div>
    </section>
  );
}
