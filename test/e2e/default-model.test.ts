// What scripts/up.sh opens on a fresh machine: `power serve --default-model` with the real model
// (Gemma 3 270M, scripts/install-real-model.mjs) on a fresh data folder, in Debian's Chromium.
// The page finds the model loaded with ngram and the first message, sent without a visit to the
// Models dialog or a Load, gets a reply that reads as language. Skipped, with the reason, where
// the model is not installed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { readsAsLanguage, REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { startPowerServe, type PowerServe } from '../fixtures/serve.js';
import { LONG, replyText, ui } from './ui-helpers.js';

const MODEL = 'gemma-3-270m-q4_k_m';
const skip = realModelSkip();

describe('the app with the real model as the default', { skip, timeout: 10 * 60_000 }, () => {
  let dir = '';
  let serve: PowerServe | null = null;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-default-model-ui-'));
    serve = await startPowerServe(['--data-dir', join(dir, 'data'), '--default-model', REAL_MODEL]);
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(`${serve.origin}/?token=${serve.token}`);
  });

  after(async () => {
    // power serve saves into its data folder as it stops: the folder goes after it
    try {
      await closeAppPage(browser, serve && { stop: async () => (await serve!.stop()).code }, pageErrors);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the first message, sent without loading anything, gets a reply in language', async () => {
    const u = ui(page);
    await page.locator('.engine-line[data-status="ready"]', { hasText: `Loaded ${MODEL} with ngram` }).waitFor({ timeout: LONG });
    // a base model continues text: a short reply keeps the test quick
    await u.setSampling('Max tokens', '48');
    await u.closePopovers();
    const reply = await u.sendAndWait('The capital of France is Paris. What is the capital of Germany?');
    assert.match((await reply.locator('header').textContent())!, new RegExp(`${MODEL} · ngram`), 'the reply names the model and method');
    const language = readsAsLanguage(await replyText(reply));
    assert.ok(language.ok, `the reply reads as language: ${language.why}`);
  });
});
