// The chat list's choices: which empty chat "New chat" reuses, which chat opens after one is
// deleted.
import { UNTITLED_CHAT } from '../../../app/contract/api/chats.js';
import type { ChatSummary } from '../api-types.js';

/** An empty, untitled chat to reuse instead of creating another (the open one first). */
export function reusableChat(chats: readonly ChatSummary[], openId: string | null): ChatSummary | null {
  const empty = (c: ChatSummary): boolean => c.messages === 0 && c.title === UNTITLED_CHAT && !c.streaming;
  return chats.find((c) => c.id === openId && empty(c)) ?? chats.find(empty) ?? null;
}

/** The chat to open once `deletedId` is gone: the next one in the list, else the one before. */
export function chatAfterDelete(chats: readonly ChatSummary[], deletedId: string): string | null {
  const i = chats.findIndex((c) => c.id === deletedId);
  const rest = chats.filter((c) => c.id !== deletedId);
  if (rest.length === 0) return null;
  if (i < 0) return rest[0]!.id;
  return (rest[i] ?? rest[i - 1] ?? rest[0]!).id;
}
