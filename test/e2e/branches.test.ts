// Versions and forks in Chromium over a real `power serve` (no model needed): a chat saved before
// versions (document version 3, with an A/B and a regenerated reply) opens with ‹ n/m › on the
// replies that have others, the switcher works from the keyboard and shows the conversation
// that went with each version, and `Fork from here` opens a new chat with the conversation up
// to that message.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { asVersion3, sampleChat } from '../fixtures/chats.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, ui } from './ui-helpers.js';

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

describe('versions and forks over power serve', { timeout: 5 * 60_000 }, () => {
  before(async () => {
    const chat = await sampleChat();
    serve = await startServe({
      prepare: async (dataDir) => {
        await mkdir(join(dataDir, 'chats'), { recursive: true });
        const document = { format: 'power.chat', version: 3, data: asVersion3(chat) };
        await writeFile(join(dataDir, 'chats', `${chat.id}.json`), JSON.stringify(document));
      },
    });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('‹ n/m › switches versions from the keyboard; Fork from here opens a new chat', async () => {
    const { chats, log, button } = ui(page);
    await chats().getByRole('button', { name: 'A/B, peak & a failure', exact: true }).click();
    const versions = log().getByRole('group', { name: 'Versions', exact: true });
    const users = log().getByRole('article', { name: 'You', exact: true });
    await versions.nth(1).waitFor({ timeout: LONG });
    // the A/B turn (its control shown, the speculative reply beside it) and the regenerated reply of turn 2
    assert.equal(await versions.count(), 2);
    assert.equal(await versions.nth(0).getByLabel('Version 2 of 2').count(), 1);
    const turn2 = versions.nth(1);
    assert.equal(await turn2.getByRole('button', { name: 'Next version' }).isDisabled(), true);
    assert.equal(await users.count(), 3);

    // the keyboard: the previous version of turn 2's reply, which had no third turn after it
    await turn2.getByRole('button', { name: 'Previous version' }).focus();
    await page.keyboard.press('Enter');
    await log().getByLabel('Version 1 of 2').waitFor({ timeout: LONG });
    assert.equal(await users.count(), 2, 'the third turn went with the other version');
    // the focus stays on the switcher, now on its other button (the first version has no previous one)
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Next version', null, { timeout: LONG });
    await page.keyboard.press('Enter');
    await log().getByLabel('Version 2 of 2').nth(1).waitFor({ timeout: LONG });
    assert.equal(await users.count(), 3);
    // the service's: it survives a reload
    await turn2.getByRole('button', { name: 'Previous version' }).click();
    await page.reload();
    await chats().getByRole('button', { name: 'A/B, peak & a failure', exact: true }).click();
    await log().getByLabel('Version 1 of 2').waitFor({ timeout: LONG });
    assert.equal(await users.count(), 2);

    // Fork from here on the first question: a new chat with that message alone, opened
    await users.first().getByRole('button', { name: 'Fork from here' }).click();
    await chats().getByRole('button', { name: 'A/B, peak & a failure (fork)', exact: true }).waitFor({ timeout: LONG });
    await page.waitForFunction(() => document.querySelectorAll('[role=log] article').length === 1, null, { timeout: LONG });
    assert.equal(
      await users
        .first()
        .textContent()
        .then((t) => t?.includes('Tell me about speculative decoding.')),
      true,
    );
    assert.equal(await versions.count(), 0, 'a fork holds the conversation shown, without the other versions');
    assert.equal(await button('New chat').count(), 1);
    await page.waitForFunction(() => document.querySelectorAll('nav[aria-label=Chats] li').length === 2);
  });
});
