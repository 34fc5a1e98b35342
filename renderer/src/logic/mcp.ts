// MCP servers in the page: the Add form read into a server's configuration (checked with the
// contract's own schema, so the form refuses what the service would), the lines the Settings view
// and a chat's tool calls show, and which tools a server offers after a checkbox changes.
import { McpServerConfig, type ChatToolCall, type McpServerEntry, type McpTransport } from '../../../app/contract/api/mcp.js';

export interface McpServerForm {
  name: string;
  kind: 'stdio' | 'http';
  command: string;
  /** one argument per line (an argument may hold spaces) */
  args: string;
  /** one KEY=VALUE per line */
  env: string;
  url: string;
  /** one "Name: value" per line */
  headers: string;
}

export const EMPTY_MCP_FORM: McpServerForm = { name: '', kind: 'stdio', command: '', args: '', env: '', url: '', headers: '' };

const lines = (text: string): string[] => text.split(/\r?\n/).filter((l) => l.trim() !== '');

/** "KEY=VALUE" (or "Name: value") lines as a record; a line without the separator is an error that names it */
function pairs(text: string, separator: '=' | ':', what: string, errors: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf(separator);
    const key = at < 0 ? '' : line.slice(0, at).trim();
    if (key === '') {
      errors.push(`${what}: "${line.trim()}" is not ${separator === '=' ? 'KEY=VALUE' : 'Name: value'}`);
      continue;
    }
    out[key] = separator === ':' ? line.slice(at + 1).trim() : line.slice(at + 1);
  }
  return out;
}

/** The form as a server's configuration, or every problem with it (in the words the contract uses). */
export function serverFromForm(form: McpServerForm): { ok: true; server: McpServerConfig } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const transport =
    form.kind === 'stdio'
      ? { kind: 'stdio' as const, command: form.command.trim(), args: lines(form.args), env: pairs(form.env, '=', 'Environment', errors) }
      : { kind: 'http' as const, url: form.url.trim(), headers: pairs(form.headers, ':', 'Headers', errors) };
  if (form.kind === 'stdio' && transport.kind === 'stdio' && transport.command === '')
    errors.push('Command: the program to start is missing');
  if (form.kind === 'http' && transport.kind === 'http' && transport.url === '') errors.push('URL: the address is missing');
  const parsed = McpServerConfig.safeParse({ name: form.name.trim(), transport, alwaysAllow: [] });
  if (!parsed.success && errors.length === 0) {
    for (const issue of parsed.error.issues) {
      const field =
        issue.path[0] === 'name' ? 'Name' : issue.path.includes('url') ? 'URL' : issue.path.includes('command') ? 'Command' : 'Server';
      errors.push(`${field}: ${issue.message}`);
    }
  }
  return errors.length > 0 || !parsed.success ? { ok: false, errors } : { ok: true, server: parsed.data };
}

/** what the server is: its command line, or its URL */
export function describeTransport(t: McpTransport): string {
  if (t.kind === 'http') return t.url;
  const quoted = t.args.map((a) => (/\s/.test(a) || a === '' ? JSON.stringify(a) : a));
  return [t.command, ...quoted].join(' ');
}

/** the status as the list shows it */
export function serverStatusLine(entry: Pick<McpServerEntry, 'status' | 'error' | 'tools'>): string {
  switch (entry.status) {
    case 'ready':
      return `connected · ${entry.tools.length} tool${entry.tools.length === 1 ? '' : 's'}`;
    case 'starting':
      return 'starting…';
    case 'error':
      return `failed: ${entry.error ?? 'the server did not start'}`;
    default:
      return 'not started (it starts when a chat needs it, or with Test)';
  }
}

/** whether the chat offers `tool` of the server */
export function toolOffered(entry: Pick<McpServerEntry, 'enabledTools'>, tool: string): boolean {
  return entry.enabledTools === undefined || entry.enabledTools.includes(tool);
}

/**
 * The server's enabledTools once `tool` is turned on or off, among the tools it lists: absent
 * (every tool, later ones too) when all of them are on.
 */
export function offeredAfter(entry: Pick<McpServerEntry, 'enabledTools' | 'tools'>, tool: string, on: boolean): string[] | undefined {
  const listed = entry.tools.map((t) => t.name);
  const now = new Set(entry.enabledTools ?? listed);
  if (on) now.add(tool);
  else now.delete(tool);
  if (listed.every((t) => now.has(t)) && [...now].every((t) => listed.includes(t))) return undefined;
  return [...now].sort();
}

/** a call's arguments as pretty JSON (as the model wrote them when they are not JSON) */
export function prettyArguments(text: string): string {
  if (text.trim() === '') return '{}';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** what became of a call, in words; `answerable`: its reply is the chat's last, so it can still be answered */
export function callStateLine(call: Pick<ChatToolCall, 'state' | 'approval'>, answerable: boolean): string {
  switch (call.state) {
    case 'pending':
      return answerable ? 'waiting for your answer' : 'not answered (the conversation went on)';
    case 'running':
      return call.approval === 'always' ? 'running (always allowed)' : 'running…';
    case 'done':
      return call.approval === 'always' ? 'ran (always allowed)' : 'ran (allowed once)';
    case 'denied':
      return 'denied';
    default:
      return 'failed';
  }
}

/** the servers a chat uses after one is turned on or off (in the order the list shows them) */
export function chatServersAfter(current: readonly string[], all: readonly string[], name: string, on: boolean): string[] {
  const next = new Set(current.filter((n) => all.includes(n)));
  if (on) next.add(name);
  else next.delete(name);
  return all.filter((n) => next.has(n));
}

/** advice for a stdio server refused on a served page */
export const STDIO_FROM_PAGE =
  'Add stdio servers (commands) in the desktop app, or with `power mcp add NAME -- COMMAND` on the machine that runs power serve: a served page may only add servers with a loopback URL.';

/** a reply that called tools shows what it said beside the calls (the calls are shown apart); null: as any reply */
export function textBesideCalls(message: { status: string; content: string; toolCalls?: readonly unknown[] } | null): string | null {
  return message && message.status !== 'streaming' && (message.toolCalls?.length ?? 0) > 0 ? message.content : null;
}
