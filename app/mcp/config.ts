// The MCP servers the user configured (what the data folder's mcp-servers.json holds), and the
// import of the `mcp.json` that LM Studio and Claude Desktop read:
// {"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"url", "headers"}}}.
import { z } from 'zod';

import { PowerError } from '../contract/api/errors.js';
import { McpServerConfig, McpServerName, McpTransport, type McpTransport as Transport } from '../contract/api/mcp.js';
import { describeIssues } from '../contract/channel/issues.js';

export const McpConfig = z.object({ servers: z.array(McpServerConfig).default([]) });
export type McpConfig = z.infer<typeof McpConfig>;

/** one entry of an mcp.json: a command (stdio) or a URL (streamable HTTP); other keys (LM Studio's, Claude's) are ignored */
const ImportedServer = z.union([
  z.object({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
  }),
  z.object({ url: z.string().min(1), headers: z.record(z.string(), z.string()).optional() }),
]);

const ImportedFile = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

/**
 * The servers of an mcp.json text. A file that is not JSON or has no `mcpServers` object is
 * refused whole; an entry that is neither a command nor a loopback URL is skipped with its reason.
 */
export function parseMcpJson(text: string): {
  servers: { name: string; transport: Transport }[];
  skipped: { name: string; reason: string }[];
} {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new PowerError('bad-input', `mcp.json is not JSON: ${(error as Error).message}`);
  }
  const file = ImportedFile.safeParse(raw);
  if (!file.success) throw new PowerError('bad-input', 'mcp.json needs an "mcpServers" object: {"mcpServers": {"name": {"command": …}}}');
  const servers: { name: string; transport: Transport }[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const [name, value] of Object.entries(file.data.mcpServers)) {
    const named = McpServerName.safeParse(name);
    if (!named.success) {
      skipped.push({ name, reason: describeIssues(named.error) });
      continue;
    }
    const entry = ImportedServer.safeParse(value);
    if (!entry.success) {
      skipped.push({ name, reason: 'an entry needs "command" (a program to start) or "url" (a streamable HTTP endpoint)' });
      continue;
    }
    const e = entry.data;
    const transport = McpTransport.safeParse(
      'command' in e
        ? { kind: 'stdio', command: e.command, args: e.args ?? [], env: e.env ?? {}, ...(e.cwd ? { cwd: e.cwd } : {}) }
        : { kind: 'http', url: e.url, headers: e.headers ?? {} },
    );
    if (!transport.success) {
      skipped.push({ name, reason: describeIssues(transport.error) });
      continue;
    }
    servers.push({ name, transport: transport.data });
  }
  return { servers, skipped };
}
