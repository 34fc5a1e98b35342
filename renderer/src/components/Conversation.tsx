import { useEffect, useRef } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { emptyReply, pickReply, replyText } from '../logic/reply.js';
import type { AssistantMessage } from '../api-types.js';
import { Markdown } from './Markdown.js';
import { TokenOrigins } from './TokenOrigins.js';
import { usePower } from './store-context.js';

function describeRun(m: AssistantMessage): string {
  const ks = m.k === null ? '' : ` K${m.k}${m.s === null ? '' : `/S${m.s}`}`;
  return `${m.model.name} · ${m.strategy}${m.draft ? ` (${m.draft.name})` : ''}${ks}${m.profile ? ` · ${m.profile.name}` : ''}`;
}

/** A stored reply, or (message null) one whose events arrived before the chat was read back. */
function AssistantReply({ chatId, messageId, message }: { chatId: string; messageId: string; message: AssistantMessage | null }) {
  const live = usePower((s) => s.live[messageId]);
  const showOrigins = usePower((s) => s.showOrigins);
  const reply = message ? pickReply(chatId, message, live) : (live ?? emptyReply(chatId, messageId));
  const text = reply.tokens.length > 0 || reply.status === 'streaming' || !message ? replyText(reply) : message.content;
  return (
    <article className={`message assistant status-${reply.status}`} aria-label="Assistant" aria-busy={reply.status === 'streaming'} data-message-id={messageId}>
      <header className="meta">
        {message ? describeRun(message) : 'assistant'}
        {reply.status === 'streaming' && <span className="streaming"> · writing…</span>}
        {reply.status === 'stopped' && <span> · stopped</span>}
      </header>
      {showOrigins ? <TokenOrigins tokens={reply.tokens} /> : <Markdown source={text} />}
      {reply.error && reply.error.code !== 'cancelled' && (
        <p className="reply-error">
          The reply ended early: {reply.error.message}
        </p>
      )}
    </article>
  );
}

export function Conversation() {
  const { chat, chatId, streaming, liveCount } = usePower(
    useShallow((s) => ({ chat: s.chat, chatId: s.chatId, streaming: s.streaming, liveCount: s.streaming ? (s.live[s.streaming.messageId]?.tokens.length ?? 0) : 0 })),
  );
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [chat, liveCount]);

  return (
    <section className="messages" role="log" aria-label="Messages" aria-busy={streaming !== null}>
      {!chat && <p className="muted empty">Pick a model, Load it, and send a message.</p>}
      {chat?.systemPrompt && <p className="system">System: {chat.systemPrompt}</p>}
      {chat?.messages.map((m) =>
        m.role === 'user' ? (
          <article key={m.id} className="message user" aria-label="You">
            <p>{m.content}</p>
          </article>
        ) : (
          <AssistantReply key={m.id} chatId={chatId!} messageId={m.id} message={m} />
        ),
      )}
      {chat && streaming && streaming.chatId === chat.id && !chat.messages.some((m) => m.id === streaming.messageId) && (
        <AssistantReply chatId={chat.id} messageId={streaming.messageId} message={null} />
      )}
      <div ref={end} />
    </section>
  );
}
