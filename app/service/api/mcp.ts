// The mcp concern: the configured MCP servers (data folder's mcp-servers.json), their status and
// tools (the hub), the import of an mcp.json, which servers a chat uses, and the answer to a
// tool call (app/service/chat-tools.ts). `power mcp` opens the configuration half alone
// (openMcpServers): the same writer of the file, without the chats and the engine.
import { mkdir } from 'node:fs/promises';

import { PowerError } from '../../contract/api/errors.js';
import type { McpServerConfig, McpServerEntry } from '../../contract/api/mcp.js';
import { McpHub } from '../../mcp/hub.js';
import { parseMcpJson } from '../../mcp/config.js';
import type { ChatStore } from '../chat-store.js';
import type { ChatTools } from '../chat-tools.js';
import type { Emitter, ServiceEvents } from '../events.js';
import { McpConfigFile } from '../mcp-config.js';
import type { ServiceImplementation } from '../types.js';

type McpConcern = ServiceImplementation['mcp'];
/** the methods on the server list itself, which need no chat */
export type McpServersApi = Pick<McpConcern, 'list' | 'add' | 'update' | 'remove' | 'importConfig' | 'testConnect'>;

export interface McpApiDeps {
  hub: McpHub;
  config: McpConfigFile;
  store: ChatStore;
  tools: ChatTools;
  events: ServiceEvents;
  /** the list as it changes (the hub tells it of each status change) */
  changed: Emitter<{ servers: McpServerEntry[] }>;
}

export function mcpEntries(hub: McpHub, config: McpConfigFile): McpServerEntry[] {
  return config.data.servers.map((s) => ({ ...structuredClone(s), ...hub.state(s.name) }));
}

/** The configured servers: their list, changes and tests, each change saved and handed to the hub. */
function serversApi(hub: McpHub, config: McpConfigFile): McpServersApi {
  const entry = (name: string): McpServerEntry => mcpEntries(hub, config).find((e) => e.name === name)!;
  /** saves the list, hands it to the hub and tells the listeners */
  const changed = async (): Promise<void> => {
    await config.save();
    hub.configure(config.data.servers);
  };
  const put = (server: McpServerConfig, replacing: string | null): void => {
    const servers = config.data.servers;
    const clash = servers.findIndex((s) => s.name === server.name);
    if (replacing === null) {
      if (clash >= 0) throw new PowerError('bad-input', `an MCP server named "${server.name}" exists already`);
      servers.push(structuredClone(server));
      return;
    }
    const at = servers.findIndex((s) => s.name === replacing);
    if (at < 0) throw new PowerError('not-found', `no MCP server named "${replacing}"`);
    if (clash >= 0 && clash !== at) throw new PowerError('bad-input', `an MCP server named "${server.name}" exists already`);
    servers[at] = structuredClone(server);
  };
  return {
    list: async () => ({ servers: mcpEntries(hub, config) }),
    add: async (p) => {
      put(p.server, null);
      await changed();
      return entry(p.server.name);
    },
    update: async (p) => {
      put(p.server, p.name);
      await changed();
      return entry(p.server.name);
    },
    remove: async (p) => {
      config.get(p.name);
      config.data.servers = config.data.servers.filter((s) => s.name !== p.name);
      await changed();
      return { ok: true as const };
    },
    importConfig: async (p) => {
      const { servers, skipped } = parseMcpJson(p.text);
      const added: string[] = [];
      for (const s of servers) {
        const exists = config.data.servers.some((c) => c.name === s.name);
        if (exists && !p.replace) {
          skipped.push({ name: s.name, reason: 'a server of that name is configured already (import with replace to overwrite it)' });
          continue;
        }
        const alwaysAllow = config.data.servers.find((c) => c.name === s.name)?.alwaysAllow ?? [];
        put({ name: s.name, transport: s.transport, alwaysAllow }, exists ? s.name : null);
        added.push(s.name);
      }
      if (added.length > 0) await changed();
      return { added, skipped };
    },
    testConnect: async (p) => {
      config.get(p.name);
      await hub.restart(p.name);
      return entry(p.name);
    },
  };
}

export function mcpApi(deps: McpApiDeps): ServiceImplementation['mcp'] {
  const { hub, config, store, tools, events } = deps;
  return {
    ...serversApi(hub, config),
    setChatServers: async (p) => {
      const chat = store.get(p.chatId);
      for (const name of p.servers) config.get(name);
      if (p.servers.length > 0) chat.mcpServers = [...new Set(p.servers)];
      else delete chat.mcpServers;
      chat.updatedAt = new Date().toISOString();
      await store.save(chat);
      events.chatChanged.emit({ chatId: chat.id, change: 'updated' });
      return { ok: true as const };
    },
    answerToolCall: async (p) => {
      await tools.answer(p.chatId, p.messageId, p.callId, p.decision);
      return { ok: true as const };
    },
    onChanged: deps.changed.on,
  };
}

/**
 * The server list of a data folder without the rest of the service (no chats, no library, no
 * engine): what `power mcp` works on. close() ends every server it started (test-connect).
 */
export async function openMcpServers(
  dataDir: string,
  log: (line: string) => void,
): Promise<{ api: McpServersApi; close: () => Promise<void> }> {
  // a first command on a fresh machine makes the folder, as the service does
  await mkdir(dataDir, { recursive: true });
  const config = await McpConfigFile.open(dataDir, log);
  const hub = new McpHub();
  hub.configure(config.data.servers);
  return { api: serversApi(hub, config), close: () => hub.close() };
}
