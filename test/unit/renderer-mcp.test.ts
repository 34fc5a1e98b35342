// MCP in the page's logic: the Add form read into a server (refused with the contract's words),
// the status and call lines, which tools a server offers after a checkbox, a chat's servers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  callStateLine,
  chatServersAfter,
  describeTransport,
  EMPTY_MCP_FORM,
  offeredAfter,
  prettyArguments,
  serverFromForm,
  serverStatusLine,
  textBesideCalls,
  toolOffered,
} from '../../renderer/src/logic/mcp.js';

const tool = (name: string) => ({ name, inputSchema: {} });

describe('MCP in the page', () => {
  test('the Add form reads a command with its arguments (one per line) and environment', () => {
    const read = serverFromForm({
      ...EMPTY_MCP_FORM,
      name: 'files',
      command: ' npx ',
      args: '-y\n\nserver with space\n',
      env: 'A=1\nB=x=y',
    });
    assert.deepEqual(read, {
      ok: true,
      server: {
        name: 'files',
        transport: { kind: 'stdio', command: 'npx', args: ['-y', 'server with space'], env: { A: '1', B: 'x=y' } },
        alwaysAllow: [],
      },
    });
    assert.equal(read.ok && describeTransport(read.server.transport), 'npx -y "server with space"');
  });

  test('the Add form reads a loopback URL with its headers, and refuses any other host with the contract’s reason', () => {
    const read = serverFromForm({
      ...EMPTY_MCP_FORM,
      name: 'local',
      kind: 'http',
      url: 'http://127.0.0.1:8931/mcp',
      headers: 'Authorization: Bearer x',
    });
    assert.ok(read.ok);
    assert.deepEqual(read.server.transport, { kind: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer x' } });
    const remote = serverFromForm({ ...EMPTY_MCP_FORM, name: 'far', kind: 'http', url: 'http://example.com/mcp' });
    assert.deepEqual(remote, {
      ok: false,
      errors: ['URL: an HTTP server must be on this machine: http://127.0.0.1:PORT/…, http://localhost:PORT/… or http://[::1]:PORT/…'],
    });
  });

  test('the Add form names every missing or bad field', () => {
    const read = serverFromForm({ ...EMPTY_MCP_FORM, name: ' ', env: 'NOEQUALS' });
    assert.deepEqual(read, { ok: false, errors: ['Environment: "NOEQUALS" is not KEY=VALUE', 'Command: the program to start is missing'] });
    const name = serverFromForm({ ...EMPTY_MCP_FORM, name: '-bad name', command: 'x' });
    assert.ok(!name.ok);
    assert.match(name.errors.join(), /^Name: a server name is letters, digits/);
  });

  test('a server’s status in words: connected with its tools, or failed with the reason', () => {
    assert.equal(serverStatusLine({ status: 'ready', tools: [tool('a'), tool('b')] }), 'connected · 2 tools');
    assert.equal(
      serverStatusLine({ status: 'error', error: 'MCP server "x" could not start: spawn nope ENOENT', tools: [] }),
      'failed: MCP server "x" could not start: spawn nope ENOENT',
    );
    assert.match(serverStatusLine({ status: 'stopped', tools: [] }), /^not started/);
  });

  test('the tools offered after a checkbox: a list while some are off, absent (all) once every one is on', () => {
    const entry = { tools: [tool('a'), tool('b'), tool('c')] };
    assert.equal(toolOffered({}, 'b'), true);
    assert.deepEqual(offeredAfter(entry, 'b', false), ['a', 'c']);
    assert.equal(toolOffered({ ...entry, enabledTools: ['a', 'c'] }, 'b'), false);
    assert.equal(offeredAfter({ ...entry, enabledTools: ['a', 'c'] }, 'b', true), undefined);
    assert.deepEqual(offeredAfter({ ...entry, enabledTools: ['a'] }, 'a', false), []);
  });

  test('a call’s arguments as pretty JSON, and what became of it', () => {
    assert.equal(prettyArguments('{"path":"/tmp","n":1}'), '{\n  "path": "/tmp",\n  "n": 1\n}');
    assert.equal(prettyArguments(''), '{}');
    assert.equal(prettyArguments('{not json'), '{not json');
    assert.equal(callStateLine({ state: 'pending' }, true), 'waiting for your answer');
    assert.equal(callStateLine({ state: 'pending' }, false), 'not answered (the conversation went on)');
    assert.equal(callStateLine({ state: 'done', approval: 'once' }, true), 'ran (allowed once)');
    assert.equal(callStateLine({ state: 'done', approval: 'always' }, true), 'ran (always allowed)');
    assert.equal(callStateLine({ state: 'denied' }, true), 'denied');
    assert.equal(callStateLine({ state: 'error' }, true), 'failed');
  });

  test('a chat’s servers after a switch keep the list’s order and drop servers no longer configured', () => {
    assert.deepEqual(chatServersAfter(['b', 'gone'], ['a', 'b', 'c'], 'a', true), ['a', 'b']);
    assert.deepEqual(chatServersAfter(['a', 'b'], ['a', 'b'], 'a', false), ['b']);
  });

  test('a reply that called tools shows its own text beside the calls once it has ended', () => {
    assert.equal(textBesideCalls({ status: 'done', content: '', toolCalls: [{}] }), '');
    assert.equal(textBesideCalls({ status: 'streaming', content: '', toolCalls: [{}] }), null);
    assert.equal(textBesideCalls({ status: 'done', content: 'hi' }), null);
    assert.equal(textBesideCalls(null), null);
  });
});
