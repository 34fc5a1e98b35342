// The tool-call loop of a chat on a real MCP server. The synthetic target has no tool syntax in
// its template, so its replies are Power's generic JSON (a call or a response); greedy, with one
// tool offered (server-filesystem's list_allowed_directories on a scratch folder: no arguments,
// so a call is short and always valid), it calls the tool. The
// call waits for the user: approved, it runs on the server, its result is stored with it and a
// new reply goes on from it; denied, the model is told so; on a server that crashes, the error
// is in the conversation and the chat goes on. A fork at a reply whose call has not finished asks
// for it again in the fork, with the chat's servers on.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { AssistantMessage, Chat } from '../../app/contract/api/chats.js';
import type { McpServerConfig } from '../../app/contract/api/mcp.js';
import { faultServer, filesystemServer } from '../fixtures/mcp-servers.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';
import { chatWhen, ended, replies, serviceForSuite } from '../fixtures/service.js';

const CRASH: McpServerConfig = faultServer('crash');

describe('tools of MCP servers in a chat', () => {
  const f = serviceForSuite();
  const folder = suiteTempDir('power-mcp-files-');
  const files = (): McpServerConfig => ({ ...filesystemServer(folder(), 'files'), enabledTools: ['list_allowed_directories'] });
  let loaded = false;

  /** a chat with `server` on, whose first reply (greedy) has ended */
  async function calledChat(server: McpServerConfig): Promise<{ chat: Chat; call: NonNullable<AssistantMessage['toolCalls']>[number] }> {
    const { service, models } = f;
    if (!loaded) await service.engine.load({ modelId: models['target.gguf']!.id, device: 'cpu', threads: 1, contextSize: 2048 });
    loaded = true;
    if (!(await service.mcp.list({})).servers.some((s) => s.name === server.name)) await service.mcp.add({ server });
    const created = await service.chats.create({});
    await service.mcp.setChatServers({ chatId: created.id, servers: [server.name] });
    await service.chats.send({ chatId: created.id, content: 'Which folders can you read?', sampling: { temperature: 0, maxTokens: 400 } });
    const chat = await chatWhen(service, created.id, (c) => ended(replies(c)[0]));
    const first = replies(chat)[0]!;
    assert.equal(first.status, 'done', JSON.stringify(first.error));
    assert.equal(first.toolCalls?.length, 1, `the reply calls a tool: ${first.content}`);
    return { chat, call: first.toolCalls[0]! };
  }

  test('a call waits for approval, runs on the server, and the reply goes on with its result', async () => {
    const { service } = f;
    const { chat, call } = await calledChat(files());
    assert.deepEqual(
      [call.name, call.server, call.tool, call.state],
      ['list_allowed_directories', 'files', 'list_allowed_directories', 'pending'],
    );
    const first = replies(chat)[0]!;
    assert.equal(chat.messages.length, 2, 'nothing runs before the answer');

    await service.mcp.answerToolCall({ chatId: chat.id, messageId: first.id, callId: call.id, decision: 'once' });
    const after = await chatWhen(service, chat.id, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    const ran = replies(after)[0]!.toolCalls![0]!;
    assert.equal(ran.state, 'done', JSON.stringify(ran));
    assert.equal(ran.approval, 'once');
    assert.ok(ran.result!.includes(folder()), `the server's answer names the folder: ${ran.result}`);
    const next = replies(after)[1]!;
    assert.equal(next.status, 'done', JSON.stringify(next.error));
    assert.ok(next.tokens.length > 0, 'the reply went on');

    // answered calls cannot be answered again
    await assert.rejects(service.mcp.answerToolCall({ chatId: chat.id, messageId: first.id, callId: call.id, decision: 'deny' }), {
      code: 'bad-input',
    });
  });

  test('a fork at a waiting call keeps the servers on and the call waits there; answered in the fork it runs and the fork goes on', async () => {
    const { service } = f;
    const { chat, call } = await calledChat(files());
    const first = replies(chat)[0]!;
    const fork = await service.chats.fork({ chatId: chat.id, messageId: first.id });
    assert.deepEqual(fork.mcpServers, ['files'], 'the fork offers the same tools');
    const forked = replies(fork)[0]!;
    assert.notEqual(forked.id, first.id);
    assert.deepEqual(
      forked.toolCalls!.map((c) => [c.id, c.name, c.state]),
      [[call.id, 'list_allowed_directories', 'pending']],
    );

    await service.mcp.answerToolCall({ chatId: fork.id, messageId: forked.id, callId: call.id, decision: 'once' });
    const after = await chatWhen(service, fork.id, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    const ran = replies(after)[0]!.toolCalls![0]!;
    assert.equal(ran.state, 'done', JSON.stringify(ran));
    assert.ok(ran.result!.includes(folder()), `the server's answer names the folder: ${ran.result}`);
    assert.equal(replies(after)[1]!.status, 'done', 'the fork went on');
    // the source is untouched: its call still waits for its own answer
    const source = await service.chats.get({ chatId: chat.id });
    assert.equal(source.messages.length, 2);
    assert.equal(replies(source)[0]!.toolCalls![0]!.state, 'pending');
  });

  test('a fork while its call runs in the source: the call waits for an answer in the fork', async () => {
    const { service } = f;
    const { chat, call } = await calledChat(faultServer('hang'));
    const first = replies(chat)[0]!;
    await service.mcp.answerToolCall({ chatId: chat.id, messageId: first.id, callId: call.id, decision: 'once' });
    await chatWhen(service, chat.id, (c) => replies(c)[0]!.toolCalls![0]!.state === 'running');
    const fork = await service.chats.fork({ chatId: chat.id, messageId: first.id });
    const forked = replies(fork)[0]!.toolCalls![0]!;
    assert.equal(forked.state, 'pending');
    assert.equal(forked.approval, undefined, "the source's approval is not the fork's");

    await service.mcp.answerToolCall({ chatId: fork.id, messageId: replies(fork)[0]!.id, callId: call.id, decision: 'deny' });
    const after = await chatWhen(service, fork.id, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    assert.equal(replies(after)[0]!.toolCalls![0]!.state, 'denied');
    assert.equal(replies(after)[1]!.status, 'done', 'the fork went on');
  });

  test('a denied call goes back to the model as a refusal, and nothing runs', async () => {
    const { service } = f;
    const { chat, call } = await calledChat(files());
    const first = replies(chat)[0]!;
    await service.mcp.answerToolCall({ chatId: chat.id, messageId: first.id, callId: call.id, decision: 'deny' });
    const after = await chatWhen(service, chat.id, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    const denied = replies(after)[0]!.toolCalls![0]!;
    assert.equal(denied.state, 'denied');
    assert.equal(denied.result, undefined);
    assert.equal(replies(after)[1]!.status, 'done');
  });

  test('a server that crashes during the call: the error is in the conversation and the chat goes on', async () => {
    const { service } = f;
    const { chat, call } = await calledChat(CRASH);
    assert.equal(call.tool, 'boom');
    const first = replies(chat)[0]!;
    await service.mcp.answerToolCall({ chatId: chat.id, messageId: first.id, callId: call.id, decision: 'once' });
    const after = await chatWhen(service, chat.id, (c) => replies(c).length === 2 && ended(replies(c)[1]));
    const failed = replies(after)[0]!.toolCalls![0]!;
    assert.equal(failed.state, 'error');
    assert.match(failed.error!, /MCP server "crash" exited while running boom \(exit code 7\)/);
    assert.equal(replies(after)[1]!.status, 'done', 'the chat goes on');
  });
});
