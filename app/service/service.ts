// The one service behind every front door (CLI, `power serve`, the Electron shell): it
// implements PowerApi over the model library, the supervised engine, profiles and chats, one
// concern per file in api/ as the contract has them. An input is checked once against the
// contract's schema: by a transport's server (Electron IPC, /ws: they serve `implementation`)
// or, for callers in this process, by the in-process adapter (app/contract/channel/in-process.ts). The engine's one reply slot (reply-slot.ts) orders chat replies, OpenAI
// completions and loads; every generation runs through request.ts.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { powerApi } from '../contract/api/index.js';
import { inProcess } from '../contract/channel/index.js';
import { DownloadManager } from '../models/downloads.js';
import { chatsApi } from './api/chats.js';
import { engineApi } from './api/engine.js';
import { generationApi } from './api/generation.js';
import { modelsApi } from './api/models.js';
import { profilesApi } from './api/profiles.js';
import { ChatReplies } from './chat-replies.js';
import { exportChatReport } from './chat-report.js';
import { ChatStore } from './chat-store.js';
import { createCompletions } from './completions.js';
import { offerDefaultModel } from './default-model.js';
import { EngineSupervisor } from './engine-supervisor.js';
import { ServiceEvents } from './events.js';
import { ModelLibrary } from './library.js';
import { ProfileStore } from './profiles.js';
import { ReplySlot } from './reply-slot.js';
import { ServiceMetrics } from './metrics.js';
import { SettingsFile } from './settings.js';
import { SuffixStoreSetting } from './suffix-store.js';
import { mcpApi, mcpEntries } from './api/mcp.js';
import { ChatTools } from './chat-tools.js';
import { McpConfigFile } from './mcp-config.js';
import { Emitter } from './events.js';
import { McpHub } from '../mcp/hub.js';
import type { McpServerEntry } from '../contract/api/mcp.js';
import type { PowerService, ServiceImplementation, ServiceOptions } from './types.js';

export async function createPowerService(options: ServiceOptions): Promise<PowerService> {
  await mkdir(options.dataDir, { recursive: true });
  const settings = await SettingsFile.open(options.dataDir);
  const library = await ModelLibrary.open(options.dataDir);
  for (const dir of options.modelsDirs ?? []) await library.add(dir);
  const store = await ChatStore.open(options.dataDir);
  const profiles = new ProfileStore(settings);
  const supervisor = new EngineSupervisor(library, options.engine, join(options.dataDir, 'suffix-store'));
  const slot = new ReplySlot();
  const events = new ServiceEvents();
  const metrics = new ServiceMetrics(slot);
  // MCP servers: their configuration, connections, and the tool-call loop of the chats
  const log = (line: string): void => void process.stderr.write(`power: ${line}\n`);
  const mcpConfig = await McpConfigFile.open(options.dataDir, log);
  const mcpChanged = new Emitter<{ servers: McpServerEntry[] }>();
  const hub = new McpHub({ onChange: () => mcpChanged.emit({ servers: mcpEntries(hub, mcpConfig) }) });
  hub.configure(mcpConfig.data.servers);
  // a change of another process on this data folder (power mcp) reaches the hub and the listeners
  mcpConfig.watch(() => hub.configure(mcpConfig.data.servers));
  let replies: ChatReplies | null = null;
  const tools = new ChatTools({ hub, config: mcpConfig, store, events, replies: () => replies!, log });
  replies = new ChatReplies({ supervisor, library, profiles, store, slot, events, metrics, tools });
  let closed = false;

  // a finished download joins the library like a file the user adds
  const downloads = new DownloadManager({
    dir: join(options.dataDir, 'models'),
    addToLibrary: async (path) => {
      const { added, skipped } = await library.add(path);
      if (added[0]) return added[0].id;
      throw new Error(skipped[0]?.reason ?? 'not added');
    },
  });

  const implementation: ServiceImplementation = {
    downloads: downloads.api,
    models: modelsApi(library, supervisor),
    engine: engineApi({ library, supervisor, settings, slot, suffixStore: new SuffixStoreSetting(supervisor, settings) }),
    profiles: profilesApi(profiles, supervisor),
    chats: chatsApi(store, replies, events),
    reports: {
      exportChat: async (p) => exportChatReport(structuredClone(store.get(p.chatId)), library, p.format),
    },
    generation: generationApi(replies, events),
    mcp: mcpApi({ hub, config: mcpConfig, store, tools, events, changed: mcpChanged }),
  };

  if (options.defaultModel) {
    const { path, log } = options.defaultModel;
    // a default that cannot be offered leaves the service as it would be without one
    await offerDefaultModel(path, { library, settings, engine: implementation.engine }).then(log, (error: unknown) =>
      log(`default model ${path} not offered: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  return {
    ...inProcess(powerApi, implementation),
    implementation,
    enginePid: () => supervisor.pid(),
    holdRepliesForTest: (afterRound) => supervisor.holdRepliesForTest(afterRound),
    // stateless completions (the OpenAI API of power serve) wait their turn for the reply slot
    completions: createCompletions({ supervisor, library, profiles, slot, metrics }),
    metrics,
    close: async () => {
      if (closed) return;
      closed = true;
      await downloads.close();
      // every MCP server Power started ends with it
      mcpConfig.close();
      await hub.close();
      await slot.close();
      await supervisor.close();
      await library.close();
      await settings.save();
    },
  };
}
