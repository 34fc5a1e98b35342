// The MCP hub against real servers: the reference server-everything from npm (connect, list,
// call) and the fault server for what a server can do wrong (no such program, exit at start,
// garbage, a hang, a crash mid-call): each ends in an error that names the server, and a server
// that failed starts again on its next use. close() leaves no child process behind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { McpHub, McpServerError } from '../../app/mcp/hub.js';
import { everythingServer, faultServer, processRuns } from '../fixtures/mcp-servers.js';

/** a hub with short limits, closed after `body` */
async function withHub(servers: Parameters<McpHub['configure']>[0], body: (hub: McpHub) => Promise<void>): Promise<void> {
  const hub = new McpHub({ startTimeoutMs: 15_000, callTimeoutMs: 15_000 });
  hub.configure(servers);
  try {
    await body(hub);
  } finally {
    await hub.close();
  }
}

async function failure(promise: Promise<unknown>): Promise<McpServerError> {
  const error = await promise.then(
    () => assert.fail('expected the call to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof McpServerError, `an McpServerError, not ${String(error)}`);
  return error;
}

describe('MCP hub', () => {
  test("lists server-everything's tools and calls echo and get-sum", async () => {
    await withHub([everythingServer()], async (hub) => {
      const tools = await hub.tools('everything');
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('echo') && names.includes('get-sum'), `tools: ${names.join(', ')}`);
      assert.equal(hub.state('everything').status, 'ready');
      assert.match(await hub.call('everything', 'echo', { message: 'hello MCP' }), /hello MCP/);
      assert.match(await hub.call('everything', 'get-sum', { a: 2, b: 40 }), /42/);
    });
  });

  test('a command that does not exist is a start error naming the server', async () => {
    const missing = {
      ...everythingServer('ghost'),
      transport: { kind: 'stdio' as const, command: '/nonexistent/mcp-server', args: [], env: {} },
    };
    await withHub([missing], async (hub) => {
      const error = await failure(hub.tools('ghost'));
      assert.equal(error.failure, 'start');
      assert.match(error.message, /^MCP server "ghost" could not start: .*ENOENT/);
      assert.equal(hub.state('ghost').status, 'error');
    });
  });

  test('a server that exits at start says so, with its exit code and stderr', async () => {
    await withHub([faultServer('exit-at-start')], async (hub) => {
      const error = await failure(hub.tools('exit-at-start'));
      assert.equal(error.failure, 'exit');
      assert.match(error.message, /MCP server "exit-at-start" exited while starting \(exit code 3\): fault server: refusing to start/);
    });
  });

  test('a server that answers garbage is not MCP', async () => {
    await withHub([faultServer('garbage')], async (hub) => {
      const error = await failure(hub.tools('garbage'));
      assert.equal(error.failure, 'protocol');
      assert.match(error.message, /MCP server "garbage" while starting: it wrote something that is not MCP/);
      assert.equal(hub.pid('garbage'), null, 'the server was stopped');
    });
  });

  test('a call that hangs ends at its time limit, the server is stopped and starts again on its next use', async () => {
    await withHub([faultServer('hang')], async (hub) => {
      await hub.tools('hang');
      const pid = hub.pid('hang')!;
      const error = await failure(hub.call('hang', 'wait', {}, { timeoutMs: 300 }));
      assert.equal(error.failure, 'timeout');
      assert.match(error.message, /MCP server "hang" did not answer while running wait within 0\.3 s; it was stopped/);
      assert.equal(processRuns(pid), false, 'the hung server was ended');
      await hub.tools('hang');
      assert.notEqual(hub.pid('hang'), pid, 'a new process');
    });
  });

  test('an aborted call is cancelled', async () => {
    await withHub([faultServer('hang')], async (hub) => {
      await hub.tools('hang');
      const stop = new AbortController();
      const call = hub.call('hang', 'wait', {}, { signal: stop.signal });
      stop.abort();
      await assert.rejects(
        call,
        (e: Error & { code?: string }) => e.code === 'cancelled' && /wait on MCP server "hang" was stopped/.test(e.message),
      );
    });
  });

  test('a server that crashes mid-call is an exit error, and is restarted on its next use', async () => {
    await withHub([faultServer('crash')], async (hub) => {
      await hub.tools('crash');
      const pid = hub.pid('crash');
      const error = await failure(hub.call('crash', 'boom', {}));
      assert.equal(error.failure, 'exit');
      assert.match(error.message, /MCP server "crash" exited while running boom \(exit code 7\): fault server: crashing on purpose/);
      assert.equal(hub.state('crash').status, 'error');
      assert.equal((await hub.tools('crash'))[0]?.name, 'boom');
      assert.notEqual(hub.pid('crash'), pid);
      assert.equal(hub.state('crash').status, 'ready');
    });
  });

  test('close() ends every server it started', async () => {
    const hub = new McpHub();
    hub.configure([everythingServer('a'), everythingServer('b'), faultServer('hang')]);
    await Promise.all([hub.tools('a'), hub.tools('b'), hub.tools('hang')]);
    const pids = ['a', 'b', 'hang'].map((n) => hub.pid(n)!);
    assert.ok(pids.every((p) => p !== null && processRuns(p)));
    await hub.close();
    assert.deepEqual(
      pids.filter((p) => processRuns(p)),
      [],
      'no orphans',
    );
    await assert.rejects(hub.tools('a'), /Power is stopping/);
  });
});
