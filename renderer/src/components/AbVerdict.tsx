// The A/B verdict in words, first: "1.8× faster · Digests match", then the two rates and the
// request-wide figure (only where both sides prefilled alike; otherwise why not, with each side's
// time to first token).
import { abVerdict, type AbPair, type AbResult } from '../logic/ab.js';
import { shortDigest } from '../logic/format.js';

function ks(side: AbResult['speculative']): string {
  return side.k === null ? '' : ` K${side.k}${side.s === null ? '' : `/S${side.s}`}`;
}

export function AbVerdictText({ run }: { run: AbResult }) {
  const v = abVerdict(run);
  return (
    <>
      <p className="verdict">
        <strong>{v.speed}</strong> ·{' '}
        <span className={run.digestsMatch === false ? 'mismatch' : run.digestsMatch ? 'match' : ''}>{v.digests}</span>
      </p>
      <p className="verdict-detail">
        {run.speculative.strategy}
        {ks(run.speculative)} {v.rates} autoregressive (steady decode); {v.request}.{' '}
        {run.digestsMatch === true && `Same tokens as the target alone (${shortDigest(run.speculative.digest)}).`}
        {run.digestsMatch === false &&
          `${shortDigest(run.speculative.digest)} vs ${shortDigest(run.control.digest)}: run \`power audit\` to see where.`}
      </p>
    </>
  );
}

/** Between an A/B's speculative reply and its control. */
export function AbVerdictLine({ pair }: { pair: AbPair }) {
  return (
    <div className="ab-verdict" role="group" aria-label="A/B verdict">
      {pair.result ? <AbVerdictText run={pair.result} /> : <p className="muted">The autoregressive control is running…</p>}
    </div>
  );
}
