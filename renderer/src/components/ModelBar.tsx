// The model bar: the library button, what to load (model, draft method, draft model), the load
// settings popover, Load / Unload with the engine's progress, and one status of what is loaded.
import { useShallow } from 'zustand/react/shallow';

import { chainLabel, draftMember, fallbackOptions } from '../logic/chain.js';
import { deviceBadge } from '../logic/devices.js';
import { draftFileOptions, draftMethodOptions } from '../logic/draft-options.js';
import { modelSummary } from '../logic/format.js';
import { groupLibrary } from '../logic/library.js';
import type { Strategy } from '../api-types.js';
import { LoadSettings } from './LoadSettings.js';
import { PickerOptions } from './PickerOptions.js';
import { InfoTip } from './Popover.js';
import { usePower } from './store-context.js';

function ModelPicker() {
  const { models, targetId, selectTarget } = usePower(
    useShallow((s) => ({ models: s.models, targetId: s.targetId, selectTarget: s.selectTarget })),
  );
  const groups = groupLibrary(models);
  const target = models.find((m) => m.id === targetId);
  const option = (m: (typeof models)[number]) => (
    <option key={m.id} value={m.id} disabled={m.problem !== null} title={modelSummary(m)}>
      {m.name}
    </option>
  );
  return (
    <div className="field inline">
      <label htmlFor="target">Model</label>
      <select
        id="target"
        className="wide"
        value={targetId ?? ''}
        title={target ? modelSummary(target) : undefined}
        onChange={(e) => void selectTarget(e.target.value || null, true)}
      >
        {groups.models.length + groups.drafts.length === 0 && <option value="">No models in the library</option>}
        {!target && groups.models.length + groups.drafts.length > 0 && <option value="">Choose a model</option>}
        <optgroup label="Models">{groups.models.map(option)}</optgroup>
        {groups.drafts.length > 0 && <optgroup label="Draft models">{groups.drafts.map(option)}</optgroup>}
      </select>
      <InfoTip label="About this model">
        <p>{target ? modelSummary(target) : 'Add models with the Models button (or `power serve --models-dir DIR`).'}</p>
        {target && <p className="path">{target.path}</p>}
      </InfoTip>
    </div>
  );
}

function MethodPicker() {
  const { strategies, drafts, method, targetId, setMethod } = usePower(
    useShallow((s) => ({ strategies: s.strategies, drafts: s.drafts, method: s.method, targetId: s.targetId, setMethod: s.setMethod })),
  );
  const methods = draftMethodOptions(strategies, drafts);
  const reasons = methods.filter((o) => o.disabled && o.reason);
  return (
    <div className="field inline">
      <label htmlFor="method">Draft method</label>
      <select id="method" value={method} onChange={(e) => setMethod(e.target.value as Strategy)} disabled={!targetId}>
        <PickerOptions options={methods} />
      </select>
      {reasons.length > 0 && (
        <InfoTip label="Why some draft methods are unavailable">
          <ul>
            {reasons.map((o) => (
              <li key={o.value}>
                <strong>{o.label}</strong>: {o.reason}
              </li>
            ))}
          </ul>
        </InfoTip>
      )}
    </div>
  );
}

/** The target's options and the chosen chain, as the chain and draft pickers read them. */
function useChosenChain() {
  return usePower(useShallow((s) => ({ strategies: s.strategies, drafts: s.drafts, method: s.method, fallbacks: s.fallbacks })));
}

/**
 * The chain after the draft method: the strategies asked, in order, when those before draft
 * nothing. "Then try" offers what the Draft method picker offers, each that cannot follow
 * disabled with the reason; a member is removed with its × button.
 */
function ChainPicker() {
  const { strategies, drafts, method, fallbacks } = useChosenChain();
  const { targetId, setFallbacks } = usePower(useShallow((s) => ({ targetId: s.targetId, setFallbacks: s.setFallbacks })));
  const options = fallbackOptions(method, fallbacks, draftMethodOptions(strategies, drafts), strategies);
  const none = method === 'none';
  return (
    <div className="field inline chain" role="group" aria-label="Chain">
      <label htmlFor="then-try">Then try</label>
      {fallbacks.map((f, i) => (
        <span key={f} className="chain-member" data-member={f}>
          {f}
          <button
            type="button"
            className="small icon"
            aria-label={`Remove ${f} from the chain`}
            title={`Remove ${f} from the chain`}
            onClick={() => setFallbacks(fallbacks.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </span>
      ))}
      <select
        id="then-try"
        value=""
        onChange={(e) => {
          if (e.target.value) setFallbacks([...fallbacks, e.target.value as Strategy]);
        }}
        disabled={!targetId || none || options.every((o) => o.disabled)}
        title={
          none
            ? 'none proposes nothing: pick a draft method to chain others after it'
            : 'Strategies asked in order when those before draft nothing (llama.cpp --spec-type a,b)'
        }
      >
        <option value="">{fallbacks.length > 0 ? 'add another…' : 'nothing else'}</option>
        <PickerOptions options={options} />
      </select>
    </div>
  );
}

function DraftPicker() {
  const { strategies, drafts, method, fallbacks } = useChosenChain();
  const { draftId, setDraft } = usePower(useShallow((s) => ({ draftId: s.draftId, setDraft: s.setDraft })));
  const member = draftMember([method, ...fallbacks], strategies);
  const files = member ? draftFileOptions(member, drafts, strategies) : [];
  const needed = member !== null;
  return (
    <div className="field inline">
      <label htmlFor="draft">Draft model</label>
      <select id="draft" className="wide" value={draftId ?? ''} onChange={(e) => setDraft(e.target.value || null)} disabled={!needed}>
        {!needed && <option value="">not needed for {chainLabel(method, fallbacks)}</option>}
        {needed && files.length === 0 && <option value="">no draft in the library</option>}
        <PickerOptions options={files} />
      </select>
    </div>
  );
}

/** The bar follows engine.onLoadProgress (target and draft averaged) and keeps the last value after the load. */
function LoadProgressBar() {
  const progress = usePower((s) => s.loadProgress);
  if (!progress) return null;
  const fraction = progress.draft === null ? progress.target : (progress.target + progress.draft) / 2;
  const percent = Math.round(fraction * 100);
  return (
    <div
      className="load-progress"
      role="progressbar"
      aria-label="Loading progress"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
      aria-valuetext={`${percent}%`}
      data-running={progress.running}
      title={`${percent}%`}
    >
      <div className="fill" style={{ width: `${percent}%` }} />
    </div>
  );
}

function EngineStatus() {
  const { engine, devices } = usePower(useShallow((s) => ({ engine: s.engine, devices: s.devices })));
  if (!engine || !engine.model)
    return (
      <span className="engine-line muted" data-status="unloaded">
        Nothing loaded
      </span>
    );
  const method = engine.options ? chainLabel(engine.options.draftMethod.strategy, engine.options.draftMethod.fallbacks) : 'none';
  const draft = engine.draft ? `: ${engine.draft.name}` : '';
  const badge = deviceBadge(engine, devices);
  const pending = engine.reloadPending ? ' (the engine restarted: it reloads on the next message)' : '';
  const where = `${engine.backend ? ` on ${engine.backend.device}` : ''}${engine.contextSize ? ` · ctx ${engine.contextSize}` : ''}`;
  return (
    <span
      className="engine-line"
      data-status={engine.status}
      title={`${engine.status === 'loading' ? 'Loading' : 'Loaded'} ${engine.model.name} with ${method}${draft}${where}${pending}`}
    >
      <span className="engine-text">
        {engine.status === 'loading' ? 'Loading' : 'Loaded'} <strong>{engine.model.name}</strong> with {method}
        {draft}
        {pending}
      </span>
      {badge && (
        <span className="badge" data-testid="device-badge">
          <span className="sr-only">Device: </span>
          {badge}
        </span>
      )}
    </span>
  );
}

function LoadButtons() {
  const { targetId, loading, streaming, loaded, load, unload } = usePower(
    useShallow((s) => ({
      targetId: s.targetId,
      loading: s.loadProgress?.running === true || s.engine?.status === 'loading',
      streaming: s.streaming !== null,
      loaded: s.engine?.model != null,
      load: s.load,
      unload: s.unload,
    })),
  );
  return (
    <div className="load-buttons">
      <button
        type="button"
        className="primary"
        onClick={() => void load()}
        disabled={!targetId || loading || streaming}
        title={streaming ? 'wait for the reply to end' : undefined}
      >
        Load
      </button>
      <button type="button" onClick={() => void unload()} disabled={!loaded || loading || streaming}>
        Unload
      </button>
    </div>
  );
}

export function ModelBar() {
  const openModels = usePower((s) => s.setModelsOpen);
  return (
    <section className="model-bar" aria-label="Model bar">
      <button type="button" onClick={() => openModels(true)}>
        Models
      </button>
      <ModelPicker />
      <MethodPicker />
      <ChainPicker />
      <DraftPicker />
      <LoadSettings />
      <LoadButtons />
      <LoadProgressBar />
      <EngineStatus />
    </section>
  );
}
