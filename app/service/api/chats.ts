// The chats concern: chat editing (create, rename, delete, fork, the version shown) and the
// turns that start a reply (send, regenerate, edit and continue), each a change of the chat that
// ChatReplies applies only once nothing can refuse the reply. Regenerate and Edit keep what they
// replace as another version (app/contract/branches.ts).
import { randomUUID } from 'node:crypto';

import { titleFromMessage, UNTITLED_CHAT, type Chat, type ChatMessage } from '../../contract/api/chats.js';
import { keepVersion, switchVersion } from '../../contract/branches.js';
import { PowerError } from '../../contract/api/errors.js';
import { imageType, type ChatImage } from '../../contract/images.js';
import type { ServiceImplementation } from '../types.js';
import { summary, type ChatStore } from '../chat-store.js';
import { now, type ChatReplies, type ReplyOptions } from '../chat-replies.js';
import type { ServiceEvents } from '../events.js';

/** The index of a message of the conversation shown; `not-found` when it has none by that id. */
function messageIndex(chat: Chat, messageId: string): number {
  const index = chat.messages.findIndex((m) => m.id === messageId);
  if (index < 0) throw new PowerError('not-found', `no message ${messageId} in the conversation shown in chat ${chat.id}`);
  return index;
}

/** "<title> (fork)", within the 200 characters a title may have. */
function forkTitle(title: string): string {
  const suffix = ' (fork)';
  return title.length + suffix.length > 200 ? `${title.slice(0, 199 - suffix.length)}…${suffix}` : `${title}${suffix}`;
}

/**
 * A message of a fork: an id of its own, and a tool call that has not finished (pending, or
 * running in the source, whose reply goes on there) waits for the user in the fork, where
 * answering it runs it and the fork's reply goes on.
 */
function forkedMessage(m: ChatMessage): ChatMessage {
  const copy = { ...structuredClone(m), id: randomUUID() };
  if (copy.role === 'assistant' && copy.toolCalls)
    copy.toolCalls = copy.toolCalls.map((c) => {
      if (c.state !== 'running') return c;
      const { approval: _approval, ...asked } = c;
      return { ...asked, state: 'pending' as const };
    });
  return copy;
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
      const assistantMessageId = await replies.start(chat, (c) => keepVersion(c, userIndex + 1), replyOptions(p));
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
      // a new version of the message: the old one and what followed it stay, under their own ids
      const { images: _old, ...rest } = message;
      const edited: ChatMessage = {
        ...structuredClone(rest),
        id: randomUUID(),
        createdAt: now(),
        content: p.content,
        ...(images.length > 0 ? { images: structuredClone(images) } : {}),
      };
      const assistantMessageId = await replies.start(
        chat,
        (c) => {
          keepVersion(c, index);
          c.messages.push(structuredClone(edited));
        },
        replyOptions(p),
      );
      store.imagesUsed(images);
      return { userMessageId: edited.id, assistantMessageId };
    },
    switchBranch: async (p) => {
      const chat = store.get(p.chatId);
      const index = messageIndex(chat, p.messageId);
      // the streaming reply must stay in the conversation it is written into
      if (replies.streamingChat() === chat.id)
        throw new PowerError('busy', 'a reply is being written in this chat: wait for it, or stop it');
      const before = structuredClone(chat);
      const problem = switchVersion(chat, index, p.to);
      if (problem) throw new PowerError('bad-input', problem);
      chat.updatedAt = now();
      try {
        await store.save(chat);
      } catch (error) {
        Object.assign(chat, before);
        throw error;
      }
      changed(chat.id, 'updated');
      return structuredClone(chat);
    },
    fork: async (p) => {
      const source = store.get(p.chatId);
      const index = messageIndex(source, p.messageId);
      const copied = source.messages.slice(0, index + 1);
      if (copied.some((m) => m.role === 'assistant' && m.status === 'streaming'))
        throw new PowerError('busy', 'the reply is still being written: fork from it once it has ended');
      const t = now();
      const chat: Chat = {
        id: randomUUID(),
        title: forkTitle(source.title),
        createdAt: t,
        updatedAt: t,
        systemPrompt: source.systemPrompt,
        messages: copied.map((m) => forkedMessage(m)),
        // the fork offers the same tools
        ...(source.mcpServers ? { mcpServers: [...source.mcpServers] } : {}),
      };
      await store.add(chat);
      changed(chat.id, 'created');
      return structuredClone(chat);
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
