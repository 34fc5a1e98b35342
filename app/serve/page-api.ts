// What the page of `power serve` may do with MCP servers. The page holds the server's token (it
// is how it got in), so the token alone cannot mean "the user configured this": whoever holds
// the address could otherwise make Power start any program. Over /ws a stdio server (a command
// Power would run) can therefore be neither added, changed nor imported: that is for the desktop
// app and `power mcp`, which run as the user. The page sees the configuration, tests servers,
// removes them, turns servers on for a chat and answers tool calls; loopback HTTP servers,
// which start nothing, it may add.
import { PowerError } from '../contract/api/errors.js';
import { McpServerConfig } from '../contract/api/mcp.js';
import { parseMcpJson } from '../mcp/config.js';
import type { ServiceImplementation } from '../service/types.js';

const REFUSED =
  'a stdio MCP server (a command Power would start) can only be added or changed in the desktop app or with `power mcp add NAME -- COMMAND` on the machine that runs power serve, not from a served page';

/** Refuses a configuration that would start a command the user did not set up. */
function noCommand(server: McpServerConfig, before: McpServerConfig | undefined): void {
  if (server.transport.kind !== 'stdio') return;
  // a stdio server the user configured may be renamed or have its "always allowed" tools changed, not its command
  if (before?.transport.kind === 'stdio' && JSON.stringify(before.transport) === JSON.stringify(server.transport)) return;
  throw new PowerError('bad-input', REFUSED);
}

/** The service as the served page gets it over /ws. */
export function servedPageApi(implementation: ServiceImplementation): ServiceImplementation {
  const mcp = implementation.mcp;
  /** the transport a server has now, as the configuration says */
  const configured = async (name: string): Promise<McpServerConfig | undefined> => {
    const entry = (await mcp.list({})).servers.find((s) => s.name === name);
    return entry ? McpServerConfig.parse(entry) : undefined;
  };
  return {
    ...implementation,
    mcp: {
      ...mcp,
      add: async (p) => {
        noCommand(p.server, undefined);
        return mcp.add(p);
      },
      update: async (p) => {
        noCommand(p.server, await configured(p.name));
        return mcp.update(p);
      },
      importConfig: async (p) => {
        if (parseMcpJson(p.text).servers.some((s) => s.transport.kind === 'stdio')) throw new PowerError('bad-input', REFUSED);
        return mcp.importConfig(p);
      },
    },
  };
}
