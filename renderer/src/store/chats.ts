// Chats and the reply being written. Generation events land in `live` (one batch per animation
// frame); when a reply ends the chat is read back from the service, which is authoritative.
import { titleFromMessage } from '../../../app/contract/api/chats.js';
import { emptyReply, type ReplyView } from '../logic/reply.js';
import { chatAfterDelete, reusableChat } from '../logic/chat-list.js';
import { checkSampling, DEFAULT_SAMPLING_FORM, samplingProblem, thinkingFormOf, type SamplingForm } from '../logic/sampling.js';
import { attachProblem, fileImageType, imageRefs, toBase64 } from '../logic/images.js';
import type { ChatSampling } from '../api-types.js';
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
    reply = { ...reply, stats: event.stats, ...(event.thinking ? { thinking: event.thinking } : {}) };
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
    set({
      streaming: { chatId, messageId },
      selectedReplyId: null,
      live: known ? live : { ...live, [messageId]: emptyReply(chatId, messageId) },
    });
  };

  /** the sampling form as the contract takes it, or null (the notice names every bad field) */
  const sampling = (title: string): Partial<ChatSampling> | null => {
    const checked = checkSampling(get().sampling);
    if (checked.ok) return checked.sampling;
    get().fail(title, { code: 'bad-input', message: samplingProblem(checked.errors) });
    return null;
  };

  const noModel = (title: string): boolean => {
    if (get().engine?.model) return false;
    get().fail(title, { code: 'bad-input', message: 'No model is loaded: pick one under Model and press Load.' });
    return true;
  };

  return {
    chats: [],
    chatId: null,
    chat: null,
    live: {},
    streaming: null,
    selectedReplyId: null,
    systemPrompt: '',
    sampling: { ...DEFAULT_SAMPLING_FORM },

    setSamplingField(field: keyof SamplingForm, value: string) {
      set({ sampling: { ...get().sampling, [field]: value } });
    },

    setSystemPrompt(text) {
      set({ systemPrompt: text });
    },

    selectReply(id) {
      set({ selectedReplyId: id });
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
      // the thinking switch and budget show what the chat (else the active profile) asks for
      const profile = get().profiles.find((p) => p.id === get().activeProfileId);
      if (!api || id === null) {
        set({
          chatId: null,
          chat: null,
          systemPrompt: '',
          selectedReplyId: null,
          sampling: { ...get().sampling, ...thinkingFormOf(null, profile) },
        });
        return;
      }
      try {
        const chat = await api.chats.get({ chatId: id });
        set({
          chatId: id,
          chat,
          systemPrompt: chat.systemPrompt ?? '',
          selectedReplyId: null,
          drawer: null,
          sampling: { ...get().sampling, ...thinkingFormOf(chat, profile) },
        });
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
      // an empty New chat is reused, never duplicated
      const empty = reusableChat(get().chats, get().chatId);
      if (empty) {
        if (empty.id !== get().chatId) await get().openChat(empty.id);
        return;
      }
      try {
        const chat = await api.chats.create({});
        set({ chatId: chat.id, chat, systemPrompt: '', selectedReplyId: null });
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
        const next = get().chatId === id ? chatAfterDelete(get().chats, id) : undefined;
        await api.chats.delete({ chatId: id });
        await get().refreshChats();
        // another chat opens in its place (none when it was the last)
        if (next !== undefined) await get().openChat(next && get().chats.some((c) => c.id === next) ? next : (get().chats[0]?.id ?? null));
      } catch (error) {
        get().fail('Deleting the chat', error);
      }
    },

    async attachImage(file, pending) {
      const { api } = get();
      if (!api) return null;
      const problem = attachProblem(file.name || 'the image', file.size, pending);
      if (problem) {
        get().fail('Attaching an image', { code: 'bad-input', message: problem });
        return null;
      }
      try {
        const bytes = new Uint8Array(await file.arrayBuffer());
        const checked = fileImageType(file.name || 'the image', bytes.subarray(0, 16));
        if ('problem' in checked) {
          get().fail('Attaching an image', { code: 'unsupported', message: checked.problem });
          return null;
        }
        const data = toBase64(bytes);
        const image = await api.chats.addImage({ data, ...(file.name ? { name: file.name.slice(0, 255) } : {}) });
        return { image, src: `data:${image.type};base64,${data}` };
      } catch (error) {
        get().fail('Attaching an image', error);
        return null;
      }
    },

    async send(content, images = []) {
      const { api } = get();
      if (!api || (content.trim() === '' && images.length === 0)) return false;
      if (noModel('Sending')) return false;
      const checked = sampling('Sending');
      if (!checked) return false;
      let created: string | null = null;
      try {
        let chatId = get().chatId;
        if (!chatId) {
          const chat = await api.chats.create({ title: titleFromMessage(content.trim() || (images[0]?.name ?? 'Image')) });
          chatId = created = chat.id;
          set({ chatId, chat });
        }
        const systemPrompt = get().systemPrompt.trim();
        const started = await api.chats.send({
          chatId,
          content,
          ...(images.length > 0 ? { images: imageRefs(images) } : {}),
          systemPrompt: systemPrompt === '' ? null : systemPrompt,
          sampling: checked,
        });
        set({ notice: null });
        startReply(chatId, started.assistantMessageId);
        await Promise.all([get().refreshChat(), get().refreshChats()]);
        return true;
      } catch (error) {
        get().fail('Sending', error);
        // a reply that cannot start leaves no empty chat behind
        if (created) {
          await api.chats.delete({ chatId: created }).catch(() => {});
          if (get().chatId === created) set({ chatId: null, chat: null });
          await get().refreshChats();
        }
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
      if (noModel('Regenerating')) return;
      const checked = sampling('Regenerating');
      if (!checked) return;
      try {
        const started = await api.chats.regenerate({ chatId, sampling: checked });
        set({ notice: null });
        startReply(chatId, started.assistantMessageId);
        await get().refreshChat();
      } catch (error) {
        get().fail('Regenerating', error);
      }
    },

    async editAndContinue(messageId, content, images) {
      const { api, chatId } = get();
      if (!api || !chatId || (content.trim() === '' && images.length === 0)) return false;
      if (noModel('Editing the message')) return false;
      const checked = sampling('Editing the message');
      if (!checked) return false;
      try {
        const started = await api.chats.editAndContinue({
          chatId,
          messageId,
          content,
          images: imageRefs(images),
          sampling: checked,
        });
        set({ notice: null });
        startReply(chatId, started.assistantMessageId);
        await get().refreshChat();
        return true;
      } catch (error) {
        get().fail('Editing the message', error);
        return false;
      }
    },

    async switchBranch(messageId, to) {
      const { api, chatId } = get();
      if (!api || !chatId) return;
      try {
        const chat = await api.chats.switchBranch({ chatId, messageId, to });
        if (get().chatId === chatId) set({ chat, selectedReplyId: null });
        void get().refreshChats();
      } catch (error) {
        get().fail('Showing another version', error);
      }
    },

    async forkChat(messageId) {
      const { api, chatId } = get();
      if (!api || !chatId) return;
      try {
        const chat = await api.chats.fork({ chatId, messageId });
        set({ chatId: chat.id, chat, systemPrompt: chat.systemPrompt ?? '', selectedReplyId: null, notice: null });
        await get().refreshChats();
      } catch (error) {
        get().fail('Forking the chat', error);
      }
    },

    applyLive(events) {
      if (events.length === 0) return;
      const last = events[events.length - 1]!;
      const live = applyLiveEvents(get().live, events);
      const streaming =
        get().streaming ?? (live[last.messageId]?.status === 'streaming' ? { chatId: last.chatId, messageId: last.messageId } : null);
      set({ live, streaming });
    },

    async finishReply(chatId, messageId, outcome) {
      const live = get().live;
      const reply = live[messageId] ?? emptyReply(chatId, messageId);
      const ended: ReplyView =
        outcome.kind === 'done'
          ? {
              ...reply,
              status: outcome.stopReason === 'cancelled' ? 'stopped' : 'done',
              digest: outcome.digest,
              stats: outcome.stats,
              stopReason: outcome.stopReason,
            }
          : { ...reply, status: outcome.error.code === 'cancelled' ? 'stopped' : 'error', error: outcome.error };
      const streaming = get().streaming?.messageId === messageId ? null : get().streaming;
      set({ live: { ...live, [messageId]: ended }, streaming });
      if (get().abPending?.chatId === chatId) set({ abPending: null });
      if (outcome.kind === 'error' && outcome.error.code !== 'cancelled') get().fail('The reply', outcome.error);

      const { api } = get();
      if (!api) return;
      try {
        const chat = await api.chats.get({ chatId });
        if (get().chatId === chatId) set({ chat });
      } catch {
        // the chat was deleted meanwhile: nothing to show
      }
      void get().refreshChats();
    },
  };
};
