// The UI with the real model: Debian's Chromium against a real `power serve` whose library is
// .cache/real (Gemma 3 270M Q4_K_M, scripts/install-real-model.mjs): load it with ngram, chat
// two turns, and check that both replies read as language; the screenshot of the chat goes to
// test-results/real-model-chat.png. Skipped, with the reason, where the model is not installed.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { ROOT } from '../../app/paths.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { readsAsLanguage, REAL_DIR, realModelSkip } from '../fixtures/real-model.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, replyText, ui } from './ui-helpers.js';

const RESULTS = join(ROOT, 'test-results');
const MODEL = 'gemma-3-270m-q4_k_m';
const skip = realModelSkip();

describe('the UI in Chromium with the real model', { skip, timeout: 15 * 60_000 }, () => {
  let serve: ServeProcess | null = null;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[] = [];

  before(async () => {
    await mkdir(RESULTS, { recursive: true });
    serve = await startServe({ modelsDir: REAL_DIR });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('load Gemma 3 270M, chat two turns: both replies read as language', async () => {
    const u = ui(page);
    await u.combo('Model').locator('option', { hasText: MODEL }).first().waitFor({ state: 'attached', timeout: LONG });
    await u.load(MODEL, 'ngram');
    // a base model continues text: short replies keep the test quick
    await u.setSampling('Max tokens', '48');
    await u.closePopovers();
    const turns = ['The capital of France is Paris. What is the capital of Germany?', 'Tell me one thing about the city of Berlin.'];
    const texts: string[] = [];
    for (const message of turns) {
      const reply = await u.sendAndWait(message);
      assert.match((await reply.locator('header').textContent())!, new RegExp(`${MODEL} · ngram`), 'the reply names the model and method');
      texts.push(await replyText(reply));
    }
    assert.equal(await u.replies().count(), 2, 'two replies in the chat');
    for (const [i, text] of texts.entries()) {
      const language = readsAsLanguage(text);
      assert.ok(language.ok, `reply ${i + 1} reads as language: ${language.why}`);
    }
    await page.screenshot({ path: join(RESULTS, 'real-model-chat.png') });
  });
});
