// Two small charts (acceptance per position, decode tok/s per round): a chart library would
// outweigh them. Every bar carries its percentage; the sparkline its scale.
import { percent } from '../logic/format.js';
import { sparkScale } from '../logic/reply.js';

export function PositionBars({ values }: { values: ReadonlyArray<number | null> }) {
  if (values.length === 0) return <p className="muted">No proposals yet.</p>;
  return (
    <figure className="chart positions">
      <figcaption>Acceptance per position (1…K)</figcaption>
      <ol className="bars" aria-label="Acceptance per position">
        {values.map((v, i) => (
          <li key={i} className="bar-row">
            <span className="bar-pos" aria-hidden="true">
              {i + 1}
            </span>
            <span className="bar-track" aria-hidden="true">
              <span className="bar-fill" style={{ width: `${v == null ? 0 : Math.max(0, Math.min(1, v)) * 100}%` }} />
            </span>
            <span className="bar-value">
              <span className="sr-only">Position {i + 1}: </span>
              {v == null ? (
                <>
                  <span aria-hidden="true">—</span>
                  <span className="sr-only">not reached</span>
                </>
              ) : (
                percent(v, 0)
              )}
            </span>
          </li>
        ))}
      </ol>
    </figure>
  );
}

const fmt = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const scale = sparkScale(values);
  if (values.length < 2 || !scale) return <p className="muted">{label}: waiting for rounds…</p>;
  const width = 200;
  const height = 48;
  const span = scale.max - scale.min || 1;
  const points = values
    .map((v, i) => `${((i / (values.length - 1)) * width).toFixed(1)},${(height - ((v - scale.min) / span) * height).toFixed(1)}`)
    .join(' ');
  return (
    <figure className="chart spark-chart">
      <figcaption>{label}</figcaption>
      <div className="spark-body">
        <div className="spark-axis" aria-hidden="true">
          <span>{fmt(scale.max)}</span>
          <span>{fmt(scale.min)}</span>
        </div>
        <svg
          viewBox={`0 0 ${width} ${height}`}
          width={width}
          height={height}
          role="img"
          aria-label={`${label}: ${values.length} rounds, from ${fmt(scale.min)} to ${fmt(scale.max)} tok/s`}
        >
          <line x1="0" y1="0.5" x2={width} y2="0.5" className="grid" />
          <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} className="grid" />
          <polyline points={points} className="spark" fill="none" />
        </svg>
      </div>
      <p className="spark-x hint">tok/s per round, rounds 2 … {values.length + 1}</p>
    </figure>
  );
}
