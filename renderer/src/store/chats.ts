// Chats and the reply being written. Generation events land in `live` (one batch per animation
// frame); when a reply ends the chat is read back from the service, which is authoritative.
import { titleFromMessage } from '../../../contract/api/chats.js';
import { emptyReply, type ReplyView } from '../logic/reply.js';
import { checkSampling, DEFAULT_SAMPLING_FORM, SAMPLING_LABELS, type SamplingField } from '../logic/sampling.js';
import type { AssistantMessage } from '../api-types.js';
import { recordReport } from './session.js';
import type { ChatsSlice, LiveEvent, Slice } from './types.js';

/** The live replies after one frame's batches of rounds. */
export function applyLiveEvents(live: Record<string, ReplyView>, events: readonly LiveEvent[]): Record<string, ReplyView> {
  const next = { ...live };
  const touched = new Set<string>();
  for (const event of events) {
    let reply = next[event.messageId];
    if (!reply) reply = emptyReply(event.chatId, event.messageId);
    if (!touched.has(event.messageId)) {
      reply = { ...reply, tokens: [...reply.tokens], rounds: [...reply.rounds] };
      touched.add(event.messageId);
    }
    const { tokens, rounds } = reply;
    for (const { texts, ...round } of event.rounds) {
      round.tokenIds.forEach((id, i) => tokens.push({ id, text: texts[i]!, origin: round.origins[i]!, round: round.index }));
      rounds.push(round);
    }
    if (event.rounds.length === 0 && event.text) {
      // the tail of a character the reply never finished belongs to its last token
      const last = tokens.at(-1);
      if (last) tokens[tokens.length - 1] = { ...last, text: last.text + event.text };
    }
    reply = { ...reply, stats: event.stats };
    next[event.messageId] = reply;
  }
  return next;
}

export const createChatsSlice: Slice<ChatsSlice> = (set, get) => {
  /** marks a reply as streaming, unless its events already ended it (a short reply can beat the call's answer) */
  const startReply = (chatId: string, messageId: string): void => {
    const live = get().live;
    const known = live[messageId];
    if (known && known.status !== 'streaming') return;
    set({ streaming: { chatId, messageId }, live: known ? live : { ...live, [messageId]: emptyReply(chatId, messageId) } });
  };

  return {
  chats: [],
  chatId: null,
  chat: null,
  live: {},
  streaming: null,
  systemPrompt: '',
  sampling: { ...DEFAULT_SAMPLING_FORM },

  setSamplingField(field: SamplingField, value: string) {
    set({ sampling: { ...get().sampling, [field]: value } });
  },

  setSystemPrompt(text) {
    set({ systemPrompt: text });
  },

  async refreshChats() {
    const { api } = get();
    if (!api) return;
    try {
      const { chats } = await api.chats.list({});
      set({ chats });
    } catch (error) {
      get().fail('Reading the chats', error);
    }
  },

  async openChat(id) {
    const { api } = get();
    if (!api || id === null) {
      set({ chatId: null, chat: null, systemPrompt: '' });
      return;
    }
    try {
      const chat = await api.chats.get({ chatId: id });
      set({ chatId: id, chat, systemPrompt: chat.systemPrompt ?? '' });
    } catch (error) {
      get().fail('Opening the chat', error);
    }
  },

  async refreshChat() {
    const { api, chatId } = get();
    if (!api || !chatId) return;
    try {
      const chat = await api.chats.get({ chatId });
      if (get().chatId === chatId) set({ chat });
    } catch (error) {
      get().fail('Reading the chat', error);
    }
  },

  async newChat() {
    const { api } = get();
    if (!api) return;
    try {
      const chat = await api.chats.create({});
      set({ chatId: chat.id, chat, systemPrompt: '' });
      await get().refreshChats();
    } catch (error) {
      get().fail('Creating a chat', error);
    }
  },

  async renameChat(id, title) {
    const { api } = get();
    if (!api) return;
    try {
      await api.chats.rename({ chatId: id, title });
      await get().refreshChats();
      if (get().chatId === id) await get().refreshChat();
    } catch (error) {
      get().fail('Renaming the chat', error);
    }
  },

  async deleteChat(id) {
    const { api } = get();
    if (!api) return;
    try {
      await api.chats.delete({ chatId: id });
      if (get().chatId === id) set({ chatId: null, chat: null });
      await get().refreshChats();
    } catch (error) {
      get().fail('Deleting the chat', error);
    }
  },

  async send(content) {
    const { api } = get();
    if (!api || content.trim() === '') return false;
    const checked = checkSampling(get().sampling);
    if (!checked.ok) {
      const [field, message] = Object.entries(checked.errors)[0]!;
      get().fail('Sending', { code: 'bad-input', message: message ?? `${SAMPLING_LABELS[field as SamplingField]} is not valid.` });
      return false;
    }
    try {
      let chatId = get().chatId;
      if (!chatId) {
        const chat = await api.chats.create({ title: titleFromMessage(content) });
        chatId = chat.id;
        set({ chatId, chat });
      }
      const systemPrompt = get().systemPrompt.trim();
      const started = await api.chats.send({
        chatId,
        content,
        systemPrompt: systemPrompt === '' ? null : systemPrompt,
        sampling: checked.sampling,
      });
      set({ notice: null });
      startReply(chatId, started.assistantMessageId);
      await Promise.all([get().refreshChat(), get().refreshChats()]);
      return true;
    } catch (error) {
      get().fail('Sending', error);
      return false;
    }
  },

  async stop() {
    const { api, streaming } = get();
    if (!api || !streaming) return;
    try {
      await api.chats.stop({ chatId: streaming.chatId });
    } catch (error) {
      get().fail('Stopping', error);
    }
  },

  async regenerate() {
    const { api, chatId } = get();
    if (!api || !chatId) return;
    const checked = checkSampling(get().sampling);
    if (!checked.ok) {
      get().fail('Regenerating', { code: 'bad-input', message: Object.values(checked.errors)[0] ?? 'bad sampling settings' });
      return;
    }
    try {
      const started = await api.chats.regenerate({ chatId, sampling: checked.sampling });
      set({ notice: null });
      startReply(chatId, started.assistantMessageId);
      await get().refreshChat();
    } catch (error) {
      get().fail('Regenerating', error);
    }
  },

  applyLive(events) {
    if (events.length === 0) return;
    const last = events[events.length - 1]!;
    const live = applyLiveEvents(get().live, events);
    const streaming = get().streaming ?? (live[last.messageId]?.status === 'streaming' ? { chatId: last.chatId, messageId: last.messageId } : null);
    set({ live, streaming });
  },

  async finishReply(chatId, messageId, outcome) {
    const live = get().live;
    const reply = live[messageId] ?? emptyReply(chatId, messageId);
    const ended: ReplyView =
      outcome.kind === 'done'
        ? { ...reply, status: outcome.stopReason === 'cancelled' ? 'stopped' : 'done', digest: outcome.digest, stats: outcome.stats }
        : { ...reply, status: outcome.error.code === 'cancelled' ? 'stopped' : 'error', error: outcome.error };
    const streaming = get().streaming?.messageId === messageId ? null : get().streaming;
    set({ live: { ...live, [messageId]: ended }, streaming });
    if (outcome.kind === 'error' && outcome.error.code !== 'cancelled') get().fail('The reply', outcome.error);

    const { api } = get();
    if (!api) return;
    try {
      const chat = await api.chats.get({ chatId });
      if (get().chatId === chatId) set({ chat });
      const message = chat.messages.find((m): m is AssistantMessage => m.role === 'assistant' && m.id === messageId);
      if (message) recordReport(get, set, chat.title, chatId, message);
    } catch {
      // the chat was deleted meanwhile: nothing to show or record
    }
    void get().refreshChats();
  },
  };
};
