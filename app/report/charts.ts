// Inline SVG charts for the HTML report. Written out as markup (no DOM, no chart library):
// app/contract/ is pure and the report must open offline as one self-contained file. Every bar carries
// data-group / data-series / data-value so a reader (or a test) can check it against the JSON.
import type { Report } from '../contract/report/schema.js';

export interface Bar {
  series: string;
  value: number | null;
  /** whisker (p10..p90), optional */
  low?: number | null;
  high?: number | null;
}

export interface GroupedBarChart {
  id: string;
  title: string;
  yLabel: string;
  groups: { label: string; bars: Bar[] }[];
  series: string[];
  /** fixed top of the y axis (e.g. 1 for fractions); otherwise from the data */
  yMax?: number;
  /** a dashed horizontal line (e.g. speedup 1.0) */
  reference?: number;
  format: (v: number) => string;
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

const n = (v: number) => Number(v.toFixed(2));

export function renderGroupedBarChart(c: GroupedBarChart): string {
  const width = 760;
  const height = 300;
  // slanted x labels when they would not fit side by side (~6.5 px per character at 11 px)
  const longest = c.groups.reduce((w, g) => Math.max(w, g.label.length), 0);
  const rotate = longest * 6.5 > (width - 80) / Math.max(1, c.groups.length);
  const margin = { top: 36, right: 16, bottom: rotate ? 110 : 56, left: 64 };
  const fullHeight = rotate ? height + 54 : height;
  const plotW = width - margin.left - margin.right;
  const plotH = fullHeight - margin.top - margin.bottom;
  const values = c.groups.flatMap((g) => g.bars.flatMap((b) => [b.value, b.high ?? null])).filter((v): v is number => v !== null);
  const yMax = c.yMax ?? niceMax(Math.max(c.reference ?? 0, ...values, 0) * 1.05);
  const y = (v: number) => margin.top + plotH - (Math.min(v, yMax) / yMax) * plotH;
  const groupW = plotW / Math.max(1, c.groups.length);
  const barW = Math.max(2, Math.min(40, (groupW * 0.8) / Math.max(1, c.series.length)));
  const color = (s: string) => PALETTE[Math.max(0, c.series.indexOf(s)) % PALETTE.length]!;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-${escapeXml(c.id)}" viewBox="0 0 ${width} ${fullHeight}" width="${width}" height="${fullHeight}" role="img" aria-label="${escapeXml(c.title)}">`,
    `<text x="${width / 2}" y="20" text-anchor="middle" class="chart-title">${escapeXml(c.title)}</text>`,
  );
  // grid and y axis
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    out.push(
      `<line x1="${margin.left}" x2="${width - margin.right}" y1="${n(y(v))}" y2="${n(y(v))}" class="grid"/>`,
      `<text x="${margin.left - 6}" y="${n(y(v) + 4)}" text-anchor="end" class="tick">${escapeXml(c.format(v))}</text>`,
    );
  }
  out.push(
    `<text transform="translate(14 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(c.yLabel)}</text>`,
  );
  c.groups.forEach((g, gi) => {
    const x0 = margin.left + gi * groupW + (groupW - barW * g.bars.length) / 2;
    g.bars.forEach((b, bi) => {
      if (b.value === null) return;
      const x = x0 + bi * barW;
      const top = y(b.value);
      out.push(
        `<rect class="bar" x="${n(x)}" y="${n(top)}" width="${n(barW - 2)}" height="${n(margin.top + plotH - top)}" fill="${color(b.series)}"` +
          ` data-group="${escapeXml(g.label)}" data-series="${escapeXml(b.series)}" data-value="${b.value}">` +
          `<title>${escapeXml(`${g.label} · ${b.series}: ${c.format(b.value)}`)}</title></rect>`,
      );
      if (b.low !== undefined && b.high !== undefined && b.low !== null && b.high !== null) {
        const cx = n(x + (barW - 2) / 2);
        out.push(`<line class="whisker" x1="${cx}" x2="${cx}" y1="${n(y(b.low))}" y2="${n(y(b.high))}"/>`);
      }
    });
    const lx = n(margin.left + gi * groupW + groupW / 2);
    const ly = margin.top + plotH + 16;
    out.push(
      rotate
        ? `<text x="${lx}" y="${ly}" text-anchor="end" transform="rotate(-35 ${lx} ${ly})" class="tick">${escapeXml(g.label)}</text>`
        : `<text x="${lx}" y="${ly}" text-anchor="middle" class="tick">${escapeXml(g.label)}</text>`,
    );
  });
  if (c.reference !== undefined) {
    out.push(
      `<line class="reference" x1="${margin.left}" x2="${width - margin.right}" y1="${n(y(c.reference))}" y2="${n(y(c.reference))}"/>`,
    );
  }
  out.push(`<line x1="${margin.left}" x2="${width - margin.right}" y1="${margin.top + plotH}" y2="${margin.top + plotH}" class="axis"/>`);
  // legend
  let lx = margin.left;
  for (const s of c.series) {
    out.push(
      `<rect x="${lx}" y="${fullHeight - 18}" width="10" height="10" fill="${color(s)}"/>`,
      `<text x="${lx + 14}" y="${fullHeight - 9}" class="legend">${escapeXml(s)}</text>`,
    );
    lx += 24 + s.length * 7;
  }
  out.push('</svg>');
  return out.join('\n');
}

/** The three charts of the report: tok/s per profile, acceptance per position, speedup per category. */
export function reportCharts(report: Report): GroupedBarChart[] {
  const spec = report.profiles.filter((p) => p.k !== null);
  const width = spec.reduce((w, p) => Math.max(w, p.acceptancePerPosition.length), 0);
  return [
    {
      id: 'tokens-per-second',
      // rates, not ratios: the request-wide bar includes the prefill, and the title says so
      title: 'Speed per profile: steady decode, and request-wide with its prefill (median; whisker p10-p90)',
      yLabel: 'tokens per second',
      series: ['steady decode', 'request-wide'],
      groups: report.profiles.map((p) => ({
        label: p.name,
        bars: [
          {
            series: 'steady decode',
            value: p.steadyDecodeTokensPerSecond?.median ?? null,
            low: p.steadyDecodeTokensPerSecond?.p10 ?? null,
            high: p.steadyDecodeTokensPerSecond?.p90 ?? null,
          },
          {
            series: 'request-wide',
            value: p.requestTokensPerSecond?.median ?? null,
            low: p.requestTokensPerSecond?.p10 ?? null,
            high: p.requestTokensPerSecond?.p90 ?? null,
          },
        ],
      })),
      format: (v) => v.toFixed(v >= 100 ? 0 : 1),
    },
    {
      id: 'acceptance-per-position',
      title: 'Acceptance per proposal position',
      yLabel: 'accepted fraction',
      series: spec.map((p) => p.name),
      yMax: 1,
      groups: Array.from({ length: width }, (_, i) => ({
        label: String(i + 1),
        bars: spec.map((p) => ({ series: p.name, value: p.acceptancePerPosition[i] ?? null })),
      })),
      format: (v) => `${Math.round(v * 100)}%`,
    },
    {
      id: 'speedup-per-category',
      title: 'Steady-decode speedup vs the control per category (median of task ratios)',
      yLabel: 'speedup (x)',
      series: spec.map((p) => p.name),
      reference: 1,
      groups: report.run.tasks.categories.map((category) => ({
        label: category,
        bars: spec.map((p) => ({ series: p.name, value: p.categories.find((c) => c.category === category)?.speedup ?? null })),
      })),
      format: (v) => `${v.toFixed(2)}x`,
    },
  ];
}
