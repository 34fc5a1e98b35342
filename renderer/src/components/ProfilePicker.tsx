// The Profile picker: the presets and Custom, whose form (K, S, p-min, adaptive K, FR) opens in
// a popover (checked before anything is sent; Send stays disabled while the form is invalid or
// not applied).
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { customProblems, frUnavailable } from '../logic/custom-profile.js';
import { customApplied, profileSettings } from '../logic/send-gate.js';
import { checkCustomForm, loadedChain, targetRecurrent } from '../store/profiles.js';
import { InfoTip, Popover } from './Popover.js';
import { usePower } from './store-context.js';

const PRESET_LABELS: Record<string, string> = { balanced: 'Balanced', peak: 'Peak', autoregressive: 'Autoregressive' };
const CUSTOM = 'custom';

/** What the Custom form's check reads from the store (each a stable value: the check itself is derived in render). */
function useCustomForm() {
  return usePower(
    useShallow((st) => ({
      customK: st.customK,
      customS: st.customS,
      customPMin: st.customPMin,
      customAdaptiveK: st.customAdaptiveK,
      customFr: st.customFr,
      engine: st.engine,
      models: st.models,
      targetId: st.targetId,
    })),
  );
}

/** One typed field of the Custom form; its errors are read from the form's one message (and `note`, when given). */
function CustomField(props: {
  id: string;
  label: string;
  value: string;
  invalid: boolean;
  onChange: (text: string) => void;
  placeholder?: string;
  disabled?: boolean;
  title?: string;
  decimal?: boolean;
  note?: string;
}) {
  return (
    <div className="field narrow">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        inputMode={props.decimal ? 'decimal' : 'numeric'}
        value={props.value}
        placeholder={props.placeholder}
        disabled={props.disabled}
        title={props.title}
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={props.invalid}
        aria-describedby={props.note ? `custom-errors ${props.note}` : 'custom-errors'}
      />
    </div>
  );
}

function CustomProfileForm() {
  const form = useCustomForm();
  const check = checkCustomForm(form);
  const { k, s, pMin, adaptiveK, fr, tried, recurrent, frBlocked, setField, setAdaptiveK, apply } = usePower(
    useShallow((st) => ({
      k: st.customK,
      s: st.customS,
      pMin: st.customPMin,
      adaptiveK: st.customAdaptiveK,
      fr: st.customFr,
      tried: st.customTried,
      recurrent: targetRecurrent(st),
      frBlocked: frUnavailable(loadedChain(st)),
      setField: st.setCustomField,
      setAdaptiveK: st.setCustomAdaptiveK,
      apply: st.applyCustom,
    })),
  );
  const showErrors = tried && !check.ok;
  return (
    <form
      className="custom-profile"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void apply();
      }}
    >
      <CustomField id="custom-k" label="K" value={k} invalid={!check.ok && !!check.kError} onChange={(t) => setField('k', t)} />
      <CustomField
        id="custom-s"
        label="S"
        value={recurrent === false ? '' : s}
        placeholder={recurrent === false ? 'n/a' : '= K'}
        disabled={recurrent === false}
        invalid={!check.ok && !!check.sError}
        note="s-note"
        onChange={(t) => setField('s', t)}
      />
      <CustomField
        id="custom-p-min"
        label="p-min"
        value={pMin}
        placeholder="off"
        decimal
        title="A draft stops where the draft's top-1 probability falls under this (0 to 1; empty: off)"
        invalid={!check.ok && !!check.pMinError}
        onChange={(t) => setField('pMin', t)}
      />
      <CustomField
        id="custom-fr"
        label="FR vocab"
        value={fr}
        placeholder={frBlocked ? 'n/a' : 'all'}
        // a value typed for an earlier chain stays editable, so that it can be cleared
        disabled={frBlocked !== null && fr === ''}
        title="FR: the MTP head drafts among the first N tokens (empty: the whole vocabulary)"
        invalid={!check.ok && !!check.frError}
        note="fr-note"
        onChange={(t) => setField('frVocab', t)}
      />
      <label className="toggle">
        <input type="checkbox" checked={adaptiveK} onChange={(e) => setAdaptiveK(e.target.checked)} /> Adaptive K
      </label>
      <button type="submit">Apply</button>
      <p id="s-note" className="hint">
        {recurrent === false
          ? 'S: not applicable (attention-only target: rejected KV rows roll back for free)'
          : 'S: recurrent rollback snapshots (≤ K; empty means S = K)'}
      </p>
      <p className="hint">Adaptive K: shorter drafts after rejections.</p>
      <p id="fr-note" className="hint">
        {frBlocked ? `FR: ${frBlocked}` : 'FR: the MTP head drafts among the first N tokens (empty: all).'}
      </p>
      <div id="custom-errors" role={showErrors ? 'alert' : undefined} className="form-errors">
        {!check.ok && customProblems(check)}
      </div>
    </form>
  );
}

export function ProfilePicker() {
  const { profiles, activeId, choice, choose } = usePower(
    useShallow((st) => ({
      profiles: st.profiles,
      activeId: st.activeProfileId,
      choice: st.profileChoice,
      choose: st.chooseProfile,
    })),
  );
  const check = checkCustomForm(useCustomForm());
  const active = profiles.find((p) => p.id === activeId);
  const isCustom = choice === CUSTOM;
  const [formOpen, setFormOpen] = useState(false);
  // choosing Custom opens its form
  useEffect(() => {
    if (!isCustom) setFormOpen(false);
  }, [isCustom]);
  const applied = isCustom && customApplied(check, active);
  const customState = !check.ok ? 'invalid' : applied ? `${active?.name}` : 'not applied';

  return (
    <section className="profile-picker" aria-label="Profile settings">
      <div className="field inline">
        <label htmlFor="profile">Profile</label>
        <select
          id="profile"
          value={isCustom ? CUSTOM : (choice ?? activeId ?? '')}
          onChange={(e) => {
            if (e.target.value === CUSTOM) setFormOpen(true);
            void choose(e.target.value);
          }}
        >
          {profiles
            .filter((p) => p.preset)
            .map((p) => (
              <option key={p.id} value={p.id}>
                {PRESET_LABELS[p.id] ?? p.name}
              </option>
            ))}
          <option value={CUSTOM}>Custom</option>
        </select>
        {isCustom ? (
          <Popover summary={`K/S: ${customState}`} className="custom" open={formOpen} onToggle={setFormOpen} align="end">
            <CustomProfileForm />
          </Popover>
        ) : null}
        {active && (!isCustom || applied) && (
          <InfoTip label="About this profile">
            <p>
              <strong>{active.name}</strong> ({profileSettings(active)}): {active.note}
            </p>
          </InfoTip>
        )}
      </div>
    </section>
  );
}
