// Two tiny SVG charts (K bars, one sparkline): a chart library would outweigh them.
import { percent } from '../logic/format.js';

export function PositionBars({ values }: { values: ReadonlyArray<number | null> }) {
  if (values.length === 0) return <p className="muted">No proposals yet.</p>;
  const w = 14;
  const gap = 4;
  const h = 48;
  return (
    <figure className="chart">
      <svg width={values.length * (w + gap)} height={h + 14} role="img" aria-label={`Acceptance per position: ${values.map((v, i) => `${i + 1}: ${percent(v, 0)}`).join(', ')}`}>
        {values.map((v, i) => {
          const bh = v == null ? 0 : Math.max(1, v * h);
          return (
            <g key={i}>
              <rect x={i * (w + gap)} y={0} width={w} height={h} className="bar-bg" />
              <rect x={i * (w + gap)} y={h - bh} width={w} height={bh} className="bar" />
              <text x={i * (w + gap) + w / 2} y={h + 12} textAnchor="middle" className="bar-label">
                {i + 1}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>acceptance per position (1…K)</figcaption>
    </figure>
  );
}

export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  if (values.length < 2) return <p className="muted">{label}: waiting for rounds…</p>;
  const width = 180;
  const height = 40;
  const max = Math.max(...values);
  const min = Math.min(...values, 0);
  const span = max - min || 1;
  const points = values.map((v, i) => `${((i / (values.length - 1)) * width).toFixed(1)},${(height - ((v - min) / span) * height).toFixed(1)}`).join(' ');
  return (
    <figure className="chart">
      <svg width={width} height={height} role="img" aria-label={`${label}, ${values.length} rounds, peak ${max.toFixed(0)}`}>
        <polyline points={points} className="spark" fill="none" />
      </svg>
      <figcaption>{label}</figcaption>
    </figure>
  );
}
