import { useShallow } from 'zustand/react/shallow';

import { abPairs } from '../logic/ab.js';
import { chainFigures, chainLabel, draftingParts } from '../logic/chain.js';
import { sourceFigures } from '../logic/suffix-store.js';
import { decodeRate, duration, engineEvidence, fixed, percent, promptFigure, tokensPerSecond } from '../logic/format.js';
import {
  decodeSeries,
  emptyReply,
  pickReply,
  positionBars,
  rollingAcceptance,
  rollingForModel,
  stopReasonLabel,
  type ReplyView,
} from '../logic/reply.js';
import { everyMessage } from '../../../app/contract/branches.js';
import { replyParts, type PartFigures } from '../../../app/contract/report/parts.js';
import { noProposalsNote } from '../../../app/contract/strategies.js';
import type { AssistantMessage } from '../api-types.js';
import type { Store } from '../store/types.js';
import { PositionBars, Sparkline } from './Charts.js';
import { OriginLegend } from './TokenOrigins.js';
import { usePower } from './store-context.js';

type Followed = { reply: ReplyView; message: AssistantMessage | null };

/** The reply the panel shows: the one selected (Inspect), else the one streaming here, else the last turn's (an A/B's speculative one). */
function followed(s: Pick<Store, 'chat' | 'chatId' | 'streaming' | 'live' | 'selectedReplyId'>): Followed | null {
  const chat = s.chat;
  if (!chat || !s.chatId) return null;
  const messages = chat.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
  const all = everyMessage(chat).filter((m): m is AssistantMessage => m.role === 'assistant');
  const view = (m: AssistantMessage): Followed => ({ reply: pickReply(s.chatId!, m, s.live[m.id]), message: m });
  const selected = s.selectedReplyId ? all.find((m) => m.id === s.selectedReplyId) : undefined;
  if (selected) return view(selected);
  if (s.streaming && s.streaming.chatId === s.chatId) {
    const message = messages.find((m) => m.id === s.streaming!.messageId);
    if (message) return view(message);
    const live = s.live[s.streaming.messageId];
    return { reply: live ?? emptyReply(s.streaming.chatId, s.streaming.messageId), message: null };
  }
  const last = messages[messages.length - 1];
  if (!last) return null;
  return view(abPairs(chat).get(last.id)?.speculative ?? last);
}

function Figure({ label, value, title }: { label: string; value: string; title?: string }) {
  return (
    <>
      <dt title={title}>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}

/** A thinking reply's part: "72.4% · 300 / 217 · 842 tokens · 31.0 tok/s" (the control: tokens and tok/s). */
function partFigure(part: PartFigures, control: boolean): string {
  const rate = control ? [] : [percent(part.acceptanceRate), `${part.proposed} / ${part.accepted}`];
  return [...rate, `${part.tokens} tokens`, tokensPerSecond(part.tokensPerSecond)].join(' · ');
}

function Headline({ reply, message }: Followed) {
  const noProposals = message?.strategy === 'none';
  // a finished reply whose proposer drafted nothing says so instead of an empty acceptance
  const silent =
    message && reply.status === 'done' && reply.stats ? noProposalsNote(message.strategy, reply.stats.proposed, message.fallbacks) : null;
  return (
    <p className="headline" data-status={reply.status}>
      {noProposals ? (
        <span>No proposals: the autoregressive control</span>
      ) : silent ? (
        <span className="silent-proposer">{silent}</span>
      ) : (
        <>
          <span className="big">{percent(reply.stats?.acceptanceRate)}</span> accepted this reply
        </>
      )}
      {reply.status === 'streaming' && <span className="live-dot" aria-hidden="true" />}
    </p>
  );
}

export function AcceptancePanel() {
  const { chat, chatId, streaming, live, selectedReplyId, showOrigins, activeK } = usePower(
    useShallow((s) => ({
      chat: s.chat,
      chatId: s.chatId,
      streaming: s.streaming,
      live: s.live,
      selectedReplyId: s.selectedReplyId,
      showOrigins: s.showOrigins,
      activeK: s.profiles.find((p) => p.id === s.activeProfileId)?.k ?? null,
    })),
  );
  const setShowOrigins = usePower((s) => s.setShowOrigins);
  const current = followed({ chat, chatId, streaming, live, selectedReplyId });
  const reply = current?.reply ?? null;
  const message = current?.message ?? null;
  const stats = reply?.stats ?? null;
  const k = message?.k ?? activeK;
  const replies = (chat?.messages ?? []).filter((m): m is AssistantMessage => m.role === 'assistant');
  const modelId = message?.model.id ?? null;
  const rolling = rollingAcceptance([
    ...rollingForModel(replies, modelId, reply?.messageId ?? null),
    message?.strategy === 'none' ? null : stats,
  ]);
  const engine = engineEvidence(message?.environment?.backend);
  // a chain: which member drafted how many rounds, and their acceptance
  const chain = message && reply ? chainFigures(reply.rounds, message.strategy, message.fallbacks) : null;
  const drafting = message ? draftingParts(message) : [];
  // `suffix`: its rounds by where the draft came from, expected against accepted
  const sources = reply ? sourceFigures(reply.rounds) : [];
  // a thinking reply: the thinking and the answer draft differently, each has its own figures
  const split = reply ? replyParts(reply) : null;
  const control = message?.strategy === 'none';

  return (
    <section className="panel acceptance" aria-labelledby="acceptance-title">
      <h2 id="acceptance-title">Acceptance</h2>
      {!current || !reply ? (
        <p className="muted">Figures appear here while a reply streams.</p>
      ) : (
        <>
          <Headline reply={reply} message={message} />
          <p className="hint following">
            {selectedReplyId ? 'The reply you inspected' : reply.status === 'streaming' ? 'The reply being written' : 'The last reply'}
            {message ? ` · ${message.model.name} · ${chainLabel(message.strategy, message.fallbacks)}` : ''}
          </p>
          <dl className="figures">
            <Figure label={`Rolling (this chat, ${message?.model.name ?? 'this model'})`} value={percent(rolling)} />
            <Figure label="Mean acceptance length" value={fixed(stats?.meanAcceptanceLength)} />
            <Figure label="Proposed / accepted" value={stats ? `${stats.proposed} / ${stats.accepted}` : '—'} />
            {split && (
              <>
                <Figure
                  label={split.forced ? 'Thinking (budget reached)' : 'Thinking'}
                  title={control ? 'tokens · tok/s' : 'acceptance · proposed / accepted · tokens · tok/s'}
                  value={partFigure(split.thinking, control)}
                />
                <Figure
                  label="Answer"
                  title={control ? 'tokens · tok/s' : 'acceptance · proposed / accepted · tokens · tok/s'}
                  value={partFigure(split.answer, control)}
                />
              </>
            )}
            <Figure label="Replays" value={String(stats?.replays ?? 0)} />
            <Figure label="Clamp" value={stats?.clampedTo == null ? 'none' : `K clamped to ${stats.clampedTo}`} />
            {drafting.length > 0 && <Figure label="Drafting" value={drafting.join(' · ')} />}
            {chain?.members.map((m) => (
              <Figure
                key={m.member}
                label={`${m.strategy} drafted`}
                title="rounds · proposed / accepted · acceptance"
                value={`${m.rounds} round${m.rounds === 1 ? '' : 's'} · ${m.proposed} / ${m.accepted} · ${percent(m.acceptanceRate)}`}
              />
            ))}
            {chain && chain.undrafted > 0 && <Figure label="No member drafted" value={`${chain.undrafted} rounds`} />}
            {sources.map((f) => (
              <Figure
                key={f.source}
                label={f.label}
                title="rounds · drafted / accepted · accepted tokens a round: the drafter's expectation, the target's verdict"
                value={f.value}
              />
            ))}
            <Figure label="Prompt" value={promptFigure(stats)} />
            <Figure label="TTFT" value={duration(stats?.ttftMs)} />
            <Figure label="Prefill" value={tokensPerSecond(stats?.prefillTokensPerSecond)} />
            <Figure label="Decode (steady)" value={tokensPerSecond(decodeRate(stats))} />
            <Figure label="Tokens" value={String(reply.tokens.length)} />
            <Figure label="Stop reason" value={stopReasonLabel(reply.stopReason ?? message?.stopReason, reply.status)} />
          </dl>
          <p className="engine-evidence" data-exact={engine.exact === null ? undefined : String(engine.exact)}>
            Engine: {engine.text}
          </p>
          <PositionBars values={positionBars(stats?.acceptancePerPosition ?? [], message?.strategy === 'none' ? 0 : k)} />
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
