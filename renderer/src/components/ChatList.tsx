import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import type { ChatSummary } from '../api-types.js';
import { usePower } from './store-context.js';

function ChatItem({ chat, current }: { chat: ChatSummary; current: boolean }) {
  const { openChat, renameChat, deleteChat } = usePower(useShallow((s) => ({ openChat: s.openChat, renameChat: s.renameChat, deleteChat: s.deleteChat })));
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(chat.title);
  if (editing) {
    return (
      <li className="chat-item editing">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (title.trim() === '') return;
            setEditing(false);
            void renameChat(chat.id, title.trim());
          }}
        >
          <input aria-label="Chat title" value={title} maxLength={200} autoFocus onChange={(e) => setTitle(e.target.value)} onKeyDown={(e) => e.key === 'Escape' && setEditing(false)} />
          <button type="submit">Save</button>
        </form>
      </li>
    );
  }
  return (
    <li className={current ? 'chat-item current' : 'chat-item'}>
      <button type="button" className="chat-open" aria-current={current ? 'true' : undefined} onClick={() => void openChat(chat.id)}>
        {chat.title || 'Untitled'}
        {chat.streaming && <span className="dot" aria-label="streaming" />}
      </button>
      <button
        type="button"
        className="icon"
        aria-label={`Rename ${chat.title}`}
        title="Rename"
        onClick={() => {
          setTitle(chat.title);
          setEditing(true);
        }}
      >
        ✎
      </button>
      <button type="button" className="icon" aria-label={`Delete ${chat.title}`} title="Delete" onClick={() => void deleteChat(chat.id)}>
        ✕
      </button>
    </li>
  );
}

export function ChatList() {
  const { chats, chatId, newChat } = usePower(useShallow((s) => ({ chats: s.chats, chatId: s.chatId, newChat: s.newChat })));
  return (
    <nav className="chat-list" aria-label="Chats">
      <button type="button" onClick={() => void newChat()}>
        New chat
      </button>
      <ul>
        {chats.map((c) => (
          <ChatItem key={c.id} chat={c} current={c.id === chatId} />
        ))}
      </ul>
    </nav>
  );
}
