import { useShallow } from 'zustand/react/shallow';

import { decodeRate, fixed, shortDigest, tokensPerSecond } from '../logic/format.js';
import type { AbResult } from '../logic/ab.js';
import { usePower } from './store-context.js';

function AbRow({ run }: { run: AbResult }) {
  const { speculative: a, control: b } = run;
  return (
    <li className="ab-run">
      <p>
        <strong>{run.decodeSpeedup === null ? '—' : `${fixed(run.decodeSpeedup)}×`}</strong> speedup ({a.strategy}
        {a.k === null ? '' : ` K${a.k}${a.s === null ? '' : `/S${a.s}`}`} {tokensPerSecond(decodeRate(a.stats))} vs autoregressive {tokensPerSecond(decodeRate(b.stats))}; request-wide{' '}
        {run.requestSpeedup === null ? '—' : `${fixed(run.requestSpeedup)}×`})
      </p>
      <p className={run.digestsMatch ? 'match' : 'mismatch'}>
        {run.digestsMatch === null
          ? 'digests: unknown'
          : run.digestsMatch
            ? `Digests match (${shortDigest(a.digest)}): the same tokens as the target alone.`
            : `Digests differ: ${shortDigest(a.digest)} vs ${shortDigest(b.digest)} (run \`power audit\` to see where).`}
      </p>
    </li>
  );
}

export function AbPanel() {
  const { runs, pending, streaming, canRun } = usePower(
    useShallow((s) => ({
      runs: s.abRuns,
      pending: s.abPending !== null,
      streaming: s.streaming !== null,
      canRun: s.chat?.messages.some((m) => m.role === 'assistant' && m.status === 'done') ?? false,
    })),
  );
  const runAb = usePower((s) => s.runAb);
  return (
    <section className="panel ab" aria-labelledby="ab-title">
      <h2 id="ab-title">A/B</h2>
      <p className="hint">Re-runs the last prompt on the autoregressive control (same context and seed); the control&apos;s reply replaces the last one.</p>
      <button type="button" onClick={() => void runAb()} disabled={!canRun || streaming || pending}>
        Run A/B
      </button>
      {pending && <p className="muted">Running the control…</p>}
      <ul aria-label="A/B results">
        {[...runs].reverse().map((run, i) => (
          <AbRow key={runs.length - i} run={run} />
        ))}
      </ul>
    </section>
  );
}
