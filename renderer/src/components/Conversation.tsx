// The conversation: a `log` named Messages, one article per message. An A/B turn shows the
// speculative reply with the control's collapsed under it and the verdict between them.
import { useEffect, useMemo, useRef } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { abPairs, type AbPair } from '../logic/ab.js';
import { chainLabel, draftingParts, roundMembers } from '../logic/chain.js';
import { textBesideCalls } from '../logic/mcp.js';
import { emptyReply, pickReply, prettyJsonReply, shownText } from '../logic/reply.js';
import type { AssistantMessage, UserMessage } from '../api-types.js';
import { AbVerdictLine } from './AbVerdict.js';
import { CopyButton } from './CopyButton.js';
import { Markdown } from './Markdown.js';
import { ReplyStats } from './ReplyStats.js';
import { ThinkingBlock } from './ThinkingBlock.js';
import { ToolCalls } from './ToolCalls.js';
import { TokenOrigins } from './TokenOrigins.js';
import { UserMessageView } from './UserMessageView.js';
import { BranchSwitcher, ForkButton } from './Versions.js';
import { usePower } from './store-context.js';

/** What ran it: "cpu (AMD EPYC) · ctx 2048 · 4 threads" */
function describeRuntime(m: AssistantMessage | null): string | undefined {
  const r = m?.environment;
  if (!r) return undefined;
  return `${r.backend.device} · ctx ${r.contextSize} · ${r.threads} thread${r.threads === 1 ? '' : 's'} · batch ${r.batchSize}`;
}

function describeRun(m: AssistantMessage): string {
  const ks = m.k === null ? '' : [` K${m.k}${m.s === null ? '' : `/S${m.s}`}`, ...draftingParts(m)].join(' · ');
  return `${m.model.name} · ${chainLabel(m.strategy, m.fallbacks)}${m.draft ? ` (${m.draft.name})` : ''}${ks}${m.profile ? ` · ${m.profile.name}` : ''}`;
}

/** A stored reply, or (message null) one whose events arrived before the chat was read back. */
function AssistantReply({
  chatId,
  messageId,
  message,
  label = 'Assistant',
  versions = true,
}: {
  chatId: string;
  messageId: string;
  message: AssistantMessage | null;
  label?: string;
  /** its ‹ n/m › (false: shown elsewhere, as an A/B turn shows its control's) */
  versions?: boolean;
}) {
  const live = usePower((s) => s.live[messageId]);
  const showOrigins = usePower((s) => s.showOrigins);
  const selected = usePower((s) => s.selectedReplyId === messageId);
  const last = usePower((s) => s.chat?.messages.at(-1)?.id === messageId);
  const reply = message ? pickReply(chatId, message, live) : (live ?? emptyReply(chatId, messageId));
  const text = textBesideCalls(message) ?? shownText(reply, message);
  const pretty = reply.status === 'streaming' ? null : prettyJsonReply(message?.sampling, text);
  const members = useMemo(
    () => (message ? roundMembers(reply.rounds, message.strategy, message.fallbacks) : null),
    [reply.rounds, message],
  );
  return (
    <article
      className={`message assistant status-${reply.status}${selected ? ' selected' : ''}`}
      aria-label={label}
      aria-busy={reply.status === 'streaming'}
      data-message-id={messageId}
    >
      <header className="meta">
        <span className="run" title={describeRuntime(message)}>
          {message ? describeRun(message) : 'assistant'}
          {reply.status === 'streaming' && <span className="streaming"> · writing…</span>}
          {reply.status === 'stopped' && <span> · stopped</span>}
        </span>
        <span className="actions">
          {versions && <BranchSwitcher messageId={messageId} />}
          {reply.status !== 'streaming' && <CopyButton text={text} />}
          <ForkButton messageId={messageId} streaming={reply.status === 'streaming'} />
        </span>
      </header>
      {reply.thinking && !showOrigins && <ThinkingBlock thinking={reply.thinking} status={reply.status} />}
      {showOrigins ? (
        <TokenOrigins tokens={reply.tokens} members={members} />
      ) : pretty !== null ? (
        <pre className="json-reply" aria-label="JSON reply">
          <code>{pretty}</code>
        </pre>
      ) : (
        <Markdown source={text} />
      )}
      {message?.toolCalls && <ToolCalls messageId={messageId} calls={message.toolCalls} answerable={last} />}
      {reply.error && reply.error.code !== 'cancelled' && <p className="reply-error">The reply ended early: {reply.error.message}</p>}
      <ReplyStats reply={reply} message={message} />
    </article>
  );
}

/** The speculative reply, the verdict, and the control's reply collapsed under them. */
function AbTurn({ chatId, pair }: { chatId: string; pair: AbPair }) {
  return (
    <div className="ab-turn">
      <BranchSwitcher messageId={pair.control.id} />
      <AssistantReply chatId={chatId} messageId={pair.speculative.id} message={pair.speculative} />
      <AbVerdictLine pair={pair} />
      <details className="control-reply">
        <summary>Autoregressive control{pair.control.status === 'streaming' ? ' (running…)' : ''}</summary>
        <AssistantReply chatId={chatId} messageId={pair.control.id} message={pair.control} label="Control" versions={false} />
      </details>
    </div>
  );
}

export function Conversation() {
  const { chat, chatId, streaming, liveCount } = usePower(
    useShallow((s) => ({
      chat: s.chat,
      chatId: s.chatId,
      streaming: s.streaming,
      liveCount: s.streaming ? (s.live[s.streaming.messageId]?.tokens.length ?? 0) : 0,
    })),
  );
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [chat, liveCount]);
  const pairs = abPairs(chat);
  const busy = streaming !== null && streaming.chatId === chatId;

  return (
    <section className="messages" role="log" aria-label="Messages" aria-busy={busy} tabIndex={0}>
      {!chat && <p className="muted empty">Pick a model, Load it, and send a message.</p>}
      {chat && chat.messages.length === 0 && <p className="muted empty">An empty chat: send a message to start it.</p>}
      {chat?.systemPrompt && <p className="system">System: {chat.systemPrompt}</p>}
      {chat?.messages.map((m) => {
        if (m.role === 'user') return <UserMessageView key={m.id} message={m as UserMessage} />;
        const pair = pairs.get(m.id);
        return pair ? (
          <AbTurn key={m.id} chatId={chat.id} pair={pair} />
        ) : (
          <AssistantReply key={m.id} chatId={chat.id} messageId={m.id} message={m} />
        );
      })}
      {chat && streaming && streaming.chatId === chat.id && !chat.messages.some((m) => m.id === streaming.messageId) && (
        <AssistantReply chatId={chat.id} messageId={streaming.messageId} message={null} />
      )}
      <div ref={end} />
    </section>
  );
}
