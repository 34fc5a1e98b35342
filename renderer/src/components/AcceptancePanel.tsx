import { useShallow } from 'zustand/react/shallow';

import { decodeRate, duration, engineEvidence, fixed, percent, tokensPerSecond } from '../logic/format.js';
import { decodeSeries, emptyReply, pickReply, positionBars, rollingAcceptance, type ReplyView } from '../logic/reply.js';
import type { AssistantMessage } from '../api-types.js';
import type { Store } from '../store/types.js';
import { PositionBars, Sparkline } from './Charts.js';
import { OriginLegend } from './TokenOrigins.js';
import { usePower } from './store-context.js';

/** The reply the panel follows: the one streaming, else the chat's last. */
function followed(s: Pick<Store, 'chat' | 'chatId' | 'streaming' | 'live'>): { reply: ReplyView; message: AssistantMessage | null } | null {
  const messages = (s.chat?.messages ?? []).filter((m): m is AssistantMessage => m.role === 'assistant');
  if (s.streaming && s.streaming.chatId === s.chatId) {
    const message = messages.find((m) => m.id === s.streaming!.messageId) ?? null;
    const live = s.live[s.streaming.messageId];
    return { reply: message ? pickReply(s.chatId!, message, live) : (live ?? emptyReply(s.streaming.chatId, s.streaming.messageId)), message };
  }
  const last = messages[messages.length - 1];
  return last ? { reply: pickReply(s.chatId!, last, s.live[last.id]), message: last } : null;
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}

export function AcceptancePanel() {
  const { chat, chatId, streaming, live, report, showOrigins, activeK } = usePower(
    useShallow((s) => ({
      chat: s.chat,
      chatId: s.chatId,
      streaming: s.streaming,
      live: s.live,
      report: s.report,
      showOrigins: s.showOrigins,
      activeK: s.profiles.find((p) => p.id === s.activeProfileId)?.k ?? null,
    })),
  );
  const setShowOrigins = usePower((s) => s.setShowOrigins);
  const current = followed({ chat, chatId, streaming, live });
  const reply = current?.reply ?? null;
  const stats = reply?.stats ?? null;
  const k = current?.message?.k ?? activeK;
  const rolling = rollingAcceptance([...report.filter((e) => e.messageId !== reply?.messageId).map((e) => e.stats), stats]);
  const noProposals = current?.message?.strategy === 'none';
  const engine = engineEvidence(current?.message?.runtime?.backend);

  return (
    <section className="panel acceptance" aria-labelledby="acceptance-title">
      <h2 id="acceptance-title">Acceptance</h2>
      {!reply ? (
        <p className="muted">Figures appear here while a reply streams.</p>
      ) : (
        <>
          <p className="headline" data-status={reply.status}>
            <span className="big">{noProposals ? 'autoregressive' : percent(stats?.acceptanceRate)}</span> accepted this reply
            {reply.status === 'streaming' && <span className="live-dot" aria-hidden="true" />}
          </p>
          <dl className="figures">
            <Figure label="Rolling (session)" value={percent(rolling)} />
            <Figure label="Mean acceptance length" value={fixed(stats?.meanAcceptanceLength)} />
            <Figure label="Proposed / accepted" value={stats ? `${stats.proposed} / ${stats.accepted}` : '—'} />
            <Figure label="Replays" value={String(stats?.replays ?? 0)} />
            <Figure label="Clamp" value={stats?.clampedTo == null ? 'none' : `K clamped to ${stats.clampedTo}`} />
            <Figure label="TTFT" value={duration(stats?.ttftMs)} />
            <Figure label="Prefill" value={tokensPerSecond(stats?.prefillTokensPerSecond)} />
            <Figure label="Decode (steady)" value={tokensPerSecond(decodeRate(stats))} />
            <Figure label="Tokens" value={String(reply.tokens.length)} />
          </dl>
          <p className="engine-evidence" data-exact={engine.exact === null ? undefined : String(engine.exact)}>
            Engine: {engine.text}
          </p>
          <PositionBars values={positionBars(stats?.acceptancePerPosition ?? [], k)} />
          <Sparkline values={decodeSeries(reply.rounds)} label="decode tok/s per round" />
        </>
      )}
      <label className="toggle">
        <input type="checkbox" checked={showOrigins} onChange={(e) => setShowOrigins(e.target.checked)} /> Show token origins
      </label>
      {showOrigins && <OriginLegend />}
    </section>
  );
}
