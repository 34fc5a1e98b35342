import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { SAMPLING_LABELS, type SamplingField } from '../logic/sampling.js';
import { usePower } from './store-context.js';

function SamplingSettings() {
  const sampling = usePower((s) => s.sampling);
  const setField = usePower((s) => s.setSamplingField);
  return (
    <details className="sampling">
      <summary>Sampling</summary>
      <div className="sampling-grid">
        {(Object.keys(SAMPLING_LABELS) as SamplingField[]).map((field) => (
          <div className="field narrow" key={field}>
            <label htmlFor={`sampling-${field}`}>{SAMPLING_LABELS[field]}</label>
            <input id={`sampling-${field}`} inputMode="decimal" value={sampling[field]} placeholder={field === 'seed' ? 'random' : ''} onChange={(e) => setField(field, e.target.value)} />
          </div>
        ))}
      </div>
      <small className="hint">Temperature 0 is greedy (exactly the target&apos;s own tokens); a stochastic reply without a seed gets a random one.</small>
    </details>
  );
}

export function Composer() {
  const { connected, streaming, hasReply, systemPrompt, loading } = usePower(
    useShallow((s) => ({
      connected: s.connected,
      streaming: s.streaming !== null,
      hasReply: s.chat?.messages.some((m) => m.role === 'assistant') ?? false,
      systemPrompt: s.systemPrompt,
      loading: s.loadProgress !== null || s.engine?.status === 'loading',
    })),
  );
  const { send, stop, regenerate, setSystemPrompt } = usePower(useShallow((s) => ({ send: s.send, stop: s.stop, regenerate: s.regenerate, setSystemPrompt: s.setSystemPrompt })));
  const [text, setText] = useState('');

  const submit = async (): Promise<void> => {
    if (streaming || loading || text.trim() === '') return;
    const content = text;
    setText('');
    if (!(await send(content))) setText(content);
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <details className="system-prompt">
        <summary>System prompt</summary>
        <textarea aria-label="System prompt" rows={2} value={systemPrompt} placeholder="(none)" onChange={(e) => setSystemPrompt(e.target.value)} />
      </details>
      <SamplingSettings />
      <textarea
        aria-label="Message"
        rows={3}
        value={text}
        placeholder="Message (Enter sends, Shift+Enter for a new line)"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            void submit();
          }
        }}
      />
      <div className="buttons">
        <button type="submit" disabled={!connected || streaming || loading || text.trim() === ''} title={loading ? 'wait for the model to load' : undefined}>
          Send
        </button>
        <button type="button" onClick={() => void stop()} disabled={!streaming}>
          Stop
        </button>
        <button type="button" onClick={() => void regenerate()} disabled={!connected || streaming || loading || !hasReply}>
          Regenerate
        </button>
      </div>
    </form>
  );
}
