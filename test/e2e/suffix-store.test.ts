// The `suffix` store of earlier replies in the page (issue 56): under Load settings, `Remember
// earlier replies for suffix drafting` (on by default), the loaded model's store in tokens and on
// disk, and `Clear`; in the Acceptance panel, a regenerate's rounds drafted from earlier replies.
// The renderer in Debian's Chromium over a real `power serve` with the synthetic models.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, ui } from './ui-helpers.js';

describe('the suffix store in the page', { timeout: 10 * 60_000 }, () => {
  let serve: ServeProcess | null = null;
  let browser: Browser | undefined;
  let page: Page;
  let pageErrors: string[] = [];

  before(async () => {
    await syntheticModels();
    serve = await startServe();
    ({ browser, page, pageErrors } = await openAppPage({ width: 1440, height: 900 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('a regenerate shows its drafts from earlier replies; Load settings shows the store, clears it and turns it off', async () => {
    const u = ui(page);
    await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
    await u.load('target', 'suffix');
    await u.sendAndWait('one two three four five');
    // the same request again: its drafts come from the first reply, which the store took as it started
    await u.regenerate();
    const fromStore = panelFigure(u.panel(), 'Drafted from earlier replies');
    assert.match((await fromStore.textContent())!, /^\d+ rounds? · \d+ \/ [1-9]\d* · expected \d+\.\d\d, got \d+\.\d\d a round$/);

    await u.openPopover('load-settings', 'Load settings');
    const remember = page.getByRole('checkbox', { name: 'Remember earlier replies for suffix drafting' });
    assert.equal(await remember.isChecked(), true, 'on by default');
    const setting = page.locator('.suffix-store');
    await setting.getByText(/^Store for this model: [1-9][\d,]* tokens, [\d.]+ (B|KiB) on disk/).waitFor({ timeout: LONG });
    await setting.getByRole('button', { name: 'Clear', exact: true }).click();
    await setting.getByText(/^Store for this model: 0 tokens, 12 B on disk/).waitFor({ timeout: LONG });
    await remember.uncheck();
    await setting.getByText(/off: new replies are not added or drafted from/).waitFor({ timeout: LONG });
    assert.equal(await remember.isChecked(), false);
  });
});
