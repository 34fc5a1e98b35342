// power mcp: the MCP servers of a data folder from the command line, for people who run
// `power serve` headless (its page may not add a command, by design). Every change goes through
// the service's own mcp concern (openMcpServers: the one writer of mcp-servers.json); a running
// `power serve` or app on the same folder watches that file and takes the change.
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { PowerError } from '../contract/api/errors.js';
import { isLoopbackUrl, McpServerConfig } from '../contract/api/mcp.js';
import { describeIssues } from '../contract/channel/issues.js';
import { defaultDataDir, openMcpServers, type McpServersApi } from '../service/index.js';
import { parseFlags, str, type Parsed } from './args.js';
import { FailureError, UsageError } from './errors.js';
import type { Io } from './generate.js';

export const MCP_USAGE = `power mcp list [--json] [--data-dir DIR]
power mcp add NAME [--env K=V]... [--cwd DIR] [--data-dir DIR] -- COMMAND [ARGS...]
power mcp add NAME --url URL [--data-dir DIR]
power mcp remove NAME [--data-dir DIR]
power mcp import FILE [--replace] [--data-dir DIR]
power mcp test NAME [--json] [--data-dir DIR]
  The MCP servers whose tools a chat can offer its model, in the data folder the app and power
  serve use: list starts each server and shows its status and tools; add a command Power starts
  (stdio) or a streamable HTTP server on this machine (loopback URLs only); import the servers of
  an mcp.json (LM Studio's, Claude Desktop's), each skipped entry with its reason; test starts a
  server and lists its tools (exit 1 when it fails). A running power serve or app on the same
  data folder sees each change.`;

const SUBCOMMANDS = ['list', 'add', 'remove', 'import', 'test'] as const;

/** a server as the concern hands it back */
type Entry = Awaited<ReturnType<McpServersApi['testConnect']>>;

const DATA_DIR = { 'data-dir': { type: 'string' } } as const;

/** the data folder as power serve and the app find it */
function dataDirOf(values: Parsed['values']): string {
  return resolve(str(values, 'data-dir') ?? defaultDataDir());
}

/** Runs `use` on the data folder's server list; every server it started ends before it returns. */
async function withServers<T>(dataDir: string, io: Io, use: (api: McpServersApi) => T | Promise<T>): Promise<T> {
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) throw new UsageError(`--data-dir ${dataDir} is not a folder`);
  const servers = await openMcpServers(dataDir, (line) => io.err(`power mcp: ${line}\n`));
  try {
    return await use(servers.api);
  } finally {
    await servers.close();
  }
}

function oneName(positionals: string[], what: string): string {
  const [name] = positionals;
  if (name === undefined) throw new UsageError(`power mcp ${what} needs the server's NAME (power mcp list shows them)`);
  return name;
}

/** a server's configuration checked against the contract, its first problem as the error */
function checkedServer(server: unknown): McpServerConfig {
  const checked = McpServerConfig.safeParse(server);
  if (!checked.success) throw new UsageError(describeIssues(checked.error));
  return checked.data;
}

/** how a server is started or reached, in one line */
function transportText(entry: Entry): string {
  const t = entry.transport;
  if (t.kind === 'http') return t.url;
  const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = Object.entries(t.env ?? {}).map(([k, v]) => `${k}=${quote(v)} `);
  return `${env.join('')}${[t.command, ...(t.args ?? [])].map(quote).join(' ')}${t.cwd ? ` (in ${t.cwd})` : ''}`;
}

function entryText(entry: Entry): string {
  const lines = [`${entry.name}  ${entry.transport.kind}  ${transportText(entry)}`];
  if (entry.status === 'error') lines.push(`  error: ${entry.error ?? 'failed'}`);
  else if (entry.status === 'ready') {
    const names = entry.tools.map((t) => t.name);
    lines.push(`  ready: ${names.length} tool${names.length === 1 ? '' : 's'}${names.length ? `: ${names.join(', ')}` : ''}`);
  } else lines.push(`  ${entry.status}`);
  if (entry.enabledTools) lines.push(`  offered to chats: ${entry.enabledTools.join(', ') || 'none'}`);
  if (entry.alwaysAllow?.length) lines.push(`  always allowed: ${entry.alwaysAllow.join(', ')}`);
  return lines.join('\n') + '\n';
}

async function list(argv: string[], io: Io): Promise<number> {
  const { values } = parseFlags(argv, { ...DATA_DIR, json: { type: 'boolean' } }, 0);
  const entries = await withServers(dataDirOf(values), io, async (api) => {
    const { servers } = await api.list({});
    // status and tools are only known from the server itself: each is started (side by side) and asked
    return Promise.all(servers.map((s) => api.testConnect({ name: s.name })));
  });
  if (values.json) io.out(JSON.stringify({ servers: entries }, null, 2) + '\n');
  else if (entries.length === 0) io.out('no MCP servers (power mcp add or power mcp import adds them)\n');
  else for (const e of entries) io.out(entryText(e));
  return 0;
}

/** K=V of --env: the variable's name is what comes before the first '=' */
function envPair(raw: string): [string, string] {
  const at = raw.indexOf('=');
  if (at <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.slice(0, at)))
    throw new UsageError(`--env must be NAME=VALUE with NAME letters, digits and "_" (got '${raw}')`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

/** an http(s) URL on this machine, as the contract allows */
function checkedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an http:// URL such as http://127.0.0.1:3000/mcp (got '${raw}')`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must be an http:// or https:// URL (got '${raw}', a ${url.protocol} URL)`);
  // the contract refuses it too (as the service enforces it); here the message names the flag
  if (!isLoopbackUrl(raw))
    throw new UsageError(
      `--url must be on this machine (127.0.0.1, localhost or [::1]): only loopback MCP servers are allowed (got '${raw}')`,
    );
  return raw;
}

async function add(argv: string[], io: Io): Promise<number> {
  // everything after "--" is the command and its arguments, never flags of power's
  const dashes = argv.indexOf('--');
  const own = dashes < 0 ? argv : argv.slice(0, dashes);
  const command = dashes < 0 ? [] : argv.slice(dashes + 1);
  const { values, positionals } = parseFlags(
    own,
    { ...DATA_DIR, url: { type: 'string' }, env: { type: 'string', multiple: true }, cwd: { type: 'string' } },
    Infinity,
  );
  const name = oneName(positionals, 'add');
  if (positionals.length > 1)
    throw new UsageError(
      `unexpected argument '${positionals[1]}': the command goes after "--" (power mcp add ${name} -- COMMAND [ARGS...])`,
    );
  const url = str(values, 'url');
  const env = (values.env as unknown as string[] | undefined) ?? [];
  const cwd = str(values, 'cwd');
  let server: McpServerConfig;
  if (url !== undefined) {
    if (dashes >= 0) throw new UsageError('give either --url URL or -- COMMAND [ARGS...], not both');
    if (env.length > 0 || cwd !== undefined) throw new UsageError('--env and --cwd are for a command (-- COMMAND), not for --url');
    server = checkedServer({ name, transport: { kind: 'http', url: checkedUrl(url) } });
  } else {
    if (dashes < 0)
      throw new UsageError(`power mcp add ${name} needs the command after "--" (power mcp add ${name} -- npx server ARGS...) or --url URL`);
    if (command.length === 0 || command[0] === '')
      throw new UsageError(`no command after "--" (power mcp add ${name} -- COMMAND [ARGS...])`);
    const folder = cwd === undefined ? undefined : resolve(cwd);
    if (folder !== undefined && !(existsSync(folder) && statSync(folder).isDirectory()))
      throw new UsageError(`--cwd ${folder} is not a folder`);
    server = checkedServer({
      name,
      transport: {
        kind: 'stdio',
        command: command[0],
        args: command.slice(1),
        env: Object.fromEntries(env.map(envPair)),
        ...(folder !== undefined ? { cwd: folder } : {}),
      },
    });
  }
  await withServers(dataDirOf(values), io, (api) => api.add({ server }));
  io.out(`added ${name} (power mcp test ${name} starts it and lists its tools)\n`);
  return 0;
}

async function remove(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(argv, DATA_DIR, 1);
  const name = oneName(positionals, 'remove');
  await withServers(dataDirOf(values), io, (api) => api.remove({ name }));
  io.out(`removed ${name}\n`);
  return 0;
}

async function importFile(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...DATA_DIR, replace: { type: 'boolean' } }, 1);
  const [file] = positionals;
  if (file === undefined) throw new UsageError('power mcp import needs the mcp.json FILE');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${file}${code === 'ENOENT' ? ': no such file' : code === 'EISDIR' ? ': it is a folder' : ''}`);
  }
  let result: { added: string[]; skipped: { name: string; reason: string }[] };
  try {
    result = await withServers(dataDirOf(values), io, (api) => api.importConfig({ text, replace: values.replace === true }));
  } catch (error) {
    // the whole file refused (not JSON, no "mcpServers"): its name says which file
    if (error instanceof PowerError && error.code === 'bad-input') throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
  for (const name of result.added) io.out(`added ${name}\n`);
  for (const s of result.skipped) io.out(`skipped ${s.name}: ${s.reason}\n`);
  if (result.added.length === 0) {
    throw new UsageError(
      result.skipped.length === 0
        ? `${file} lists no servers in "mcpServers"`
        : `nothing was imported from ${file} (${result.skipped.length} skipped)`,
    );
  }
  return 0;
}

async function test(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(argv, { ...DATA_DIR, json: { type: 'boolean' } }, 1);
  const name = oneName(positionals, 'test');
  const entry = await withServers(dataDirOf(values), io, (api) => api.testConnect({ name }));
  if (values.json) io.out(JSON.stringify(entry, null, 2) + '\n');
  else io.out(entryText(entry));
  if (entry.status !== 'ready') throw new FailureError(entry.error ?? `MCP server "${name}" did not start`);
  return 0;
}

export async function mcpCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list':
      return list(rest, io);
    case 'add':
      return add(rest, io);
    case 'remove':
      return remove(rest, io);
    case 'import':
      return importFile(rest, io);
    case 'test':
      return test(rest, io);
    case 'help':
    case '--help':
    case '-h':
      io.out(MCP_USAGE + '\n');
      return 0;
    case undefined:
      throw new UsageError(`power mcp needs one of ${SUBCOMMANDS.join(', ')} (power mcp --help)`);
    default:
      throw new UsageError(`unknown power mcp command '${sub}': one of ${SUBCOMMANDS.join(', ')}`);
  }
}
