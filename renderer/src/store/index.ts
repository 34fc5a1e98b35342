// One store composed from slices; `wireEvents` feeds it from PowerApi's event streams.
import { createStore, type StoreApi } from 'zustand/vanilla';

import { createFrameBatcher, type Scheduler } from '../logic/frame-batch.js';
import type { PowerApi } from '../api-types.js';
import { createChatsSlice } from './chats.js';
import { createDownloadsSlice } from './downloads.js';
import { createLibrarySlice } from './library.js';
import { createMcpSlice } from './mcp.js';
import { createProfilesSlice } from './profiles.js';
import { createUiSlice } from './ui.js';
import type { LiveEvent, Store } from './types.js';

export type PowerStore = StoreApi<Store>;

export function createPowerStore(): PowerStore {
  return createStore<Store>()((...a) => ({
    ...createUiSlice(...a),
    ...createLibrarySlice(...a),
    ...createDownloadsSlice(...a),
    ...createProfilesSlice(...a),
    ...createChatsSlice(...a),
    ...createMcpSlice(...a),
  }));
}

/**
 * Subscribes the store to every event it shows and reads the initial state. Returns the
 * function that unsubscribes. The batches of rounds are applied once per animation frame.
 */
export async function wireEvents(
  store: PowerStore,
  api: PowerApi,
  schedule?: Scheduler,
  shell: 'electron' | 'browser' = 'browser',
): Promise<() => void> {
  const s = store.getState;
  s().setApi(api, shell);
  const batch = createFrameBatcher<LiveEvent>((events) => s().applyLive(events), schedule);
  const off = [
    api.generation.onRounds((e) => batch.push(e)),
    api.generation.onDone((e) => {
      batch.flush();
      void s().finishReply(e.chatId, e.messageId, { kind: 'done', digest: e.digest, stats: e.stats, stopReason: e.stopReason });
    }),
    api.generation.onError((e) => {
      batch.flush();
      void s().finishReply(e.chatId, e.messageId, { kind: 'error', error: e.error });
    }),
    api.engine.onStateChanged((state) => s().setEngine(state)),
    api.engine.onLoadProgress((e) => s().setLoadProgress(e.role, e.progress)),
    api.models.onLibraryChanged((e) => s().setModels(e.entries)),
    api.downloads.onChanged((e) => s().setDownload(e)),
    api.profiles.onChanged((list) => s().setProfiles(list.profiles, list.activeId)),
    api.mcp.onChanged((list) => s().setMcpServers(list.servers)),
    api.chats.onChanged((e) => {
      void s().refreshChats();
      if (e.chatId !== s().chatId) return;
      if (e.change === 'deleted') store.setState({ chatId: null, chat: null });
      else if (s().streaming?.chatId !== e.chatId) void s().refreshChat();
    }),
  ];

  const [engine, profiles, models, active] = await Promise.all([
    api.engine.state({}),
    api.profiles.list({}),
    api.models.list({}),
    api.generation.active({}),
    s().refreshChats(),
  ]);
  s().setEngine(engine);
  s().setProfiles(profiles.profiles, profiles.activeId);
  if (engine.options) {
    const { modelId, draftMethod } = engine.options;
    const o = engine.options;
    store.setState({
      targetId: modelId,
      method: draftMethod.strategy,
      fallbacks: draftMethod.fallbacks,
      draftId: draftMethod.draftId ?? null,
      gpuLayers: String(o.gpuLayers),
      contextSize: o.contextSize === undefined ? '' : String(o.contextSize),
      threads: o.threads === undefined ? '' : String(o.threads),
      device: o.device,
      flashAttn: o.flashAttn ?? 'auto',
      methodPinned: true,
    });
  }
  s().setModels(models.entries);
  void s().refreshDevices();
  void s().refreshMcp();
  if (active) {
    store.setState({ streaming: active });
    await s().openChat(active.chatId);
  } else {
    const first = s().chats[0];
    if (first) await s().openChat(first.id);
  }
  return () => off.forEach((f) => f());
}
