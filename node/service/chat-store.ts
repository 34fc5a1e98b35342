// Chats on disk: one versioned document per chat (chats/<id>.json), each written atomically,
// kept in memory while the service runs. A chat found with a reply still 'streaming' was cut
// off by a stop of Power itself: it is marked as an error and keeps its committed tokens.
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { Chat, type ChatSummary } from '../../contract/api/chats.js';
import { PowerError } from '../../contract/api/errors.js';
import { isTempFile } from './storage/atomic-file.js';
import { readDocument, SaveQueue, writeDocument, type DocumentKind } from './storage/document.js';

export const CHAT: DocumentKind<typeof Chat> = { format: 'chat', version: 1, schema: Chat };
const ID = /^[0-9a-f-]{36}$/;

export class ChatStore {
  private readonly chats = new Map<string, Chat>();
  private readonly saves = new Map<string, SaveQueue>();
  /** files that could not be read, with why (they are left alone, never overwritten) */
  readonly unreadable: string[] = [];

  private constructor(private readonly dir: string) {}

  static async open(dataDir: string): Promise<ChatStore> {
    const store = new ChatStore(join(dataDir, 'chats'));
    await mkdir(store.dir, { recursive: true });
    for (const name of await readdir(store.dir)) {
      if (isTempFile(name)) {
        await rm(join(store.dir, name), { force: true });
        continue;
      }
      if (!name.endsWith('.json') || !ID.test(name.slice(0, -5))) continue;
      try {
        const chat = await readDocument(CHAT, join(store.dir, name));
        if (!chat) continue;
        let interrupted = false;
        for (const m of chat.messages) {
          if (m.role === 'assistant' && m.status === 'streaming') {
            m.status = 'error';
            m.error = { code: 'internal', message: 'Power stopped while this reply was streaming; the tokens saved before are kept' };
            interrupted = true;
          }
        }
        store.chats.set(chat.id, chat);
        if (interrupted) await store.save(chat);
      } catch (error) {
        store.unreadable.push(`${name}: ${(error as Error).message}`);
      }
    }
    return store;
  }

  has(id: string): boolean {
    return this.chats.has(id);
  }

  /** The live chat object (the service mutates it, then saves). */
  get(id: string): Chat {
    const chat = this.chats.get(id);
    if (!chat) throw new PowerError('not-found', `no chat ${id}`);
    return chat;
  }

  list(streamingId: string | null): ChatSummary[] {
    return [...this.chats.values()]
      .map((c) => summary(c, c.id === streamingId))
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  async add(chat: Chat): Promise<void> {
    this.chats.set(chat.id, chat);
    await this.save(chat);
  }

  /** Saves the chat as it is now (writes of one chat never overlap; the latest wins). */
  save(chat: Chat): Promise<void> {
    if (!this.chats.has(chat.id)) return Promise.resolve();
    const snapshot = structuredClone(chat);
    let queue = this.saves.get(chat.id);
    if (!queue) this.saves.set(chat.id, (queue = new SaveQueue()));
    return queue.save(() => writeDocument(CHAT, this.file(chat.id), snapshot));
  }

  async delete(id: string): Promise<void> {
    this.get(id);
    this.chats.delete(id);
    // a save still queued for it finishes first, so the file cannot come back
    await this.saves.get(id)?.save(() => rm(this.file(id), { force: true }));
    this.saves.delete(id);
    await rm(this.file(id), { force: true });
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

export function summary(chat: Chat, streaming: boolean): ChatSummary {
  return {
    id: chat.id,
    title: chat.title,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
    messages: chat.messages.length,
    streaming,
  };
}
