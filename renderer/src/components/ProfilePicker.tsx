import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { checkCustomProfile } from '../logic/custom-profile.js';
import { usePower } from './store-context.js';

const PRESET_LABELS: Record<string, string> = { balanced: 'Balanced', peak: 'Peak', autoregressive: 'Autoregressive' };
const CUSTOM = 'custom';

export function ProfilePicker() {
  const { profiles, activeId, engine, models, targetId } = usePower(
    useShallow((s) => ({ profiles: s.profiles, activeId: s.activeProfileId, engine: s.engine, models: s.models, targetId: s.targetId })),
  );
  const selectProfile = usePower((s) => s.selectProfile);
  const applyCustom = usePower((s) => s.applyCustom);
  const active = profiles.find((p) => p.id === activeId);
  const activeIsCustom = active !== undefined && !active.preset;
  const [customOpen, setCustomOpen] = useState(false);
  const [k, setK] = useState('');
  const [s, setS] = useState('');
  const [tried, setTried] = useState(false);

  useEffect(() => {
    if (activeIsCustom && active) {
      setK(String(active.k ?? ''));
      setS(active.s === null ? '' : String(active.s));
    }
  }, [activeIsCustom, active]);

  // S applies to recurrent/hybrid targets only: the loaded one, else the one picked
  const recurrent = engine?.model ? engine.recurrent : (models.find((m) => m.id === targetId)?.facts?.recurrent ?? null);
  const check = checkCustomProfile(k, s, recurrent);
  const showCustom = customOpen || activeIsCustom;
  const value = showCustom ? CUSTOM : (activeId ?? '');

  return (
    <section className="profile-picker" aria-label="Profile settings">
      <div className="field">
        <label htmlFor="profile">Profile</label>
        <select
          id="profile"
          value={value}
          onChange={(e) => {
            setTried(false);
            if (e.target.value === CUSTOM) setCustomOpen(true);
            else {
              setCustomOpen(false);
              void selectProfile(e.target.value);
            }
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
        <small className="hint">{showCustom ? (activeIsCustom ? `active: ${active?.name}` : 'set K and S, then Apply') : active ? `${active.k === null ? 'no proposals' : `K${active.k}${active.s === null ? '' : `/S${active.s}`}`}: ${active.note}` : ''}</small>
      </div>
      {showCustom && (
        <form
          className="custom-profile"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            setTried(true);
            if (check.ok) void applyCustom(check.k, check.s);
          }}
        >
          <div className="field narrow">
            <label htmlFor="custom-k">K</label>
            <input id="custom-k" inputMode="numeric" value={k} onChange={(e) => setK(e.target.value)} aria-invalid={tried && !check.ok && check.kError !== null} aria-describedby="custom-errors" />
          </div>
          <div className="field narrow">
            <label htmlFor="custom-s">S</label>
            <input
              id="custom-s"
              inputMode="numeric"
              value={recurrent === false ? '' : s}
              placeholder={recurrent === false ? 'n/a' : '= K'}
              disabled={recurrent === false}
              onChange={(e) => setS(e.target.value)}
              aria-invalid={tried && !check.ok && check.sError !== null}
              aria-describedby="custom-errors s-note"
            />
          </div>
          <button type="submit">Apply</button>
          <small id="s-note" className="hint">
            {recurrent === false
              ? 'S: not applicable (attention-only target: rejected KV rows roll back for free)'
              : 'S: recurrent rollback snapshots (≤ K; empty means S = K)'}
          </small>
          <div id="custom-errors" role={tried && !check.ok ? 'alert' : undefined} className="form-errors">
            {tried && !check.ok && [check.kError, check.sError].filter(Boolean).join(' ')}
          </div>
        </form>
      )}
    </section>
  );
}
