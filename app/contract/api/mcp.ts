// mcp: the MCP servers whose tools a chat can offer its model. A server is a command Power starts
// (stdio) or a streamable HTTP endpoint on this machine (loopback only); the configuration lives in
// the data folder and is imported from the `mcp.json` that LM Studio and Claude Desktop read. Which
// servers a chat uses, and the user's answer to each tool call, are here too: nothing runs
// without the user's say.
import { z } from 'zod';

import { concern } from './describe.js';
import { Id, None, Ok } from './common.js';

/** a server's name: what the chat shows and what mcp.json keys it by */
export const McpServerName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: 'a server name is letters, digits, "_", "." and "-" (starting with a letter or digit)' });

/** whether a URL's host is this machine (127.0.0.0/8, ::1, localhost) */
export function isLoopbackUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export const McpStdio = z.object({
  kind: z.literal('stdio'),
  /** the program (a path, or a name found on PATH) */
  command: z.string().min(1).max(4096),
  args: z.array(z.string().max(65536)).max(256).default([]),
  /** added to the few variables every server inherits (PATH, HOME, …) */
  env: z.record(z.string(), z.string().max(65536)).default({}),
  /** the working folder (absent: Power's) */
  cwd: z.string().min(1).max(4096).optional(),
});
export type McpStdio = z.infer<typeof McpStdio>;

export const McpHttp = z.object({
  kind: z.literal('http'),
  url: z
    .string()
    .max(4096)
    .refine((u) => /^https?:\/\//i.test(u) && isLoopbackUrl(u), {
      error: 'an HTTP server must be on this machine: http://127.0.0.1:PORT/…, http://localhost:PORT/… or http://[::1]:PORT/…',
    }),
  headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
});
export type McpHttp = z.infer<typeof McpHttp>;

export const McpTransport = z.discriminatedUnion('kind', [McpStdio, McpHttp]);
export type McpTransport = z.infer<typeof McpTransport>;

/** one configured server, as stored */
export const McpServerConfig = z.object({
  name: McpServerName,
  transport: McpTransport,
  /** tools the user allowed for every call ("always for this tool") */
  alwaysAllow: z.array(z.string().min(1).max(256)).max(1000).default([]),
  /** the tools a chat offers its model (absent: all the server lists); fewer tools, a shorter prompt */
  enabledTools: z.array(z.string().min(1).max(256)).max(1000).optional(),
});
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const McpTool = z.object({
  name: z.string(),
  description: z.string().optional(),
  /** the JSON schema of its arguments, as the server gave it */
  inputSchema: z.record(z.string(), z.unknown()),
});
export type McpTool = z.infer<typeof McpTool>;

/**
 * stopped: not started yet (servers start when a chat needs them, or on test-connect); ready:
 * connected, its tools listed; error: the last start or call failed (`error` says why; the next
 * use starts it again)
 */
export const McpServerStatus = z.enum(['stopped', 'starting', 'ready', 'error']);

export const McpServerEntry = McpServerConfig.extend({
  status: McpServerStatus,
  error: z.string().optional(),
  /** the tools it listed the last time it was ready */
  tools: z.array(McpTool),
});
export type McpServerEntry = z.infer<typeof McpServerEntry>;

export const McpServerList = z.object({ servers: z.array(McpServerEntry) });

/** the answer to a tool call: run it once, run it and every later call of this tool, or refuse it */
export const ToolCallDecision = z.enum(['once', 'always', 'deny']);
export type ToolCallDecision = z.infer<typeof ToolCallDecision>;

export const mcp = concern({
  methods: {
    list: { input: None, output: McpServerList },
    /** a new server (refused when the name is taken); in `power serve`, the page cannot add a stdio server */
    add: { input: z.object({ server: McpServerConfig }), output: McpServerEntry },
    /** replaces a server's configuration (its connection restarts); in `power serve`, the page cannot change a stdio command */
    update: { input: z.object({ name: McpServerName, server: McpServerConfig }), output: McpServerEntry },
    /** removes a server (chats that used it no longer offer its tools) */
    remove: { input: z.object({ name: McpServerName }), output: Ok },
    /**
     * adds the servers of an `mcp.json` ({"mcpServers": {name: {command, args, env, cwd} | {url, headers}}});
     * a name already configured is skipped with the reason unless `replace`
     */
    importConfig: {
      input: z.object({ text: z.string().max(1_000_000), replace: z.boolean().default(false) }),
      output: z.object({ added: z.array(McpServerName), skipped: z.array(z.object({ name: z.string(), reason: z.string() })) }),
    },
    /** starts (or restarts) the server and lists its tools; the entry says how it went */
    testConnect: { input: z.object({ name: McpServerName }), output: McpServerEntry },
    /** which servers' tools a chat offers its model (an empty list: none) */
    setChatServers: { input: z.object({ chatId: Id, servers: z.array(McpServerName).max(100) }), output: Ok },
    /**
     * the user's answer to a tool call the model made: once all calls of the reply are answered,
     * the approved ones run and the reply goes on with their results (or the refusals)
     */
    answerToolCall: {
      input: z.object({ chatId: Id, messageId: Id, callId: z.string().min(1).max(200), decision: ToolCallDecision }),
      output: Ok,
    },
  },
  events: {
    onChanged: McpServerList,
  },
});

/**
 * A tool call the model made in a reply, and what became of it: pending (waiting for the user),
 * running, done (`result`: what the tool returned), denied (the model is told so), error
 * (`error`: why it failed: a server that did not start, crashed, timed out or did not speak MCP).
 */
export const ChatToolCall = z.object({
  id: z.string().min(1).max(200),
  /** the function name the model called */
  name: z.string(),
  /** the server and its tool that name stands for (null: the model named no tool it was offered) */
  server: McpServerName.nullable(),
  tool: z.string().nullable(),
  /** JSON text, as the model wrote it */
  arguments: z.string(),
  state: z.enum(['pending', 'running', 'done', 'denied', 'error']),
  /** how it was approved: once, always (the tool runs without asking from then on) */
  approval: z.enum(['once', 'always']).optional(),
  result: z.string().optional(),
  error: z.string().optional(),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;
