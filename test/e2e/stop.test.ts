// Stop in Chromium, against a real `power serve` whose engine host holds every reply after its
// third round until the reply is cancelled (the host's holdReplies hook, turned on by the preload
// test/fixtures/stop-engine-host.mjs). The reply cannot end on its own before Stop is pressed,
// however fast the machine: the test waits for the streaming state it names, never for a time,
// and never races the engine. A server of its own, so no other suite's replies hold. Screenshots of
// the page and the live panel while the reply streams go to test-results/.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import type { Browser, Page } from 'playwright-core';

import { ROOT } from '../../app/paths.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, replyText, ui } from './ui-helpers.js';

const RESULTS = join(ROOT, 'test-results');
const STOP_ENGINE_HOST = pathToFileURL(join(ROOT, 'test', 'fixtures', 'stop-engine-host.mjs')).href;
/** the rounds each reply emits before it holds */
const HELD_AFTER = 3;
const MAX_TOKENS = 1500;

describe('Stop in the page, on a reply held mid-stream', { timeout: 10 * 60_000 }, () => {
  let serve: ServeProcess | null = null;
  let browser: Browser | undefined;
  let page: Page;
  let pageErrors: string[] = [];

  before(async () => {
    await syntheticModels();
    await mkdir(RESULTS, { recursive: true });
    // NODE_OPTIONS reaches the engine host `power serve` forks; the preload leaves every other process alone
    serve = await startServe({
      env: { NODE_OPTIONS: `--import ${STOP_ENGINE_HOST}`, POWER_TEST_HOLD_REPLIES: String(HELD_AFTER) },
    });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('tokens stream with live acceptance, and Stop ends the reply mid-stream, keeps its text (in the chat) and returns to idle', async () => {
    const u = ui(page);
    await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
    await u.load('target', 'draft-model', 'draft-close');
    await u.setSampling('Max tokens', String(MAX_TOKENS));
    await u.closePopovers();
    await u.textbox('Message').fill('Write a long story.');
    await u.button('Send').click();

    // streaming: the reply is busy, its first tokens and the live acceptance rate are shown
    await u.replyStreaming();
    const reply = u.replies().last();
    const tokens = panelFigure(u.panel(), 'Tokens');
    await page.waitForFunction(() => /\d+\.\d%/.test(document.querySelector('.acceptance .headline')?.textContent ?? ''), null, {
      timeout: LONG,
    });
    await page.waitForFunction((dd) => Number(dd?.textContent) > 0, await tokens.elementHandle(), { timeout: LONG });
    assert.equal(await reply.getAttribute('aria-busy'), 'true', 'still streaming: the engine holds the reply until it is cancelled');
    assert.equal(await u.button('Stop').isEnabled(), true, 'Stop is enabled while the reply streams');
    assert.equal(await u.button('Send').isDisabled(), true, 'Send is not');
    assert.equal((await panelFigure(u.panel(), 'Stop reason').textContent())!, 'writing…', 'the panel follows the reply being written');
    const shown = await replyText(reply);
    assert.ok(shown.length > 0, 'text is shown while streaming');

    await u.panel().screenshot({ path: join(RESULTS, 'renderer-live-panel.png') });
    await page.screenshot({ path: join(RESULTS, 'renderer-streaming.png') });

    await u.button('Stop').click();
    await u.replyEnded(1);

    // stopped, with the text it had (and the rest of the held rounds, if they were on their way)
    await reply.locator('header', { hasText: 'stopped' }).waitFor();
    assert.equal(await reply.getAttribute('aria-busy'), 'false');
    assert.equal((await panelFigure(u.panel(), 'Stop reason').textContent())!, 'stopped');
    const kept = await replyText(reply);
    assert.ok(kept.startsWith(shown), `the text shown before Stop is kept:\nbefore: ${shown}\nafter: ${kept}`);
    const count = Number(await tokens.textContent());
    assert.ok(count > 0 && count < MAX_TOKENS, `stopped mid-reply after ${count} tokens`);
    assert.doesNotMatch((await reply.textContent())!, /The reply ended early/, 'a stop is no error');

    // idle again: Stop disabled, and the next message can be sent
    assert.equal(await u.button('Stop').isDisabled(), true, 'Stop is disabled once the reply ended');
    await u.textbox('Message').fill('And another.');
    await u.enabledSoon('Send');
    assert.equal(await u.button('Send').isEnabled(), true, 'Send is enabled again');

    // the stopped reply is the chat's: a reload shows it, stopped, with the same text
    await page.reload();
    const again = u.replies().last();
    await again.locator('header', { hasText: 'stopped' }).waitFor({ timeout: LONG });
    assert.equal(await replyText(again), kept);
  });
});
