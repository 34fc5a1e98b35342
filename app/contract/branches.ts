// A chat's versions. `Chat.messages` is the conversation shown, so whatever builds a prompt,
// a report or a view from it needs to know nothing of branches; the other versions wait in
// `Chat.branches`, each keyed by the message they follow. Showing another version swaps the
// tail shown for a kept one; branches inside a kept tail stay keyed by its messages' ids, so
// they come back with it.
import type { Chat, ChatBranch, ChatMessage } from './api/chats.js';

/** The id a version starting at messages[index] follows: the message before it, null at the chat's start. */
function afterOf(chat: Chat, index: number): string | null {
  return index === 0 ? null : chat.messages[index - 1]!.id;
}

/** The branch whose versions start at messages[index], or null when that message has no other version. */
export function branchAt(chat: Chat, index: number): ChatBranch | null {
  if (index < 0 || index > chat.messages.length) return null;
  const after = afterOf(chat, index);
  return chat.branches?.find((b) => b.after === after) ?? null;
}

/** Where the message at `index` stands among its versions: ‹ shown + 1 / count ›; null when it has no other. */
export function versionOf(chat: Chat, index: number): { shown: number; count: number } | null {
  if (index >= chat.messages.length) return null;
  const b = branchAt(chat, index);
  return b ? { shown: b.shown, count: b.tails.length + 1 } : null;
}

/** Every version at a branch in the order they were made, the shown one being `current`. */
function versions(b: ChatBranch, current: ChatMessage[]): ChatMessage[][] {
  const all = [...b.tails];
  all.splice(b.shown, 0, current);
  return all;
}

/**
 * Moves the conversation from messages[index] on into the versions kept at that point, and
 * makes room for the version about to be written there (the newest). An empty tail is no
 * version: nothing is kept for it.
 */
export function keepVersion(chat: Chat, index: number): void {
  const after = afterOf(chat, index);
  const tail = chat.messages.splice(index);
  let b = chat.branches?.find((x) => x.after === after);
  if (tail.length === 0) {
    // the newest version goes last
    if (b) b.shown = b.tails.length;
    return;
  }
  if (!b) {
    b = { after, tails: [], shown: 0 };
    chat.branches = [...(chat.branches ?? []), b];
  }
  b.tails = versions(b, tail);
  b.shown = b.tails.length;
}

/** Why the conversation cannot show version `to` at messages[index], or null after it did. */
export function switchVersion(chat: Chat, index: number, to: number): string | null {
  const b = index < chat.messages.length ? branchAt(chat, index) : null;
  if (!b) return 'the message has no other version';
  if (to > b.tails.length) return `the message has ${b.tails.length + 1} versions: pick 0 to ${b.tails.length}`;
  if (to === b.shown) return null;
  const all = versions(b, chat.messages.splice(index));
  chat.messages.push(...all.splice(to, 1)[0]!);
  b.tails = all;
  b.shown = to;
  return null;
}

export interface VersionedMessage {
  message: ChatMessage;
  /** in the conversation shown (false: in a version kept aside) */
  shown: boolean;
  /** 1-based: the user messages from the chat's start to this message, along its own version */
  turn: number;
  /** the user message an assistant message answers (null: none before it) */
  replyTo: string | null;
}

/**
 * Every message of every version, in conversation order; at a branch, the versions kept aside
 * (in the order they were made, each followed through its own branches) come before the one shown.
 */
export function everyVersion(chat: Chat): VersionedMessage[] {
  const out: VersionedMessage[] = [];
  const byAfter = new Map<string | null, ChatBranch>();
  for (const b of chat.branches ?? []) if (!byAfter.has(b.after)) byAfter.set(b.after, b);
  // a branch is followed once: a file that loops (a tail holding the message it follows) ends
  const seen = new Set<ChatBranch>();
  const walk = (messages: readonly ChatMessage[], shown: boolean, turn: number, replyTo: string | null): void => {
    for (const m of messages) {
      if (m.role === 'user') {
        turn++;
        replyTo = m.id;
      }
      out.push({ message: m, shown, turn, replyTo: m.role === 'user' ? null : replyTo });
      kept(m.id, turn, replyTo);
    }
  };
  const kept = (after: string | null, turn: number, replyTo: string | null): void => {
    const b = byAfter.get(after);
    if (!b || seen.has(b)) return;
    seen.add(b);
    for (const tail of b.tails) walk(tail, false, turn, replyTo);
  };
  kept(null, 0, null);
  walk(chat.messages, true, 0, null);
  return out;
}

/** Every message of every version (the images a chat holds, a reply to inspect). */
export function everyMessage(chat: Chat): ChatMessage[] {
  return [...chat.messages, ...(chat.branches ?? []).flatMap((b) => b.tails.flat())];
}
