// `power mcp` as a user runs it (bin/power.js over dist/) on a data folder of its own, with the
// real server-filesystem: add a command or a loopback URL, list with status and tools, test,
// import an mcp.json (good and bad entries), remove; every bad input refused with one error line;
// and a `power serve` on the same folder sees each change the command makes.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { McpServerEntry } from '../../app/contract/api/mcp.js';
import type { PowerService } from '../../app/service/types.js';
import { assertUsageError, jsonOf, power } from '../fixtures/cli.js';
import { filesystemServer } from '../fixtures/mcp-servers.js';
import { startServeInProcess } from '../fixtures/serve-in-process.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

/** server-filesystem on `folder`: the program and its arguments */
function filesystemCommand(folder: string): string[] {
  const t = filesystemServer(folder).transport;
  assert.equal(t.kind, 'stdio');
  return [t.command, ...t.args];
}

describe('power mcp', () => {
  const temp = suiteTempDir('power-cli-mcp-');
  let n = 0;
  /** a fresh data folder and a folder for server-filesystem to serve */
  async function folders(): Promise<{ data: string; files: string }> {
    const base = join(temp(), `case-${++n}`);
    const files = join(base, 'files');
    await mkdir(files, { recursive: true });
    await writeFile(join(files, 'note.txt'), 'hello\n');
    return { data: join(base, 'data'), files };
  }
  const mcp = (data: string, ...args: string[]) => {
    const dashes = args.indexOf('--');
    const own = dashes < 0 ? args : args.slice(0, dashes);
    return power(['mcp', ...own, '--data-dir', data, ...(dashes < 0 ? [] : args.slice(dashes))]);
  };
  const listed = (data: string) => jsonOf<{ servers: McpServerEntry[] }>(mcp(data, 'list', '--json')).servers;

  test('add a command, list it with its status and tools, test it, remove it', async () => {
    const { data, files } = await folders();
    const added = mcp(data, 'add', 'files', '--env', 'GREETING=a=b', '--cwd', files, '--', ...filesystemCommand(files));
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /^added files/);

    const [entry, ...others] = listed(data);
    assert.equal(others.length, 0);
    assert.equal(entry!.name, 'files');
    assert.equal(entry!.status, 'ready', entry!.error);
    assert.ok(
      entry!.tools.some((t) => t.name === 'list_allowed_directories'),
      entry!.tools.map((t) => t.name).join(','),
    );
    assert.deepEqual(entry!.transport, {
      kind: 'stdio',
      command: process.execPath,
      args: filesystemCommand(files).slice(1),
      env: { GREETING: 'a=b' },
      cwd: files,
    });

    const text = mcp(data, 'list');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^files {2}stdio {2}GREETING=a=b .*\n {2}ready: \d+ tools: .*list_allowed_directories/);

    const tested = mcp(data, 'test', 'files');
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /ready: \d+ tools/);
    assert.equal(jsonOf<McpServerEntry>(mcp(data, 'test', 'files', '--json')).status, 'ready');

    const removed = mcp(data, 'remove', 'files');
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(listed(data), []);
    assert.match(mcp(data, 'list').stdout, /^no MCP servers/);
  });

  test('add a loopback URL; a server that does not start fails its test with the reason (exit 1)', async () => {
    const { data } = await folders();
    assert.equal(mcp(data, 'add', 'web', '--url', 'http://127.0.0.1:9/mcp').code, 0);
    assert.deepEqual(listed(data)[0]!.transport, { kind: 'http', url: 'http://127.0.0.1:9/mcp', headers: {} });
    assert.equal(mcp(data, 'add', 'missing', '--', join(data, 'no-such-program')).code, 0);

    const failed = mcp(data, 'test', 'missing');
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stdout, /^missing {2}stdio .*\n {2}error: MCP server "missing" could not start/);
    assert.match(failed.stderr, /^error: MCP server "missing" could not start: .*ENOENT/);
    // list reports every server, the failed one with its reason, and is not an error itself
    const all = listed(data);
    assert.deepEqual(
      all.map((s) => [s.name, s.status]),
      [
        ['web', 'error'],
        ['missing', 'error'],
      ],
    );
  });

  test('import an mcp.json: good entries added, each bad one skipped with its reason; again only with --replace', async () => {
    const { data, files } = await folders();
    const [command, ...args] = filesystemCommand(files);
    const file = join(temp(), `mcp-${++n}.json`);
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          files: { command, args, env: { A: '1' } },
          local: { url: 'http://localhost:8123/mcp' },
          remote: { url: 'https://example.com/mcp' },
          empty: { type: 'stdio' },
          'bad name!': { command: 'x' },
        },
      }),
    );
    const imported = mcp(data, 'import', file);
    assert.equal(imported.code, 0, imported.stderr);
    const lines = imported.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.slice(0, 2), ['added files', 'added local']);
    assert.equal(lines.length, 5, imported.stdout);
    assert.match(imported.stdout, /^skipped remote: .*must be on this machine/m);
    assert.match(imported.stdout, /^skipped empty: an entry needs "command" .* or "url"/m);
    assert.match(imported.stdout, /^skipped bad name!: a server name is letters, digits/m);
    const files_ = listed(data).find((s) => s.name === 'files')!;
    assert.equal(files_.status, 'ready', files_.error);
    assert.deepEqual(files_.transport, { kind: 'stdio', command, args, env: { A: '1' } });

    // the same file again: every server is configured already, so nothing is imported (exit 2)
    const again = mcp(data, 'import', file);
    assertUsageError(again, /^error: nothing was imported from .* \(5 skipped\)$/);
    assert.match(again.stdout, /^skipped files: a server of that name is configured already/m);
    const replaced = mcp(data, 'import', file, '--replace');
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.match(replaced.stdout, /^added files\nadded local\n/);
    assert.deepEqual(
      listed(data).map((s) => s.name),
      ['files', 'local'],
    );
  });

  test('every bad input: one error line, exit 2, the configuration unchanged', async () => {
    const { data, files } = await folders();
    assert.equal(mcp(data, 'add', 'files', '--', ...filesystemCommand(files)).code, 0);
    const before = listed(data);
    const notJson = join(temp(), 'not-json.json');
    await writeFile(notJson, '{"mcpServers": ');
    const noServers = join(temp(), 'no-servers.json');
    await writeFile(noServers, '{"servers": {}}');
    const none = join(temp(), 'none.json');
    await writeFile(none, '{"mcpServers": {}}');
    const cases: [string[], RegExp][] = [
      [['remove', 'nope'], /no MCP server named "nope"/],
      [['test', 'nope'], /no MCP server named "nope"/],
      [['remove'], /needs the server's NAME/],
      [['add', 'files', '--', 'other'], /an MCP server named "files" exists already/],
      [['add', 'web', '--url', 'http://example.com/mcp'], /--url must be on this machine .*got 'http:\/\/example.com\/mcp'/],
      [['add', 'web', '--url', 'http://10.0.0.1:80/mcp'], /--url must be on this machine/],
      [['add', 'web', '--url', 'not a url'], /--url must be an http:\/\/ URL/],
      [['add', 'web', '--url', 'ftp://127.0.0.1/mcp'], /--url must be an http:\/\/ or https:\/\/ URL/],
      [['add', 'web', '--url', 'http://127.0.0.1:1/', '--', 'x'], /either --url URL or -- COMMAND/],
      [['add', 'web', '--url', 'http://127.0.0.1:1/', '--env', 'A=1'], /--env and --cwd are for a command/],
      [['add', 'x'], /needs the command after "--"/],
      [['add', 'x', 'node', 'server.js'], /unexpected argument 'node': the command goes after "--"/],
      [['add', 'x', '--'], /no command after "--"/],
      [['add', 'x', '--env', 'NOEQUALS', '--', 'node'], /--env must be NAME=VALUE/],
      [['add', 'x', '--cwd', join(files, 'absent'), '--', 'node'], /--cwd .*absent is not a folder/],
      [['add', 'bad name', '--', 'node'], /a server name is letters, digits/],
      [['import', join(temp(), 'absent.json')], /cannot read .*absent\.json: no such file/],
      [['import', notJson], /not-json\.json: mcp\.json is not JSON/],
      [['import', noServers], /no-servers\.json: mcp\.json needs an "mcpServers" object/],
      [['import', none], /none\.json lists no servers/],
      [['import'], /needs the mcp\.json FILE/],
      [['frobnicate'], /unknown power mcp command 'frobnicate'/],
      [['list', '--bogus'], /unknown option '--bogus'/],
    ];
    for (const [args, pattern] of cases) assertUsageError(mcp(data, ...args), pattern);
    assertUsageError(power(['mcp']), /power mcp needs one of list, add, remove, import, test/);
    assert.deepEqual(listed(data), before);
  });

  test('a power serve on the same data folder sees each change the command makes, and keeps it', async () => {
    const { data, files } = await folders();
    const serve = await startServeInProcess({ dataDir: data, modelsDirs: [] });
    try {
      const { service } = serve;
      const seen = servedWhen(service, (names) => names.includes('files'));
      assert.equal(mcp(data, 'add', 'files', '--', ...filesystemCommand(files)).code, 0);
      await seen;
      // the server runs what the command added
      const tested = await service.mcp.testConnect({ name: 'files' });
      assert.equal(tested.status, 'ready', tested.error);

      // a change of the server's own keeps the command's: both are in the file
      await service.mcp.add({ server: { name: 'web', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } } });
      assert.deepEqual(
        listed(data).map((s) => s.name),
        ['files', 'web'],
      );

      const gone = servedWhen(service, (names) => !names.includes('files'));
      assert.equal(mcp(data, 'remove', 'files').code, 0);
      await gone;
      assert.deepEqual(
        (await service.mcp.list({})).servers.map((s) => s.name),
        ['web'],
      );
    } finally {
      await serve.close();
    }
  });
});

/** resolves once the service's server list satisfies `ready` (checked now and on each change) */
function servedWhen(service: PowerService, ready: (names: string[]) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = async (): Promise<void> => {
      if (ready((await service.mcp.list({})).servers.map((s) => s.name))) {
        off();
        resolve();
      }
    };
    const off = service.mcp.onChanged(() => void check().catch(reject));
    check().catch(reject);
  });
}
