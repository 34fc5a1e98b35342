// The HTML rendering: one self-contained page (inline CSS and SVG, no script, no external
// resource; its Content-Security-Policy forbids loading any) that opens offline and prints to
// PDF. The report itself, less the per-round samples, rides along as inert JSON so the page
// can be read back by a program.
import { escapeXml, renderGroupedBarChart, reportCharts } from './charts.js';
import { fixed, ks, ratio } from './format.js';
import type { ProfileSummary, Report } from '../contract/report/schema.js';
import { allTables, digestCell, runStrategy, type Table } from './tables.js';
import { comparisonSentence, reportTitle } from './wording.js';

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #d8dde6; }
.lede { color: #4a5568; } .cards { display: flex; flex-wrap: wrap; gap: .8rem; margin: 1rem 0; }
.card { border: 1px solid #d8dde6; border-radius: 8px; padding: .6rem .9rem; min-width: 10rem; }
.card b { display: block; font-size: 1.3rem; } .card span { color: #4a5568; font-size: .85rem; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d8dde6; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f2f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv td:first-child { width: 9rem; color: #4a5568; } table.kv td { word-break: break-all; }
svg.chart { max-width: 100%; height: auto; display: block; margin: .5rem 0 1.2rem; }
svg .chart-title { font-size: 14px; font-weight: 600; fill: #1d2330; } svg .tick, svg .legend { font-size: 11px; fill: #4a5568; }
svg .axis-label { font-size: 12px; fill: #4a5568; } svg .grid { stroke: #e6e9ef; } svg .axis { stroke: #4a5568; }
svg .whisker { stroke: #1d2330; stroke-width: 1.5; } svg .reference { stroke: #e15759; stroke-dasharray: 5 4; stroke-width: 1.5; }
.wrap { overflow-x: auto; } #table-requests { font-size: 11px; } #table-requests td, #table-requests th { padding: 2px 4px; }
.note { color: #4a5568; font-size: .85rem; }
@media print { body { margin: 0; max-width: none; font-size: 11px; } #table-requests { font-size: 8px; } .wrap { overflow: visible; } h2 { break-after: avoid; } svg.chart, tr { break-inside: avoid; } }
`;

const NUMERIC = /^-?\d[\d.]*(%|x)?$/;

function htmlTable(t: Table): string {
  const keyValue = t.headers.every((h) => h === '');
  const head = keyValue ? '' : `<thead><tr>${t.headers.map((h) => `<th>${escapeXml(h)}</th>`).join('')}</tr></thead>`;
  const body = t.rows
    .map((row) => `<tr>${row.map((c) => `<td${!keyValue && NUMERIC.test(c) ? ' class="num"' : ''}>${escapeXml(c)}</td>`).join('')}</tr>`)
    .join('\n');
  return `<div class="wrap"><table id="table-${t.id}"${keyValue ? ' class="kv"' : ''}>${head}<tbody>\n${body}\n</tbody></table></div>`;
}

function outputs(report: Report, p: ProfileSummary): string {
  return report.kind === 'power-chat-report'
    ? `digest = control: ${digestCell(report, p)}`
    : `${p.digestMatches}/${p.requests} outputs = control`;
}

function headline(report: Report): string {
  const cards = report.profiles
    .filter((p) => p.speedup)
    .map(
      (p) =>
        `<div class="card"><span>${escapeXml(`${p.name} (${ks(p)}) vs control`)}</span><b>${escapeXml(ratio(p.speedup!.steadyDecode.medianOfTaskRatios))}</b>` +
        `<span>${escapeXml(`${fixed(p.steadyDecodeTokensPerSecond?.median, 1)} tok/s steady; ${outputs(report, p)}`)}</span></div>`,
    );
  return cards.length ? `<div class="cards">${cards.join('')}</div>` : '';
}

/** The inert data block: the report without per-round samples, safe inside <script>. */
function dataBlock(report: Report): string {
  const lean = { ...report, requests: report.requests.map(({ samples: _samples, ...r }) => r) };
  return JSON.stringify(lean).replace(/</g, '\\u003c');
}

function lede(report: Report): string {
  const e = report.environment;
  const target = e.models.find((m) => m.role === 'target');
  const device = e.backend?.device ?? 'a backend not recorded';
  if (report.kind === 'power-chat-report') {
    return `${target?.name ?? ''} on ${device}; chat "${report.chat!.title}": ${report.requests.length} replies over ${report.chat!.turns} turns; ${report.run.finishedAt}`;
  }
  return `${target?.name ?? ''} on ${device}; strategy ${runStrategy(report)}; ${report.run.tasks.name} (${report.run.tasks.count} tasks) x ${report.run.repeat}; ${report.run.finishedAt}`;
}

export function reportToHtml(report: Report): string {
  const tables = allTables(report).filter((t) => t.rows.length > 0);
  const byId = new Map(tables.map((t) => [t.id, t]));
  const section = (id: string) => {
    const t = byId.get(id);
    return t ? `<h2>${escapeXml(t.title)}</h2>\n${htmlTable(t)}` : '';
  };
  const charts = reportCharts(report)
    .filter((c) => c.groups.length > 0 && c.series.length > 0)
    .map(renderGroupedBarChart)
    .join('\n');
  const e = report.environment;
  const target = e.models.find((m) => m.role === 'target');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Power ${escapeXml(e.powerVersion)}">
<title>${escapeXml(reportTitle(report))}: ${escapeXml(target?.name ?? 'model')}, ${escapeXml(report.run.tasks.name)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeXml(reportTitle(report))}</h1>
<p class="lede">${escapeXml(lede(report))}</p>
${headline(report)}
<h2>Charts</h2>
${charts}
${section('profiles')}
${section('acceptance')}
${section('members')}
${section('sources')}
${section('thinking')}
${section('categories')}
${section('run')}
${section('environment')}
${section('requests')}
<p class="note">Steady decode: tokens emitted after the first ${report.run.warmupRounds} rounds of a request over the time they took. ${escapeXml(comparisonSentence(report))} Report schema version ${report.schemaVersion}; ${report.kind === 'power-chat-report' ? 'the JSON export' : 'report.json'} holds every figure and the per-round samples.</p>
<script type="application/json" id="power-report">${dataBlock(report)}</script>
</body>
</html>
`;
}
