// The chats concern: chat editing (create, rename, delete) and the turns that start a reply
// (send, regenerate, edit and continue), each a change of the chat that ChatReplies applies
// only once nothing can refuse the reply.
import { randomUUID } from 'node:crypto';

import { titleFromMessage, UNTITLED_CHAT, type AssistantMessage, type Chat } from '../../contract/api/chats.js';
import { PowerError } from '../../contract/api/errors.js';
import { imageType, type ChatImage } from '../../contract/images.js';
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
  /** the images a message will hold, as the data folder has them (each added before) */
  const imagesNamed = (refs: readonly { sha256: string; name?: string }[]): Promise<ChatImage[]> =>
    Promise.all(refs.map((r) => store.imageRef(r.sha256, r.name)));
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
      // (no await without images: the reply takes the slot in this tick, so a stop right after finds it)
      const images = p.images?.length ? await imagesNamed(p.images) : [];
      const userMessage = {
        id: randomUUID(),
        role: 'user' as const,
        content: p.content,
        createdAt: now(),
        ...(images.length > 0 ? { images } : {}),
      };
      const assistantMessageId = await replies.start(
        chat,
        (c) => {
          if (p.systemPrompt !== undefined) c.systemPrompt = p.systemPrompt;
          c.messages.push(structuredClone(userMessage));
          if (c.title === UNTITLED_CHAT) c.title = titleFromMessage(p.content.trim() || (images[0]?.name ?? 'Image'));
        },
        replyOptions(p),
      );
      store.imagesUsed(images);
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
      const message = chat.messages[index]!;
      if (message.role !== 'user') throw new PowerError('bad-input', 'only a user message can be edited');
      // absent: the message keeps its images
      const images = p.images ? await imagesNamed(p.images) : (message.images ?? []);
      if (p.content.trim() === '' && images.length === 0) throw new PowerError('bad-input', 'a message needs text or an image');
      const assistantMessageId = await replies.start(
        chat,
        (c) => {
          // replies kept for the report answered the old text (or a turn dropped now)
          const gone = new Set(c.messages.slice(index).map((m) => m.id));
          if (c.superseded) c.superseded = c.superseded.filter((x) => !gone.has(x.replyTo));
          c.messages.splice(index + 1);
          const { images: _old, ...rest } = message;
          c.messages[index] = {
            ...structuredClone(rest),
            content: p.content,
            ...(images.length > 0 ? { images: structuredClone(images) } : {}),
          };
        },
        replyOptions(p),
      );
      store.imagesUsed(images);
      return { userMessageId: p.messageId, assistantMessageId };
    },
    addImage: async (p) => store.addImage(Buffer.from(p.data, 'base64'), p.name),
    image: async (p) => {
      const bytes = await store.image(p.sha256);
      const type = imageType(bytes.subarray(0, 16));
      if (!type) throw new PowerError('bad-input', `the image ${p.sha256} in the data folder is not one Power reads`);
      return { type, data: bytes.toString('base64') };
    },
    onChanged: events.chatChanged.on,
  };
}
