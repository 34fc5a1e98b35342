// The Profile picker: the presets and Custom, whose K/S form opens in a popover (checked before
// anything is sent; Send stays disabled while the form is invalid or not applied).
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { checkCustomProfile } from '../logic/custom-profile.js';
import { customApplied } from '../logic/send-gate.js';
import { targetRecurrent } from '../store/profiles.js';
import { InfoTip, Popover } from './Popover.js';
import { usePower } from './store-context.js';

const PRESET_LABELS: Record<string, string> = { balanced: 'Balanced', peak: 'Peak', autoregressive: 'Autoregressive' };
const CUSTOM = 'custom';

function CustomProfileForm() {
  const { k, s, tried, recurrent, setField, apply } = usePower(
    useShallow((st) => ({
      k: st.customK,
      s: st.customS,
      tried: st.customTried,
      recurrent: targetRecurrent(st),
      setField: st.setCustomField,
      apply: st.applyCustom,
    })),
  );
  const check = checkCustomProfile(k, s, recurrent);
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
      <div className="field narrow">
        <label htmlFor="custom-k">K</label>
        <input
          id="custom-k"
          inputMode="numeric"
          value={k}
          onChange={(e) => setField('k', e.target.value)}
          aria-invalid={!check.ok && check.kError !== null}
          aria-describedby="custom-errors"
        />
      </div>
      <div className="field narrow">
        <label htmlFor="custom-s">S</label>
        <input
          id="custom-s"
          inputMode="numeric"
          value={recurrent === false ? '' : s}
          placeholder={recurrent === false ? 'n/a' : '= K'}
          disabled={recurrent === false}
          onChange={(e) => setField('s', e.target.value)}
          aria-invalid={!check.ok && check.sError !== null}
          aria-describedby="custom-errors s-note"
        />
      </div>
      <button type="submit">Apply</button>
      <p id="s-note" className="hint">
        {recurrent === false
          ? 'S: not applicable (attention-only target: rejected KV rows roll back for free)'
          : 'S: recurrent rollback snapshots (≤ K; empty means S = K)'}
      </p>
      <div id="custom-errors" role={showErrors ? 'alert' : undefined} className="form-errors">
        {!check.ok && [check.kError, check.sError].filter(Boolean).join(' ')}
      </div>
    </form>
  );
}

export function ProfilePicker() {
  const { profiles, activeId, choice, k, s, recurrent, choose } = usePower(
    useShallow((st) => ({
      profiles: st.profiles,
      activeId: st.activeProfileId,
      choice: st.profileChoice,
      k: st.customK,
      s: st.customS,
      recurrent: targetRecurrent(st),
      choose: st.chooseProfile,
    })),
  );
  const active = profiles.find((p) => p.id === activeId);
  const isCustom = choice === CUSTOM;
  const [formOpen, setFormOpen] = useState(false);
  // choosing Custom opens its form
  useEffect(() => {
    if (!isCustom) setFormOpen(false);
  }, [isCustom]);
  const check = checkCustomProfile(k, s, recurrent);
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
        ) : (
          active && (
            <InfoTip label="About this profile">
              <p>
                <strong>{active.name}</strong> (
                {active.k === null ? 'no proposals' : `K${active.k}${active.s === null ? '' : `/S${active.s}`}`}): {active.note}
              </p>
            </InfoTip>
          )
        )}
      </div>
    </section>
  );
}
