import { useShallow } from 'zustand/react/shallow';

import { decodeRate, duration, fixed, percent, shortDigest, tokensPerSecond } from '../logic/format.js';
import { reportFileName, reportJson } from '../logic/report.js';
import { usePower } from './store-context.js';

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function ReportView() {
  const { report, abRuns } = usePower(useShallow((s) => ({ report: s.report, abRuns: s.abRuns })));
  return (
    <section className="report" aria-labelledby="report-title">
      <h2 id="report-title">Session report</h2>
      <p className="hint">Every reply completed in this window, with its evidence.</p>
      <button type="button" disabled={report.length === 0} onClick={() => download(reportFileName(), reportJson(report, abRuns))}>
        Export JSON
      </button>
      <table>
        <thead>
          <tr>
            <th>Chat</th>
            <th>Model</th>
            <th>Method</th>
            <th>Tokens</th>
            <th>Acceptance</th>
            <th>Mean length</th>
            <th>TTFT</th>
            <th>Decode</th>
            <th>Request</th>
            <th>Digest</th>
          </tr>
        </thead>
        <tbody>
          {report.map((e) => (
            <tr key={e.messageId}>
              <td>{e.chatTitle}</td>
              <td>{e.model}</td>
              <td>
                {e.strategy}
                {e.k === null ? '' : ` K${e.k}${e.s === null ? '' : `/S${e.s}`}`}
                {e.draft ? ` (${e.draft})` : ''}
              </td>
              <td>{e.tokens}</td>
              <td>{percent(e.stats?.acceptanceRate)}</td>
              <td>{fixed(e.stats?.meanAcceptanceLength)}</td>
              <td>{duration(e.stats?.ttftMs)}</td>
              <td>{tokensPerSecond(decodeRate(e.stats))}</td>
              <td>{tokensPerSecond(e.stats?.requestTokensPerSecond)}</td>
              <td title={e.digest ?? ''}>{shortDigest(e.digest)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
