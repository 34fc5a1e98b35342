// The session: the connection, the notice where the user is looking, the report of every reply
// completed in this window, and the A/B against the autoregressive control.
import { compareAb, type AbSide } from '../logic/ab.js';
import { connectionLost, describeError } from '../logic/advice.js';
import type { AssistantMessage } from '../api-types.js';
import type { SessionSlice, Slice, Store } from './types.js';

type Get = () => Store;
type Set = (partial: Partial<Store>) => void;

export const AUTOREGRESSIVE_PROFILE_ID = 'autoregressive';

function side(message: AssistantMessage): AbSide {
  return {
    messageId: message.id,
    profile: message.profile?.name ?? 'active profile',
    strategy: message.strategy,
    k: message.k,
    s: message.s,
    digest: message.digest,
    stats: message.stats,
    tokens: message.tokens.length,
  };
}

/** Adds a finished reply to the report; completes the A/B whose control it is. */
export function recordReport(get: Get, set: Set, chatTitle: string, chatId: string, message: AssistantMessage): void {
  if (get().report.some((e) => e.messageId === message.id)) return;
  const entry = {
    at: new Date().toISOString(),
    chatId,
    chatTitle,
    messageId: message.id,
    model: message.model.name,
    draft: message.draft?.name ?? null,
    profile: message.profile?.name ?? null,
    strategy: message.strategy,
    k: message.k,
    s: message.s,
    tokens: message.tokens.length,
    stopReason: message.stopReason,
    digest: message.digest,
    stats: message.stats,
  };
  set({ report: [...get().report, entry] });
  const ab = get().abPending;
  if (ab && ab.controlMessageId === message.id) {
    set({ abRuns: [...get().abRuns, compareAb(ab.speculative, side(message))], abPending: null });
  }
}

function lastAssistant(messages: readonly AssistantMessage[] | undefined): AssistantMessage | undefined {
  return messages?.[messages.length - 1];
}

export const createSessionSlice: Slice<SessionSlice> = (set, get) => ({
  api: null,
  connected: false,
  notice: null,
  view: 'chat',
  showOrigins: false,
  report: [],
  abRuns: [],
  abPending: null,

  setApi(api) {
    set({ api, connected: true });
  },

  setDisconnected() {
    set({ connected: false, notice: connectionLost(), streaming: null });
  },

  showNotice(notice) {
    set({ notice });
  },

  fail(title, error) {
    set({ notice: describeError(title, error) });
  },

  setView(view) {
    set({ view });
  },

  setShowOrigins(on) {
    set({ showOrigins: on });
  },

  async runAb() {
    const { api, chat, chatId } = get();
    if (!api || !chat || !chatId) return;
    const replies = chat.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
    const last = lastAssistant(replies);
    if (!last || last.status !== 'done' || !last.digest) {
      get().fail('A/B', { code: 'bad-input', message: 'The A/B re-runs the last prompt: it needs a completed reply first.' });
      return;
    }
    if (last.strategy === 'none') {
      get().fail('A/B', { code: 'bad-input', message: 'The last reply already ran on the autoregressive control: choose a speculative profile and draft method, send, then run the A/B.' });
      return;
    }
    set({ abPending: { chatId, speculative: side(last), controlMessageId: null }, notice: null });
    try {
      // the same prompt, context and sampling (the seed that was used), on the control
      const { seed, ...rest } = last.sampling;
      const started = await api.chats.regenerate({
        chatId,
        profileId: AUTOREGRESSIVE_PROFILE_ID,
        sampling: { ...rest, ...(seed === null ? {} : { seed }) },
      });
      const pending = get().abPending;
      if (pending) set({ abPending: { ...pending, controlMessageId: started.assistantMessageId } });
      // the control may have finished before the call answered
      const done = get().report.find((e) => e.messageId === started.assistantMessageId);
      if (done && pending) {
        const message = (get().chat?.messages ?? []).find((m): m is AssistantMessage => m.role === 'assistant' && m.id === done.messageId);
        if (message) set({ abRuns: [...get().abRuns, compareAb(pending.speculative, side(message))], abPending: null });
      }
      const live = get().live;
      if (!live[started.assistantMessageId] || live[started.assistantMessageId]!.status === 'streaming') {
        set({ streaming: { chatId, messageId: started.assistantMessageId } });
      }
      await get().refreshChat();
    } catch (error) {
      set({ abPending: null });
      get().fail('A/B', error);
    }
  },
});
