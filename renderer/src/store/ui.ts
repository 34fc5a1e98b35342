// The UI state: the connection, the notice where the user is looking, the theme and panels, and
// the A/B against the autoregressive control (its result is read from the chat: logic/ab.ts).
import { abSide } from '../logic/ab.js';
import { connectionLost, describeError } from '../logic/advice.js';
import { parseTheme, type ThemeChoice } from '../logic/theme.js';
import type { AssistantMessage } from '../api-types.js';
import type { UiSlice, Slice } from './types.js';

export const AUTOREGRESSIVE_PROFILE_ID = 'autoregressive';
const THEME_KEY = 'power.theme';

function storedTheme(): ThemeChoice {
  try {
    return parseTheme(globalThis.localStorage?.getItem(THEME_KEY));
  } catch {
    return 'system';
  }
}

export const createUiSlice: Slice<UiSlice> = (set, get) => ({
  api: null,
  shell: 'browser',
  connected: false,
  notice: null,
  view: 'chat',
  showOrigins: false,
  theme: storedTheme(),
  drawer: null,
  modelsOpen: false,
  abPending: null,

  setApi(api, shell = 'browser') {
    set({ api, shell, connected: true });
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

  setTheme(theme) {
    try {
      globalThis.localStorage?.setItem(THEME_KEY, theme);
    } catch {
      // a browser that keeps nothing still switches the theme for this page
    }
    set({ theme });
  },

  toggleDrawer(drawer) {
    set({ drawer: get().drawer === drawer ? null : drawer });
  },

  setModelsOpen(open) {
    set({ modelsOpen: open });
    if (open) {
      void get().refreshDownloads();
      void get().refreshDevices();
    }
  },

  async runAb() {
    const { api, chat, chatId } = get();
    if (!api || !chat || !chatId) return;
    const replies = chat.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
    const last = replies[replies.length - 1];
    if (!last || last.status !== 'done' || !last.digest) {
      get().fail('A/B', { code: 'bad-input', message: 'The A/B re-runs the last prompt: it needs a completed reply first.' });
      return;
    }
    if (last.strategy === 'none') {
      get().fail('A/B', {
        code: 'bad-input',
        message:
          'The last reply already ran on the autoregressive control: choose a speculative profile and draft method, send, then run the A/B.',
      });
      return;
    }
    set({ abPending: { chatId, speculative: abSide(last) }, notice: null, selectedReplyId: null });
    try {
      // the same prompt, context and sampling (the seed that was used), on the control
      const { seed, ...rest } = last.sampling;
      const started = await api.chats.regenerate({
        chatId,
        profileId: AUTOREGRESSIVE_PROFILE_ID,
        sampling: { ...rest, ...(seed === null ? {} : { seed }) },
      });
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
