// "Remember earlier replies for suffix drafting": the setting (engine.setSuffixStore, kept by the
// service), the loaded model's store (tokens, bytes on disk) and Clear. Read again when the
// engine's state or the streaming reply changes, which is when the store can have changed.
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { suffixStoreLine } from '../logic/suffix-store.js';
import type { SuffixStoreState } from '../api-types.js';
import { usePower } from './store-context.js';

export function SuffixStoreSetting() {
  const { api, engine, streaming, fail } = usePower(
    useShallow((s) => ({ api: s.api, engine: s.engine, streaming: s.streaming, fail: s.fail })),
  );
  const [state, setState] = useState<SuffixStoreState | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!api) return;
    let live = true;
    api.engine.suffixStore({}).then(
      (s) => live && setState(s),
      (error: unknown) => live && fail('Store of earlier replies', error),
    );
    return () => {
      live = false;
    };
  }, [api, engine, streaming, fail]);
  const change = async (p: { remember?: boolean; clear?: boolean }) => {
    if (!api) return;
    setBusy(true);
    // the checkbox follows the click at once; the service's answer (or, refused, its state) settles it
    const remember = p.remember;
    if (remember !== undefined) setState((s) => s && { ...s, remember });
    try {
      setState(await api.engine.setSuffixStore(p));
    } catch (error) {
      fail('Store of earlier replies', error);
      setState(await api.engine.suffixStore({}).catch(() => null));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="suffix-store">
      <label className="toggle">
        <input
          type="checkbox"
          checked={state?.remember ?? true}
          disabled={!state || busy}
          onChange={(e) => void change({ remember: e.target.checked })}
        />{' '}
        Remember earlier replies for suffix drafting
      </label>
      <p className="hint">
        {suffixStoreLine(state)}{' '}
        <button
          type="button"
          onClick={() => void change({ clear: true })}
          disabled={!state?.modelId || busy}
          title="Empty the loaded model's store, in memory and on disk"
        >
          Clear
        </button>
      </p>
      <p className="hint">Kept on this machine only; it applies from the next reply.</p>
    </div>
  );
}
