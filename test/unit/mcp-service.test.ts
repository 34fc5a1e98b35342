// MCP servers in the service: the configuration (added, imported from an LM Studio / Claude
// Desktop mcp.json, refused in words when the file is bad), kept in the data folder across a
// restart, test-connect on a real server (server-everything) and on one that does not start, the
// chat's servers, no server process left once the service stops; and `power serve`'s rule: no
// token, no access; with it, the page still cannot make Power start a command.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { WebSocket } from 'ws';

import { powerApi } from '../../app/contract/api/index.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { servedPageApi } from '../../app/serve/page-api.js';
import { newToken } from '../../app/serve/security.js';
import { startServer } from '../../app/serve/server.js';
import { createPowerService } from '../../app/service/index.js';
import type { PowerService } from '../../app/service/types.js';
import { everythingServer, processRuns } from '../fixtures/mcp-servers.js';

async function withService(body: (service: PowerService, dataDir: string) => Promise<void>, dataDir?: string): Promise<void> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'power-mcp-')));
  const service = await createPowerService({ dataDir: dir });
  try {
    await body(service, dir);
  } finally {
    await service.close();
    if (!dataDir) await rm(dir, { recursive: true, force: true });
  }
}

/** the processes this one started whose command line holds `needle` */
function childrenRunning(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const everything = everythingServer();
const LM_STUDIO_JSON = JSON.stringify({
  mcpServers: {
    everything: {
      command: everything.transport.kind === 'stdio' ? everything.transport.command : '',
      args: everything.transport.kind === 'stdio' ? everything.transport.args : [],
    },
    local: { url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer x' } },
    remote: { url: 'https://mcp.example.com/mcp' },
    'bad name!': { command: 'x' },
    neither: { type: 'stdio' },
  },
});

describe('MCP servers in the service', () => {
  test('an mcp.json is imported (bad entries skipped with their reason) and kept in the data folder across a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'power-mcp-'));
    try {
      await withService(async (service) => {
        const { added, skipped } = await service.mcp.importConfig({ text: LM_STUDIO_JSON });
        assert.deepEqual(added, ['everything', 'local']);
        assert.deepEqual(
          skipped.map((s) => s.name),
          ['remote', 'bad name!', 'neither'],
        );
        assert.match(skipped[0]!.reason, /must be on this machine/);
        assert.match(skipped[2]!.reason, /needs "command" .* or "url"/);
        const again = await service.mcp.importConfig({ text: LM_STUDIO_JSON });
        assert.deepEqual(again.added, []);
        assert.match(again.skipped.find((x) => x.name === 'everything')!.reason, /configured already/);
      }, dir);
      await withService(async (service) => {
        const { servers } = await service.mcp.list({});
        assert.deepEqual(
          servers.map((s) => [s.name, s.transport.kind, s.status]),
          [
            ['everything', 'stdio', 'stopped'],
            ['local', 'http', 'stopped'],
          ],
        );
      }, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a bad mcp.json is refused in words, and nothing is added', async () => {
    await withService(async (service) => {
      await assert.rejects(service.mcp.importConfig({ text: '{"mcpServers": {' }), { code: 'bad-input', message: /mcp\.json is not JSON/ });
      await assert.rejects(service.mcp.importConfig({ text: '{"servers": {}}' }), {
        code: 'bad-input',
        message: /needs an "mcpServers" object/,
      });
      await assert.rejects(service.mcp.importConfig({ text: '[1, 2]' }), { code: 'bad-input', message: /needs an "mcpServers" object/ });
      await assert.rejects(service.mcp.add({ server: { name: 'far', transport: { kind: 'http', url: 'http://10.0.0.1/mcp' } } }), {
        code: 'bad-input',
        message: /must be on this machine/,
      });
      assert.deepEqual((await service.mcp.list({})).servers, []);
    });
  });

  test("test-connect lists a real server's tools, says why one does not start, and a stopped service leaves no server running", async () => {
    await withService(async (service) => {
      await service.mcp.add({ server: everything });
      await service.mcp.add({ server: { name: 'ghost', transport: { kind: 'stdio', command: '/nonexistent/mcp-server' } } });
      await assert.rejects(service.mcp.add({ server: everything }), { code: 'bad-input', message: /"everything" exists already/ });
      const ready = await service.mcp.testConnect({ name: 'everything' });
      assert.equal(ready.status, 'ready');
      assert.ok(ready.tools.some((t) => t.name === 'echo'));
      const ghost = await service.mcp.testConnect({ name: 'ghost' });
      assert.equal(ghost.status, 'error');
      assert.match(ghost.error!, /MCP server "ghost" could not start/);
      assert.equal(childrenRunning('server-everything').length, 1);
      const pids = childrenRunning('server-everything');
      await service.close();
      assert.deepEqual(pids.filter(processRuns), [], 'no orphans');
    });
  });

  test("a chat's servers must be configured ones", async () => {
    await withService(async (service) => {
      await service.mcp.add({ server: everything });
      const chat = await service.chats.create({});
      await assert.rejects(service.mcp.setChatServers({ chatId: chat.id, servers: ['nope'] }), {
        code: 'not-found',
        message: /no MCP server named "nope"/,
      });
      await service.mcp.setChatServers({ chatId: chat.id, servers: ['everything'] });
      assert.deepEqual((await service.chats.get({ chatId: chat.id })).mcpServers, ['everything']);
      await service.mcp.setChatServers({ chatId: chat.id, servers: [] });
      assert.equal((await service.chats.get({ chatId: chat.id })).mcpServers, undefined);
    });
  });

  test('power serve: without the token nothing; with it, the page cannot add or import a command, but may use what is configured', async () => {
    await withService(async (service) => {
      await service.mcp.add({ server: everything });
      const token = newToken();
      const server = await startServer({
        host: '127.0.0.1',
        port: 0,
        token,
        description: powerApi,
        api: servedPageApi(service.implementation),
        completions: { complete: () => Promise.reject(new Error('unused')) } as never,
        staticDir: null,
      });
      try {
        const url = `${server.origin.replace('http', 'ws')}/ws`;
        const refused = await new Promise<number>((resolve) => {
          const ws = new WebSocket(url);
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).on('error', () => {});
        });
        assert.equal(refused, 401);

        const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
        const { api, close } = createApiClient(powerApi, ws);
        try {
          assert.deepEqual(
            (await api.mcp.list({})).servers.map((s) => s.name),
            ['everything'],
          );
          await assert.rejects(
            api.mcp.add({ server: { name: 'evil', transport: { kind: 'stdio', command: '/bin/sh', args: ['-c', 'touch /tmp/pwned'] } } }),
            { code: 'bad-input', message: /only be added or changed in the desktop app or with `power mcp add NAME -- COMMAND`/ },
          );
          await assert.rejects(api.mcp.importConfig({ text: JSON.stringify({ mcpServers: { evil: { command: '/bin/sh' } } }) }), {
            code: 'bad-input',
          });
          await assert.rejects(
            api.mcp.update({ name: 'everything', server: { ...everything, transport: { kind: 'stdio', command: '/bin/sh' } } }),
            { code: 'bad-input' },
          );
          // what starts no command the user did not set up
          await api.mcp.update({ name: 'everything', server: { ...everything, alwaysAllow: ['echo'] } });
          await api.mcp.add({ server: { name: 'local', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } } });
          const chat = await api.chats.create({});
          await api.mcp.setChatServers({ chatId: chat.id, servers: ['everything', 'local'] });
          assert.deepEqual(
            (await service.mcp.list({})).servers.map((s) => [s.name, s.alwaysAllow]),
            [
              ['everything', ['echo']],
              ['local', []],
            ],
          );
        } finally {
          close();
        }
      } finally {
        await server.close();
      }
    });
  });
});
