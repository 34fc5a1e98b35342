import { useShallow } from 'zustand/react/shallow';

import { abPairs } from '../logic/ab.js';
import { AbVerdictText } from './AbVerdict.js';
import { useSendBlocker } from './use-send-gate.js';
import { usePower } from './store-context.js';

/** Run A/B and this chat's A/B results, newest first (read from the chat: they belong to it). */
export function AbPanel() {
  const { chat, pending, canRun, runAb } = usePower(
    useShallow((s) => ({
      chat: s.chat,
      pending: s.abPending !== null && s.abPending.chatId === s.chatId,
      canRun: s.chat?.messages.some((m) => m.role === 'assistant' && m.status === 'done') ?? false,
      runAb: s.runAb,
    })),
  );
  const blocker = useSendBlocker();
  const runs = [...abPairs(chat).values()].flatMap((p) => (p.result ? [p.result] : [])).reverse();
  return (
    <section className="panel ab" aria-labelledby="ab-title">
      <h2 id="ab-title">A/B</h2>
      <button
        type="button"
        onClick={() => void runAb()}
        disabled={!canRun || blocker !== null || pending}
        title={blocker ?? 'Re-runs the last prompt on the autoregressive control (same context and seed); both replies are kept.'}
      >
        Run A/B
      </button>
      {pending && <p className="muted">Running the control…</p>}
      <ul aria-label="A/B results">
        {runs.map((run) => (
          <li className="ab-run" key={run.control.messageId}>
            <AbVerdictText run={run} />
          </li>
        ))}
      </ul>
    </section>
  );
}
