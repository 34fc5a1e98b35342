// The chats: New chat (an empty one is reused), rename, delete after a confirmation; a chat whose
// reply is being written is marked.
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import type { ChatSummary } from '../api-types.js';
import { usePower } from './store-context.js';

function RenameForm({ chat, onDone }: { chat: ChatSummary; onDone: () => void }) {
  const renameChat = usePower((s) => s.renameChat);
  const [title, setTitle] = useState(chat.title);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (title.trim() === '') return;
        onDone();
        void renameChat(chat.id, title.trim());
      }}
    >
      <input
        aria-label="Chat title"
        value={title}
        maxLength={200}
        autoFocus
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onDone()}
      />
      <button type="submit">Save</button>
    </form>
  );
}

function DeleteConfirm({ chat, onDone }: { chat: ChatSummary; onDone: () => void }) {
  const deleteChat = usePower((s) => s.deleteChat);
  return (
    <div className="confirm" role="group" aria-label={`Delete ${chat.title}?`}>
      <span>
        Delete “{chat.title}”{chat.streaming ? ' (its reply stops)' : ''}?
      </span>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          onDone();
          void deleteChat(chat.id);
        }}
      >
        Delete
      </button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
    </div>
  );
}

function ChatItem({ chat, current, streaming }: { chat: ChatSummary; current: boolean; streaming: boolean }) {
  const openChat = usePower((s) => s.openChat);
  const [mode, setMode] = useState<'view' | 'rename' | 'delete'>('view');
  if (mode === 'rename') {
    return (
      <li className="chat-item editing">
        <RenameForm chat={chat} onDone={() => setMode('view')} />
      </li>
    );
  }
  return (
    <li className={current ? 'chat-item current' : 'chat-item'} data-streaming={streaming}>
      <div className="chat-row">
        <button type="button" className="chat-open" aria-current={current ? 'true' : undefined} onClick={() => void openChat(chat.id)}>
          {chat.title || 'Untitled'}
          {streaming && (
            <span className="streaming-mark">
              <span aria-hidden="true"> ●</span>
              <span className="sr-only"> (writing a reply)</span>
            </span>
          )}
        </button>
        <button type="button" className="icon" aria-label={`Rename ${chat.title}`} title="Rename" onClick={() => setMode('rename')}>
          ✎
        </button>
        <button type="button" className="icon" aria-label={`Delete ${chat.title}`} title="Delete" onClick={() => setMode('delete')}>
          ✕
        </button>
      </div>
      {mode === 'delete' && <DeleteConfirm chat={chat} onDone={() => setMode('view')} />}
    </li>
  );
}

export function ChatList() {
  const { chats, chatId, streamingChat, newChat } = usePower(
    useShallow((s) => ({ chats: s.chats, chatId: s.chatId, streamingChat: s.streaming?.chatId ?? null, newChat: s.newChat })),
  );
  return (
    <nav className="chat-list" aria-label="Chats">
      <button type="button" className="new-chat" onClick={() => void newChat()}>
        New chat
      </button>
      <ul>
        {chats.map((c) => (
          <ChatItem key={c.id} chat={c} current={c.id === chatId} streaming={c.streaming || c.id === streamingChat} />
        ))}
      </ul>
    </nav>
  );
}
