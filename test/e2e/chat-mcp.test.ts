// MCP servers in Chromium over a real `power serve` (the service in this process) and a real MCP
// server: server-filesystem on a scratch folder with only list_allowed_directories offered (no
// arguments: greedy, the synthetic target's generic-JSON reply calls it), configured through the
// service before the page opens, since a served page may not add a command. The page turns it on
// for a chat, the reply's call waits in the conversation with its approval prompt; allowed from
// the keyboard, its result shows and the reply goes on below it; denied, the model is told so.
// The MCP servers view lists the server with its tools, imports an mcp.json (a bad entry skipped
// with its reason, a server that fails to connect says why) and shows the page's refusal to add
// a command.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Locator, Page } from 'playwright-core';

import { ROOT } from '../../app/paths.js';
import { openAppPage, seriousAxeViolations } from '../fixtures/browser.js';
import { filesystemServer } from '../fixtures/mcp-servers.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';
import { LONG, replyText, ui } from './ui-helpers.js';

describe('MCP servers in the chat', { timeout: 10 * 60_000 }, () => {
  let serve: InProcessServe | null = null;
  let browser: Browser | undefined;
  let page: Page;
  let pageErrors: string[] = [];
  let folder = '';

  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'power-mcp-ui-'));
    const models = await syntheticModels();
    serve = await startServeWithModels(
      'power-mcp-ui-',
      { 'target.gguf': models['target.gguf'] },
      { staticDir: join(ROOT, 'dist', 'renderer') },
    );
    await serve.service.mcp.add({ server: { ...filesystemServer(folder, 'files'), enabledTools: ['list_allowed_directories'] } });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(`${serve.origin}/?token=${serve.token}`);
    await ui(page).load('target', 'ngram');
    await ui(page).setSampling('Temperature', '0');
    await ui(page).setSampling('Max tokens', '400');
    await ui(page).closePopovers();
  });

  after(async () => {
    await browser?.close();
    await serve?.close();
    await rm(folder, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'the page threw nothing');
  });

  /** Waits until the chat shows a second reply and it has ended (its message is written before it streams). */
  async function wentOn(): Promise<void> {
    await ui(page).replyEnded(2);
    await page.waitForFunction(
      () => document.querySelectorAll('[role=log] article[aria-label=Assistant]')[1]?.getAttribute('aria-busy') === 'false',
      null,
      { timeout: LONG },
    );
  }

  /** A new chat with the files server turned on in its Tools popover, the question sent; the reply that calls. */
  async function calledInNewChat(): Promise<Locator> {
    const u = ui(page);
    // (an empty chat is named New chat too)
    await page.locator('button.new-chat').click();
    await u.openPopover('chat-servers', 'Tools');
    const files = page.getByRole('group', { name: 'MCP servers in this chat' }).getByRole('checkbox', { name: 'files' });
    // checked once the service has it
    await files.click();
    await page.locator('details.chat-servers summary', { hasText: 'Tools (1)' }).waitFor();
    assert.equal(await files.isChecked(), true);
    await u.closePopovers();
    const before = await u.replies().count();
    await u.textbox('Message').fill('Which folders can you read?');
    await u.button('Send').click();
    await u.replyEnded(before + 1);
    return u.replies().nth(before);
  }

  test('a call waits for approval in the chat; allowed from the keyboard, its result shows and the reply goes on', async () => {
    const reply = await calledInNewChat();
    const call = reply.getByRole('region', { name: 'Tool call list_allowed_directories', exact: true });
    await call.waitFor();
    assert.equal(await call.locator('.tool-call-state').textContent(), 'waiting for your answer');
    // waiting, the call is open: its arguments show with the prompt
    assert.equal(await call.locator('.tool-call-toggle').getAttribute('aria-expanded'), 'true');
    assert.equal(await call.getByLabel('Arguments').textContent(), '{}');
    const prompt = call.getByRole('group', { name: 'Run list_allowed_directories?' });
    assert.deepEqual(await prompt.getByRole('button').allTextContents(), ['Allow once', 'Always allow list_allowed_directories', 'Deny']);
    assert.equal(await replyText(reply), '', 'the reply is the call alone, not its JSON');
    assert.equal(await ui(page).replies().count(), 1, 'nothing goes on before the answer');
    assert.deepEqual(await seriousAxeViolations(page, '.tool-call'), [], 'the call and its prompt pass axe-core');

    await prompt.getByRole('button', { name: 'Allow once' }).focus();
    await page.keyboard.press('Enter');
    await wentOn();
    await call.locator('.tool-call-state', { hasText: 'ran (allowed once)' }).waitFor({ timeout: LONG });
    assert.equal(await prompt.count(), 0, 'the prompt is gone once answered');
    // answered, it folds; unfolded from the keyboard, the server's answer names the folder
    assert.equal(await call.locator('.tool-call-toggle').getAttribute('aria-expanded'), 'false');
    await call.locator('.tool-call-toggle').focus();
    await page.keyboard.press('Enter');
    await call.locator('.tool-call-toggle[aria-expanded="true"]').waitFor();
    assert.match((await call.getByLabel('Result').textContent()) ?? '', new RegExp(`Allowed directories:\\s*${folder}`));

    const { chats } = await serve!.service.chats.list({});
    const chat = await serve!.service.chats.get({ chatId: chats[0]!.id });
    const next = chat.messages.at(-1)!;
    assert.ok(next.role === 'assistant' && next.status === 'done' && next.tokens.length > 0, 'the reply went on');
    assert.equal(await replyText(ui(page).replies().nth(1)), next.content.trim(), 'the reply after the result shows below the call');
  });

  test('a denied call says so, and the reply goes on without running it', async () => {
    const reply = await calledInNewChat();
    const call = reply.getByRole('region', { name: 'Tool call list_allowed_directories', exact: true });
    await call.getByRole('button', { name: 'Deny', exact: true }).click();
    await call.locator('.tool-call-state', { hasText: 'denied' }).waitFor({ timeout: LONG });
    await wentOn();
    assert.equal(await call.getByLabel('Result').count(), 0, 'nothing ran');
    await call.locator('.tool-call-toggle').click();
    await call.getByText('You denied it: the model was told so.').waitFor();
  });

  test('the MCP servers view: the server and its tools, an import with a skipped entry, a failed connection, and the page’s refusal of a command', async () => {
    const u = ui(page);
    await u.openPopover('chat-servers', 'Tools');
    await u.button('MCP servers…').click();
    const view = page.getByRole('dialog', { name: 'MCP servers' });
    const files = view.getByRole('listitem', { name: 'MCP server files' });
    // used by the chats above: connected, every tool listed, only the one offered checked
    await files.locator('.mcp-status', { hasText: /^connected · \d+ tools$/ }).waitFor();
    assert.equal(await files.getByRole('checkbox', { name: 'list_allowed_directories' }).isChecked(), true);
    assert.equal(await files.getByRole('checkbox', { name: 'read_text_file' }).isChecked(), false);
    assert.deepEqual(await seriousAxeViolations(page, 'dialog.mcp-dialog'), [], 'the view passes axe-core');

    // a command from a served page: refused, with where to add one instead
    await view.getByRole('textbox', { name: 'Name' }).fill('other');
    await view.getByRole('textbox', { name: 'Command' }).fill('node');
    await view.getByRole('button', { name: 'Add server' }).click();
    const alert = view.locator('#mcp-result[role=alert]');
    await alert.waitFor();
    assert.match(
      (await alert.textContent()) ?? '',
      /^Adding other failed: .*can only be added or changed in the desktop app.*Add stdio servers \(commands\) in the desktop app/,
    );
    assert.equal(await view.getByRole('listitem', { name: 'MCP server other' }).count(), 0);

    // an import: a loopback URL is added, a remote one skipped with its reason
    const json = JSON.stringify({ mcpServers: { near: { url: 'http://127.0.0.1:9/mcp' }, far: { url: 'http://example.com/mcp' } } });
    await view.getByRole('textbox', { name: 'mcp.json' }).fill(json);
    await view.getByRole('button', { name: 'Import', exact: true }).click();
    await view.locator('#mcp-result', { hasText: 'Added near.' }).waitFor();
    assert.match((await view.getByRole('list', { name: 'Skipped entries' }).textContent()) ?? '', /^far: .*on this machine/);
    // nothing listens there: the test says why it failed
    const near = view.getByRole('listitem', { name: 'MCP server near' });
    await near.getByRole('button', { name: 'Test near' }).click();
    await near.locator('.mcp-status', { hasText: /^failed: .*near/ }).waitFor({ timeout: LONG });
    await near.getByRole('button', { name: 'Remove near' }).click();
    await near.waitFor({ state: 'detached' });
    await view.getByRole('button', { name: 'Close' }).click();
  });
});
