// The chats concern: chat editing (create, rename, delete) and the turns that start a reply
// (send, regenerate, edit and continue), each a change of the chat that ChatReplies applies
// only once nothing can refuse the reply.
import { randomUUID } from 'node:crypto';

import { titleFromMessage, UNTITLED_CHAT, type AssistantMessage, type Chat } from '../../contract/api/chats.js';
import { PowerError } from '../../contract/api/errors.js';
import type { ServiceImplementation } from '../types.js';
import { summary, type ChatStore } from '../chat-store.js';
import { now, type ChatReplies, type ReplyOptions } from '../chat-replies.js';
import type { ServiceEvents } from '../events.js';

/** Removes the replies after the user message at `userIndex`, keeping them in `superseded` for the report. */
function supersede(chat: Chat, userIndex: number): void {
  const replyTo = chat.messages[userIndex]!.id;
  const removed = chat.messages.splice(userIndex + 1).filter((m): m is AssistantMessage => m.role === 'assistant');
  if (removed.length > 0) chat.superseded = [...(chat.superseded ?? []), ...removed.map((message) => ({ replyTo, message }))];
}

const replyOptions = (p: ReplyOptions): ReplyOptions => ({
  ...(p.sampling ? { sampling: p.sampling } : {}),
  ...(p.profileId ? { profileId: p.profileId } : {}),
});

export function chatsApi(store: ChatStore, replies: ChatReplies, events: ServiceEvents): ServiceImplementation['chats'] {
  const changed = (chatId: string, change: 'created' | 'updated' | 'deleted'): void => events.chatChanged.emit({ chatId, change });
  return {
    create: async (p) => {
      const t = now();
      const chat: Chat = {
        id: randomUUID(),
        title: p.title ?? UNTITLED_CHAT,
        createdAt: t,
        updatedAt: t,
        systemPrompt: p.systemPrompt ?? null,
        messages: [],
      };
      await store.add(chat);
      changed(chat.id, 'created');
      return structuredClone(chat);
    },
    list: async () => ({ chats: store.list(replies.streamingChat()) }),
    get: async (p) => structuredClone(store.get(p.chatId)),
    rename: async (p) => {
      const chat = store.get(p.chatId);
      chat.title = p.title;
      chat.updatedAt = now();
      await store.save(chat);
      changed(chat.id, 'updated');
      return summary(chat, replies.streamingChat() === chat.id);
    },
    delete: async (p) => {
      const { chatId } = p;
      store.get(chatId);
      await replies.stop(chatId);
      await store.delete(chatId);
      changed(chatId, 'deleted');
      return { ok: true as const };
    },
    send: async (p) => {
      const chat = store.get(p.chatId);
      const userMessage = { id: randomUUID(), role: 'user' as const, content: p.content, createdAt: now() };
      const assistantMessageId = await replies.start(
        chat,
        (c) => {
          if (p.systemPrompt !== undefined) c.systemPrompt = p.systemPrompt;
          c.messages.push({ ...userMessage });
          if (c.title === UNTITLED_CHAT) c.title = titleFromMessage(p.content);
        },
        replyOptions(p),
      );
      return { userMessageId: userMessage.id, assistantMessageId };
    },
    stop: async (p) => {
      const { chatId } = p;
      store.get(chatId);
      return { stopped: await replies.stop(chatId) };
    },
    regenerate: async (p) => {
      const chat = store.get(p.chatId);
      let userIndex = chat.messages.length - 1;
      while (userIndex >= 0 && chat.messages[userIndex]!.role !== 'user') userIndex--;
      if (userIndex < 0) throw new PowerError('bad-input', 'the chat has no user message to reply to');
      const assistantMessageId = await replies.start(chat, (c) => supersede(c, userIndex), replyOptions(p));
      return { userMessageId: chat.messages[userIndex]!.id, assistantMessageId };
    },
    editAndContinue: async (p) => {
      const chat = store.get(p.chatId);
      const index = chat.messages.findIndex((m) => m.id === p.messageId);
      if (index < 0) throw new PowerError('not-found', `no message ${p.messageId} in chat ${p.chatId}`);
      if (chat.messages[index]!.role !== 'user') throw new PowerError('bad-input', 'only a user message can be edited');
      const assistantMessageId = await replies.start(
        chat,
        (c) => {
          // replies kept for the report answered the old text (or a turn dropped now)
          const gone = new Set(c.messages.slice(index).map((m) => m.id));
          if (c.superseded) c.superseded = c.superseded.filter((x) => !gone.has(x.replyTo));
          c.messages.splice(index + 1);
          c.messages[index] = { ...c.messages[index]!, content: p.content } as Chat['messages'][number];
        },
        replyOptions(p),
      );
      return { userMessageId: p.messageId, assistantMessageId };
    },
    onChanged: events.chatChanged.on,
  };
}
