// MCP servers: the configured list with each server's status and tools (mcp.onChanged keeps it
// current), the Settings view's actions, a chat's servers, and the user's answer to a tool call.
// Each action's outcome stays in `mcpResult` (shown in the view) rather than the page's notice.
import { describeError } from '../logic/advice.js';
import { STDIO_FROM_PAGE } from '../logic/mcp.js';
import type { McpSlice, Slice } from './types.js';

export const createMcpSlice: Slice<McpSlice> = (set, get) => {
  /** runs one action of the view; a failure is its result, in words */
  const act = async (what: string, run: () => Promise<string>): Promise<boolean> => {
    const { api } = get();
    if (!api) return false;
    set({ mcpBusy: true });
    try {
      set({ mcpResult: { text: await run(), failed: false } });
      return true;
    } catch (error) {
      const { message } = describeError(what, error);
      // a served page may not start programs: say where they can be added
      const advice = get().shell === 'browser' && /stdio MCP server/.test(message) ? ` ${STDIO_FROM_PAGE}` : '';
      set({ mcpResult: { text: `${what} failed: ${message}${advice}`, failed: true } });
      return false;
    } finally {
      set({ mcpBusy: false });
    }
  };

  return {
    mcpServers: [],
    mcpOpen: false,
    mcpResult: null,
    mcpImport: null,
    mcpBusy: false,

    setMcpOpen(open) {
      set({ mcpOpen: open, ...(open ? {} : { mcpResult: null, mcpImport: null }) });
      if (open) void get().refreshMcp();
    },

    setMcpServers(servers) {
      set({ mcpServers: servers });
    },

    async refreshMcp() {
      const { api } = get();
      if (!api) return;
      try {
        set({ mcpServers: (await api.mcp.list({})).servers });
      } catch (error) {
        get().fail('Reading the MCP servers', error);
      }
    },

    addMcpServer(server) {
      return act(`Adding ${server.name}`, async () => {
        const entry = await get().api!.mcp.add({ server });
        await get().refreshMcp();
        return `Added ${entry.name}: press Test to start it and list its tools.`;
      });
    },

    async removeMcpServer(name) {
      await act(`Removing ${name}`, async () => {
        await get().api!.mcp.remove({ name });
        await get().refreshMcp();
        return `Removed ${name}.`;
      });
    },

    async testMcpServer(name) {
      await act(`Testing ${name}`, async () => {
        const entry = await get().api!.mcp.testConnect({ name });
        await get().refreshMcp();
        return entry.status === 'ready'
          ? `${name} is connected: ${entry.tools.length} tool${entry.tools.length === 1 ? '' : 's'}.`
          : `${name} did not connect: ${entry.error ?? entry.status}`;
      });
    },

    async setMcpOffered(name, enabledTools) {
      const entry = get().mcpServers.find((s) => s.name === name);
      if (!entry) return;
      const { status: _s, error: _e, tools: _t, enabledTools: _old, ...config } = entry;
      await act(`Changing the tools of ${name}`, async () => {
        await get().api!.mcp.update({ name, server: { ...config, ...(enabledTools ? { enabledTools } : {}) } });
        await get().refreshMcp();
        return `${name} offers ${enabledTools ? `${enabledTools.length} of its tools` : 'all its tools'}.`;
      });
    },

    async forgetAlwaysAllowed(name, tool) {
      const entry = get().mcpServers.find((s) => s.name === name);
      if (!entry) return;
      const { status: _s, error: _e, tools: _t, ...config } = entry;
      await act(`Changing ${name}`, async () => {
        await get().api!.mcp.update({ name, server: { ...config, alwaysAllow: config.alwaysAllow.filter((t) => t !== tool) } });
        await get().refreshMcp();
        return `${tool} of ${name} asks again before each call.`;
      });
    },

    importMcp(text, replace) {
      set({ mcpImport: null });
      return act('Importing the mcp.json', async () => {
        const result = await get().api!.mcp.importConfig({ text, replace });
        set({ mcpImport: result });
        await get().refreshMcp();
        return result.added.length === 0 ? 'Nothing was added.' : `Added ${result.added.join(', ')}.`;
      });
    },

    async setChatMcpServers(servers) {
      const { api } = get();
      if (!api) return;
      try {
        // the servers belong to a chat: an empty page starts one
        if (!get().chatId) await get().newChat();
        const chatId = get().chatId;
        if (!chatId) return;
        await api.mcp.setChatServers({ chatId, servers });
        await get().refreshChat();
      } catch (error) {
        get().fail('Choosing the chat’s MCP servers', error);
      }
    },

    async answerToolCall(messageId, callId, decision) {
      const { api, chatId } = get();
      if (!api || !chatId) return;
      try {
        await api.mcp.answerToolCall({ chatId, messageId, callId, decision });
        await get().refreshChat();
      } catch (error) {
        get().fail('Answering the tool call', error);
      }
    },
  };
};
