// The chat list in Chromium over a real `power serve` (no model needed): new, rename, delete,
// and the system prompt kept with the chat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

describe('the chat list over power serve', { timeout: 5 * 60_000 }, () => {
  before(async () => {
    serve = await startServe();
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('New chat, rename and delete', async () => {
    const chats = page.getByRole('navigation', { name: 'Chats' });
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await chats.getByRole('button', { name: 'Rename New chat' }).click();
    await page.getByRole('textbox', { name: 'Chat title' }).fill('Benchmarks on the GPU box');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await chats.getByRole('button', { name: 'Benchmarks on the GPU box', exact: true }).waitFor();
    // the name is the service's: it survives a reload
    await page.reload();
    await chats.getByRole('button', { name: 'Benchmarks on the GPU box', exact: true }).waitFor();
    await page.getByRole('button', { name: 'New chat', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('nav[aria-label=Chats] li').length === 2);
    await chats.getByRole('button', { name: 'Delete Benchmarks on the GPU box' }).click();
    // deleting asks first
    await chats
      .getByRole('group', { name: 'Delete Benchmarks on the GPU box?' })
      .getByRole('button', { name: 'Delete', exact: true })
      .click();
    await page.waitForFunction(() => document.querySelectorAll('nav[aria-label=Chats] li').length === 1);
    assert.equal(await chats.getByRole('button', { name: 'Benchmarks on the GPU box', exact: true }).count(), 0);
  });
});
