import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { chainLabel } from '../logic/chain.js';
import { decodeRate, duration, fixed, percent, shortDigest, tokensPerSecond } from '../logic/format.js';
import { base64Bytes, EXPORT_FORMATS, replyRows, reportable, type ExportFormat } from '../logic/report.js';
import { usePower } from './store-context.js';

function download(name: string, mimeType: string, bytes: Uint8Array<ArrayBuffer>): void {
  const url = URL.createObjectURL(new Blob([bytes], { type: mimeType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function message(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}

export function ReportView() {
  const { api, chat, streaming } = usePower(useShallow((s) => ({ api: s.api, chat: s.chat, streaming: s.streaming !== null })));
  const [busy, setBusy] = useState<ExportFormat | null>(null);
  // the error line belongs to the chat whose export failed
  const [failure, setFailure] = useState<{ chatId: string; text: string } | null>(null);
  const rows = replyRows(chat);
  const count = reportable(rows);

  async function exportAs(format: ExportFormat, label: string): Promise<void> {
    if (!api || !chat) return;
    setBusy(format);
    setFailure(null);
    try {
      const file = await api.reports.exportChat({ chatId: chat.id, format });
      download(file.fileName, file.mimeType, base64Bytes(file.base64));
    } catch (error) {
      setFailure({ chatId: chat.id, text: `Export ${label} failed: ${message(error)}` });
    } finally {
      setBusy(null);
    }
  }

  return (
    <section className="report" aria-labelledby="report-title">
      <h2 id="report-title">Report{chat ? `: ${chat.title}` : ''}</h2>
      <p className="hint">
        This chat&apos;s performance report in the format of <code>power bench</code>: one request per reply (replies replaced by Regenerate
        or the A/B included), the figures per profile, the environment and the model files. A reply is compared with an autoregressive reply
        to the same turn and sampling: run the A/B to get one.
      </p>
      <div className="exports" role="group" aria-label="Export the report">
        {EXPORT_FORMATS.map(({ format, label }) => (
          <button key={format} type="button" disabled={!chat || count === 0 || busy !== null} onClick={() => void exportAs(format, label)}>
            Export {label}
          </button>
        ))}
      </div>
      {busy && (
        <p className="muted" role="status">
          Exporting {EXPORT_FORMATS.find((f) => f.format === busy)!.label}…
        </p>
      )}
      {failure && failure.chatId === chat?.id && (
        <p className="export-error" role="alert">
          {failure.text}
        </p>
      )}
      {!chat && <p className="muted">Open a chat to see its report.</p>}
      {chat && count === 0 && (
        <p className="muted">{streaming ? 'The reply is still streaming.' : 'No completed reply yet: send a message first.'}</p>
      )}
      <div className="table-wrap" role="region" aria-label="Replies of this chat" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th>Turn</th>
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
            {rows.map(({ message: m, turn, superseded: replaced }) => (
              <tr key={m.id} data-message-id={m.id} className={replaced ? 'replaced' : undefined}>
                <td>
                  {turn}
                  {replaced ? ' (replaced)' : ''}
                </td>
                <td>{m.model.name}</td>
                <td>
                  {chainLabel(m.strategy, m.fallbacks)}
                  {m.k === null ? '' : ` K${m.k}${m.s === null ? '' : `/S${m.s}`}`}
                  {m.draft ? ` (${m.draft.name})` : ''}
                  {m.status === 'done' ? '' : ` · ${m.status}`}
                </td>
                <td>{m.tokens.length}</td>
                <td>{percent(m.stats?.acceptanceRate)}</td>
                <td>{fixed(m.stats?.meanAcceptanceLength)}</td>
                <td>{duration(m.stats?.ttftMs)}</td>
                <td>{tokensPerSecond(decodeRate(m.stats))}</td>
                <td>{tokensPerSecond(m.stats?.requestTokensPerSecond)}</td>
                <td title={m.digest ?? ''}>{shortDigest(m.digest)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
