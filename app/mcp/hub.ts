// The connections to the configured MCP servers, through the official SDK: a stdio server is a
// child process Power starts (StdioClientTransport), an HTTP one a streamable HTTP endpoint on
// this machine. A server starts when it is first needed and is listed once; a call has a time
// limit and an AbortSignal. Every failure becomes an McpServerError that names the server and
// says what happened: it did not start, it exited, it did not answer in time (it is stopped
// then), or it wrote something that is not MCP. A server that failed starts again on its next
// use; close() ends every child process.
import type { ChildProcess } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

import { PowerError } from '../contract/api/errors.js';
import { isLoopbackUrl, type McpServerConfig, type McpTool, type McpTransport } from '../contract/api/mcp.js';

/** what a server that ended left on stderr, at most this much (its last lines) */
const STDERR_TAIL = 2000;
/** a tool's result longer than this is cut for the conversation */
export const RESULT_MAX_CHARS = 64 * 1024;

export type McpFailure = 'start' | 'exit' | 'timeout' | 'protocol' | 'tool';

/** A server that failed: `failure` says how; the message names the server. */
export class McpServerError extends PowerError {
  constructor(
    readonly server: string,
    readonly failure: McpFailure,
    message: string,
  ) {
    super(failure === 'start' ? 'bad-input' : 'internal', `MCP server "${server}" ${message}`);
    this.name = 'McpServerError';
  }
}

export interface HubOptions {
  /** how long a server may take to start and answer the handshake and tools/list (ms) */
  startTimeoutMs?: number;
  /** a tool call's limit unless the call gives one (ms) */
  callTimeoutMs?: number;
  /** told when a server's status or tools change */
  onChange?: () => void;
}

export interface ServerState {
  status: 'stopped' | 'starting' | 'ready' | 'error';
  error?: string;
  tools: McpTool[];
}

/** one live connection (a started process, or an HTTP session) */
class Connection {
  readonly client = new Client({ name: 'power', version: '1' }, { capabilities: {} });
  readonly transport: Transport;
  stderr = '';
  /** the first thing the server wrote that is not MCP */
  garbage: string | null = null;
  closed = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private readonly stdio: StdioClientTransport | null = null;

  constructor(
    readonly name: string,
    config: McpTransport,
    private readonly onClosed: (c: Connection) => void,
  ) {
    if (config.kind === 'stdio') {
      this.stdio = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: config.env,
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
      });
      this.stdio.stderr?.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      this.transport = this.stdio;
    } else {
      if (!isLoopbackUrl(config.url))
        throw new McpServerError(name, 'start', `is not on this machine (${config.url}): only loopback URLs are allowed`);
      this.transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    this.client.onerror = (error) => {
      // the SDK reports a line that is not JSON-RPC here and drops it
      if (this.garbage === null && (error instanceof SyntaxError || /JSON|parse|invalid/i.test(error.message)))
        this.garbage = error.message;
    };
    this.client.onclose = () => {
      this.closed = true;
      this.onClosed(this);
    };
  }

  pid(): number | null {
    return this.stdio?.pid ?? null;
  }

  /**
   * Starts the handshake. The transport spawns the process synchronously inside it and forgets
   * the process when it closes, so its exit code is taken here, from the process itself.
   */
  connect(timeoutMs: number): Promise<void> {
    const connecting = this.client.connect(this.transport, { timeout: timeoutMs });
    const child = (this.stdio as unknown as { _process?: ChildProcess } | null)?._process;
    child?.once('exit', (code, signal) => {
      this.exitCode = code;
      this.exitSignal = signal;
    });
    return connecting;
  }

  /** what to add to a message about a server that ended: its exit code and stderr's last lines */
  exitDetail(): string {
    const code = this.exitCode;
    const how = code !== null ? ` (exit code ${code})` : this.exitSignal ? ` (signal ${this.exitSignal})` : '';
    const tail = this.stderr.trim().split('\n').slice(-5).join('\n');
    return `${how}${tail ? `: ${tail}` : ''}`;
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
  }
}

interface Slot {
  config: McpServerConfig;
  state: ServerState;
  conn: Connection | null;
  ready: Promise<Connection> | null;
}

export class McpHub {
  private readonly slots = new Map<string, Slot>();
  private closing = false;
  private readonly startTimeoutMs: number;
  private readonly callTimeoutMs: number;

  constructor(private readonly options: HubOptions = {}) {
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.callTimeoutMs = options.callTimeoutMs ?? 60_000;
  }

  /** Takes the configured servers: a removed or changed one is stopped (a changed one starts again on its next use). */
  configure(servers: readonly McpServerConfig[]): void {
    const wanted = new Map(servers.map((s) => [s.name, s]));
    for (const [name, slot] of this.slots) {
      const next = wanted.get(name);
      if (!next || JSON.stringify(next.transport) !== JSON.stringify(slot.config.transport)) {
        void this.stop(slot);
        this.slots.delete(name);
      } else slot.config = next;
    }
    for (const [name, config] of wanted) {
      if (!this.slots.has(name)) this.slots.set(name, { config, state: { status: 'stopped', tools: [] }, conn: null, ready: null });
    }
    this.options.onChange?.();
  }

  state(name: string): ServerState {
    const slot = this.slots.get(name);
    return slot ? structuredClone(slot.state) : { status: 'stopped', tools: [] };
  }

  /** the process id of a started stdio server (tests: no orphans) */
  pid(name: string): number | null {
    return this.slots.get(name)?.conn?.pid() ?? null;
  }

  /** The server's tools, starting it when it is not running. */
  async tools(name: string): Promise<McpTool[]> {
    await this.connection(name);
    return structuredClone(this.slot(name).state.tools);
  }

  /** Stops the server if it runs and starts it again; resolves with its state (an error there, not thrown). */
  async restart(name: string): Promise<ServerState> {
    const slot = this.slot(name);
    await this.stop(slot);
    await this.connection(name).catch(() => undefined);
    return this.state(name);
  }

  /**
   * Calls a tool; resolves with its result as text. A result the tool marks as an error throws
   * McpServerError 'tool' with that text. A call past its time limit stops the server.
   */
  async call(
    name: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<string> {
    const conn = await this.connection(name);
    const timeoutMs = options.timeoutMs ?? this.callTimeoutMs;
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await conn.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw new PowerError('cancelled', `the call of ${tool} on MCP server "${name}" was stopped`);
      throw await this.failure(name, conn, error, `while running ${tool}`, timeoutMs);
    }
    const text = resultText(result);
    if (result.isError === true) throw new McpServerError(name, 'tool', `tool ${tool} failed: ${text}`);
    return text;
  }

  /** Stops every server (each child process ends); no server starts after it. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.slots.values()].map((s) => this.stop(s)));
  }

  private slot(name: string): Slot {
    const slot = this.slots.get(name);
    if (!slot) throw new PowerError('not-found', `no MCP server named "${name}"`);
    return slot;
  }

  private setState(slot: Slot, state: ServerState): void {
    slot.state = state;
    this.options.onChange?.();
  }

  private async stop(slot: Slot): Promise<void> {
    const conn = slot.conn;
    slot.conn = null;
    slot.ready = null;
    if (conn) await conn.close();
  }

  private connection(name: string): Promise<Connection> {
    if (this.closing) return Promise.reject(new PowerError('cancelled', 'Power is stopping'));
    const slot = this.slot(name);
    if (slot.conn && !slot.conn.closed && slot.ready) return slot.ready;
    const ready = this.start(slot);
    slot.ready = ready;
    // a failed start is tried again on the next use
    ready.catch(() => {
      if (slot.ready === ready) slot.ready = null;
    });
    return ready;
  }

  private async start(slot: Slot): Promise<Connection> {
    const name = slot.config.name;
    this.setState(slot, { status: 'starting', tools: slot.state.tools });
    let conn: Connection;
    try {
      conn = new Connection(name, slot.config.transport, (c) => {
        if (slot.conn !== c) return;
        // a server that ends by itself is restarted on its next use
        slot.ready = null;
        if (slot.state.status === 'ready' && !this.closing) {
          this.setState(slot, { status: 'error', error: `MCP server "${name}" exited${c.exitDetail()}`, tools: slot.state.tools });
        }
      });
    } catch (error) {
      this.setState(slot, { status: 'error', error: (error as Error).message, tools: [] });
      throw error;
    }
    slot.conn = conn;
    try {
      await conn.connect(this.startTimeoutMs);
      const listed = await conn.client.listTools(undefined, { timeout: this.startTimeoutMs });
      const tools = listed.tools.map((t) => ({
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        inputSchema: t.inputSchema as Record<string, unknown>,
      }));
      if (slot.conn !== conn) throw new PowerError('cancelled', `MCP server "${name}" was stopped while it started`);
      this.setState(slot, { status: 'ready', tools });
      return conn;
    } catch (error) {
      const failure =
        error instanceof PowerError ? error : await this.failure(name, conn, error, 'while starting', this.startTimeoutMs, true);
      if (slot.conn === conn) {
        slot.conn = null;
        await conn.close();
      }
      this.setState(slot, { status: 'error', error: failure.message, tools: [] });
      throw failure;
    }
  }

  /** What an error from the SDK means for this server, in words (and the server stopped where it hangs). */
  private async failure(
    name: string,
    conn: Connection,
    error: unknown,
    when: string,
    timeoutMs: number,
    starting = false,
  ): Promise<PowerError> {
    if (error instanceof PowerError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    const slot = this.slots.get(name);
    const stopThis = async () => {
      if (slot && slot.conn === conn) await this.stop(slot);
      else await conn.close();
    };
    // a spawn failure: no such program, not executable, no such folder
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      return this.mark(name, new McpServerError(name, 'start', `could not start: ${message}`));
    }
    if (conn.garbage !== null) {
      await stopThis();
      return this.mark(name, new McpServerError(name, 'protocol', `${when}: it wrote something that is not MCP (${conn.garbage})`));
    }
    if (conn.closed || /Connection closed/i.test(message)) {
      return this.mark(name, new McpServerError(name, 'exit', `exited ${when}${conn.exitDetail()}`));
    }
    if (code === -32001 || /timed? ?out/i.test(message)) {
      await stopThis();
      return this.mark(
        name,
        new McpServerError(
          name,
          'timeout',
          `did not answer ${when} within ${Math.round(timeoutMs / 100) / 10} s; it was stopped (its next use starts it again)`,
        ),
      );
    }
    if (starting) {
      await stopThis();
      return this.mark(name, new McpServerError(name, 'protocol', `${when}: ${message}`));
    }
    return new McpServerError(name, 'tool', `${when}: ${message}`);
  }

  private mark(name: string, error: McpServerError): McpServerError {
    const slot = this.slots.get(name);
    if (slot) this.setState(slot, { status: 'error', error: error.message, tools: slot.state.tools });
    return error;
  }
}

/** A tool's result as the text the model reads: its text parts, and a word for each other part. */
export function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  const parts: string[] = [];
  const content = Array.isArray(result.content)
    ? (result.content as { type?: string; text?: string; resource?: { text?: string; uri?: string } }[])
    : [];
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') parts.push(part.text);
    else if (part.type === 'resource' && typeof part.resource?.text === 'string') parts.push(part.resource.text);
    else parts.push(`[${part.type ?? 'content'}${part.resource?.uri ? ` ${part.resource.uri}` : ''}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  const text = parts.join('\n');
  return text.length > RESULT_MAX_CHARS ? `${text.slice(0, RESULT_MAX_CHARS)}… (cut at ${RESULT_MAX_CHARS} characters)` : text;
}
