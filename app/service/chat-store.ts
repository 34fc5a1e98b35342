// Chats on disk: one versioned document per chat (chats/<id>.json), each written atomically,
// kept in memory while the service runs. A chat found with a reply still 'streaming' was cut
// off by a stop of Power itself: it is marked as an error and keeps its committed tokens. A
// chat file that is corrupt (cut short, not JSON, content the schema refuses) is set aside
// under another name, with a notice, so that the other chats load and nothing overwrites it.
// The images of user messages are kept once each by their sha256 (chat-images/<sha256>), not
// inside the chat's JSON; an image goes when no chat refers to it any more.
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { Chat, type ChatSummary } from '../contract/api/chats.js';
import { everyMessage } from '../contract/branches.js';
import { PowerError } from '../contract/api/errors.js';
import { imageType, type ChatImage } from '../contract/images.js';
import { isTempFile } from './storage/atomic-file.js';
import { BlobStore } from './storage/blobs.js';
import { DocumentError, readDocument, SaveQueue, setAsideName, writeDocument, type DocumentKind } from './storage/document.js';

/** Version 1 called a reply's environment `runtime`; version 2 says `environment` (docs/architecture.md, Glossary). */
function environmentNamed(data: unknown): unknown {
  const chat = data as { messages?: unknown[]; superseded?: { message?: unknown }[] };
  const rename = (m: unknown) => {
    const message = m as Record<string, unknown> | null;
    if (message && typeof message === 'object' && 'runtime' in message) {
      const { runtime, ...rest } = message;
      return { ...rest, environment: runtime };
    }
    return m;
  };
  return {
    ...chat,
    ...(Array.isArray(chat.messages) ? { messages: chat.messages.map(rename) } : {}),
    ...(Array.isArray(chat.superseded) ? { superseded: chat.superseded.map((s) => ({ ...s, message: rename(s.message) })) } : {}),
  };
}

/**
 * Version 4 keeps every version of a conversation (`branches`); version 3 kept only the replies
 * Regenerate and the A/B replaced (`superseded`, each with the user message it answered). Each
 * becomes a version of its turn's reply, made before the one shown and in the order they were
 * replaced, so the conversation shown, the A/B and the report stay what they were.
 */
function supersededAsVersions(data: unknown): unknown {
  const { superseded, ...chat } = data as { superseded?: { replyTo?: unknown; message?: unknown }[] };
  if (!Array.isArray(superseded) || superseded.length === 0) return chat;
  const branches = new Map<unknown, { after: unknown; tails: unknown[][]; shown: number }>();
  for (const s of superseded) {
    const b = branches.get(s.replyTo) ?? { after: s.replyTo, tails: [], shown: 0 };
    b.tails.push([s.message]);
    b.shown = b.tails.length;
    branches.set(s.replyTo, b);
  }
  return { ...chat, branches: [...branches.values()] };
}

/**
 * Version 3 adds a user message's images: a Power of version 2 would read such a chat and drop
 * them when it saved it, so it is refused the file instead (left as it is); nothing to migrate.
 */
export const CHAT: DocumentKind<typeof Chat> = {
  format: 'chat',
  version: 4,
  schema: Chat,
  migrations: { 1: environmentNamed, 2: (data) => data, 3: supersededAsVersions },
};
const ID = /^[0-9a-f-]{36}$/;

/** A chat file that could not be loaded, and what became of it. */
export interface UnloadedChat {
  /** the file's name in the chats folder */
  file: string;
  reason: string;
  /** the name it was renamed to (`<file>.corrupt-<time>`), or null when it was left in place (a newer Power's, or unreadable) */
  setAsideAs: string | null;
}

export interface ChatStoreOptions {
  /** where notices go (a chat set aside); default: a `power:` line on stderr */
  log?: (line: string) => void;
}

const stderrLog = (line: string): void => void process.stderr.write(`power: ${line}\n`);

export class ChatStore {
  private readonly chats = new Map<string, Chat>();
  private readonly saves = new Map<string, SaveQueue>();
  /** chat files that did not load at start, with why (a front door may show them) */
  readonly unloaded: UnloadedChat[] = [];

  /** images added (addImage) that no message refers to yet: a chat's deletion leaves them */
  private readonly pendingImages = new Set<string>();

  private constructor(
    private readonly dir: string,
    private readonly images: BlobStore,
  ) {}

  static async open(dataDir: string, options: ChatStoreOptions = {}): Promise<ChatStore> {
    const log = options.log ?? stderrLog;
    const store = new ChatStore(join(dataDir, 'chats'), await BlobStore.open(join(dataDir, 'chat-images')));
    await mkdir(store.dir, { recursive: true });
    for (const name of (await readdir(store.dir)).sort()) {
      if (isTempFile(name)) {
        await rm(join(store.dir, name), { force: true });
        continue;
      }
      if (!name.endsWith('.json') || !ID.test(name.slice(0, -5))) continue;
      const path = join(store.dir, name);
      let chat: Chat | null;
      try {
        chat = await readDocument(CHAT, path);
        if (chat && chat.id !== name.slice(0, -5)) throw new DocumentError(path, `it holds chat ${chat.id}, not the chat its name says`);
      } catch (error) {
        await store.setAside(name, error, log);
        continue;
      }
      if (!chat) continue;
      let interrupted = false;
      for (const m of everyMessage(chat)) {
        if (m.role === 'assistant' && m.status === 'streaming') {
          m.status = 'error';
          m.error = { code: 'internal', message: 'Power stopped while this reply was streaming; the tokens saved before are kept' };
          interrupted = true;
        }
      }
      store.chats.set(chat.id, chat);
      // a save that fails here (a full disk) must not keep Power from starting: the file still
      // says 'streaming', and the next start marks it again
      if (interrupted)
        await store
          .save(chat)
          .catch((error: Error) => log(`chats/${name}: the interrupted reply could not be marked on disk (${error.message})`));
    }
    // images added for a message that was never sent; those of a chat that did not load (set
    // aside, or a newer Power's) stay: any sha256 its text names counts
    const keep = store.imagesInUse();
    for (const name of await readdir(store.dir)) {
      if (store.chats.has(name.slice(0, -5)) && name.endsWith('.json')) continue;
      const text = await readFile(join(store.dir, name), 'utf8').catch(() => '');
      for (const sha of text.match(/[0-9a-f]{64}/g) ?? []) keep.add(sha);
    }
    await store.images.sweep(keep).catch((error: Error) => log(`chat-images: unused images could not be removed (${error.message})`));
    return store;
  }

  /** The sha256 of every image a loaded chat's messages hold (and of those added for a message to come). */
  private imagesInUse(): Set<string> {
    const keep = new Set(this.pendingImages);
    for (const chat of this.chats.values()) for (const sha of imagesOf(chat)) keep.add(sha);
    return keep;
  }

  /** Keeps an image (checked at the boundary: a format Power reads, of an allowed size) for a message to come. */
  async addImage(bytes: Uint8Array, name?: string): Promise<ChatImage> {
    const type = imageType(bytes.subarray(0, 16));
    if (!type) throw new PowerError('bad-input', 'not an image Power reads');
    const sha256 = await this.images.put(bytes);
    this.pendingImages.add(sha256);
    return { sha256, type, bytes: bytes.length, ...(name ? { name } : {}) };
  }

  /** The image a message will refer to, as the data folder has it. */
  async imageRef(sha256: string, name?: string): Promise<ChatImage> {
    const bytes = await this.image(sha256);
    const type = imageType(bytes.subarray(0, 16));
    if (!type) throw new PowerError('bad-input', `the image ${sha256} in the data folder is not one Power reads`);
    return { sha256, type, bytes: bytes.length, ...(name ? { name } : {}) };
  }

  /** An image's bytes; `not-found`, saying what to do, when the data folder has none by that sha256. */
  async image(sha256: string): Promise<Buffer> {
    try {
      return await this.images.read(sha256, 'image');
    } catch (error) {
      if (error instanceof PowerError && error.code === 'not-found')
        throw new PowerError('not-found', `the image ${sha256} is not in the data folder (add it again: chats.addImage)`);
      throw error;
    }
  }

  /** The images now held by a message: no longer pending. */
  imagesUsed(images: readonly ChatImage[]): void {
    for (const i of images) this.pendingImages.delete(i.sha256);
  }

  /**
   * A corrupt file moves out of the way (renamed, never deleted: it may hold what the user wants
   * back); a newer Power's file, or one that cannot be read at all, stays where it is, unloaded.
   */
  private async setAside(name: string, error: unknown, log: (line: string) => void): Promise<void> {
    const reason = error instanceof DocumentError ? error.message.slice(error.path.length + 2) : (error as Error).message;
    if (!(error instanceof DocumentError) || error.problem !== 'corrupt') {
      this.unloaded.push({ file: name, reason, setAsideAs: null });
      log(`chats/${name} was not loaded (${reason}); it is left as it is`);
      return;
    }
    const aside = setAsideName(name);
    try {
      await rename(join(this.dir, name), join(this.dir, aside));
    } catch (renameError) {
      this.unloaded.push({ file: name, reason, setAsideAs: null });
      log(`chats/${name} is corrupt (${reason}) and could not be set aside (${(renameError as Error).message}); it is left as it is`);
      return;
    }
    this.unloaded.push({ file: name, reason, setAsideAs: aside });
    log(`chats/${name} is corrupt (${reason}); it was set aside as chats/${aside} and the other chats were loaded`);
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
    return [...this.chats.values()].map((c) => summary(c, c.id === streamingId)).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
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

  /** Deletes the chat, and the images that no other chat holds. */
  async delete(id: string): Promise<void> {
    const own = imagesOf(this.get(id));
    this.chats.delete(id);
    // a save still queued for it finishes first, so the file cannot come back
    await this.saves.get(id)?.save(() => rm(this.file(id), { force: true }));
    this.saves.delete(id);
    await rm(this.file(id), { force: true });
    // after the chat's file: a chat on disk never refers to a missing image
    if (own.size > 0) await this.images.sweep(this.imagesInUse(), own);
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

/** The sha256 of the images a chat's user messages hold, in every version. */
export function imagesOf(chat: Chat): Set<string> {
  const out = new Set<string>();
  for (const m of everyMessage(chat)) if (m.role === 'user') for (const i of m.images ?? []) out.add(i.sha256);
  return out;
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
