// The ten defects of issue 19, each as a regression test: the renderer in Debian's Chromium over
// a real `power serve` with the synthetic models, driven by the controls' accessible names. Each
// test starts its own `power serve` on a fresh data folder and its own page, and makes the state
// it needs itself (a loaded model, chats with replies), so each runs alone and in any order.
// Screenshots at 1440×900, 1024×700 and 800×600 go to test-results/.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, before, beforeEach, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { ROOT } from '../../app/paths.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, ui } from './ui-helpers.js';
import { K_MAX } from '../../app/contract/profile.js';

const RESULTS = join(ROOT, 'test-results');

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let u: ReturnType<typeof ui>;
let pageErrors: string[] = [];

async function headerHeight(): Promise<number> {
  return page.evaluate(() => document.querySelector('.top')!.getBoundingClientRect().height);
}

async function selectedOption(id: string): Promise<{ label: string; group: string | null }> {
  return page.evaluate((sel) => {
    const o = document.querySelector<HTMLSelectElement>(sel)!.selectedOptions[0]!;
    return { label: o.textContent ?? '', group: o.parentElement instanceof HTMLOptGroupElement ? o.parentElement.label : null };
  }, `#${id}`);
}

async function chooseModel(name: string, method: string): Promise<void> {
  await u.combo('Model').selectOption({ label: name });
  await page.waitForFunction(([m]) => (document.querySelector('#method') as HTMLSelectElement).value === m, [method], { timeout: LONG });
}

/** the target with its close draft, loaded from the header */
const loadTarget = (): Promise<void> => u.load('target', 'draft-model', 'draft-close');

describe('issue 19: the ten defects stay fixed', { timeout: 15 * 60_000 }, () => {
  before(async () => {
    await syntheticModels();
    await mkdir(RESULTS, { recursive: true });
  });

  beforeEach(async () => {
    serve = await startServe();
    ({ browser, page, pageErrors } = await openAppPage({ width: 1440, height: 900 }));
    u = ui(page);
    await page.goto(serve.url);
    await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
  });

  afterEach(async () => {
    const s = serve;
    serve = null;
    await closeAppPage(browser, s, pageErrors);
  });

  test('defect 4: before a model is loaded Send is disabled with the reason, and nothing creates an empty chat', async () => {
    await u.textbox('Message').fill('Hello before loading');
    assert.equal(await u.button('Send').isDisabled(), true);
    assert.match((await u.runLine().textContent())!, /Load a model first/);
    await u.textbox('Message').press('Enter');
    // what the service holds, read again: no chat was created
    await page.reload();
    await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
    assert.equal(await u.chats().locator('li').count(), 0, 'no chat named after the message');
    assert.equal(await page.locator('.notice').count(), 0, 'no error to read: the reason was said before');
  });

  test('defect 5: a fresh library selects a model (never a draft or an artifact) and its best method; hints do not move the header', async () => {
    await page.waitForFunction(() => (document.querySelector('#target') as HTMLSelectElement).value !== '', null, { timeout: LONG });
    const first = await selectedOption('target');
    assert.equal(first.group, 'Models', `the default ${first.label} is a model`);
    const options = await u.combo('Model').locator('option').allTextContents();
    for (const artifact of ['eagle3-close', 'dflash-close', 'dspark-close'])
      assert.ok(!options.includes(artifact), `${artifact} is not offered as a model to chat with`);
    await page.waitForFunction(
      () => ['mtp', 'draft-model'].includes((document.querySelector('#method') as HTMLSelectElement).value),
      null,
      { timeout: LONG },
    );
    if ((await u.combo('Draft method').inputValue()) === 'draft-model') assert.match((await selectedOption('draft')).label, /draft/);
    const height = await headerHeight();

    await chooseModel('hybrid-mtp', 'mtp');
    assert.equal(await headerHeight(), height, 'the header keeps its height with a hybrid target');
    await chooseModel('target', 'draft-model');
    assert.equal((await selectedOption('draft')).label, 'draft-close', 'a compatible draft model of its family');
    assert.equal(await headerHeight(), height, 'and with an attention-only one');
    // the model's facts and the unavailable methods' reasons are in popovers
    await page.locator('summary[aria-label="About this model"]').click();
    await page.locator('.popover-body', { hasText: 'NextN 0' }).waitFor();
    assert.equal(await headerHeight(), height, 'an open hint floats over the page');
    await page.keyboard.press('Escape');
  });

  test('defect 7: the Load progress bar follows the engine’s progress to the end', async () => {
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { loadSeen: number[] }).loadSeen = seen;
      new MutationObserver(() => {
        const bar = document.querySelector('[role=progressbar][aria-label="Loading progress"]');
        if (bar) seen.push(Number(bar.getAttribute('aria-valuenow')));
      }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow'] });
    });
    await loadTarget();
    const bar = page.getByRole('progressbar', { name: 'Loading progress' });
    // 100 only comes from llama.cpp's callback (through the engine host and the service): the UI never sets it
    assert.equal(await bar.getAttribute('aria-valuenow'), '100');
    const seen = await page.evaluate(() => (window as unknown as { loadSeen: number[] }).loadSeen);
    assert.equal(seen[0], 0, `the bar starts at 0: ${seen}`);
    assert.ok(
      seen.every((v, i) => i === 0 || v >= seen[i - 1]!),
      `and only grows: ${seen}`,
    );
    assert.match((await page.getByTestId('device-badge').textContent())!, /^Device: CPU$/);
  });

  test('defect 1: an invalid or unapplied Custom profile never runs the previous one', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '32');
    await u.combo('Profile').selectOption({ label: 'Peak' });
    await page.locator('.profile-to-run', { hasText: 'Peak K7/S6' }).waitFor();
    const peak = await u.sendAndWait('First, on Peak.');
    assert.match((await peak.locator('header').textContent())!, /Peak K7\/S6/);
    const count = await u.replies().count();

    await u.combo('Profile').selectOption({ label: 'Custom' });
    await u.textbox('K').fill('2.5');
    await u.textbox('Message').fill('Now on Custom.');
    assert.equal(await u.button('Send').isDisabled(), true, 'Send waits for a valid Custom profile');
    assert.match(
      (await u.runLine().textContent())!,
      new RegExp(`The Custom profile is not valid: K must be a whole number from 1 to ${K_MAX}`),
    );
    assert.equal(await u.textbox('K').getAttribute('aria-invalid'), 'true');
    await u.textbox('Message').press('Enter');
    await u.textbox('K').fill('3');
    assert.match((await u.runLine().textContent())!, /Apply the Custom profile first/);
    assert.equal(await u.button('Send').isDisabled(), true, 'and for it to be applied');
    await u.button('Apply').click();
    await page.locator('.profile-to-run', { hasText: 'Custom K3' }).waitFor();
    const custom = await u.sendAndWait('Now on Custom.');
    assert.equal(await u.replies().count(), count + 1, 'the refused Enter sent nothing');
    const header = (await custom.locator('header').textContent())!;
    assert.match(header, /K3 · Custom K3/);
    assert.doesNotMatch(header, /Peak/);
    await u.combo('Profile').selectOption({ label: 'Balanced' });
    await page.locator('.profile-to-run', { hasText: 'Balanced K7/S7' }).waitFor();
  });

  test('defect 8: every reply has its figures, a cut reply says "max tokens", an older one can be inspected; bars and sparkline carry values', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '32');
    await u.sendAndWait('A first reply.');
    await u.setSampling('Max tokens', '8');
    const cut = await u.sendAndWait('Cut me short.');
    const stats = (await cut.getByRole('group', { name: 'Reply stats' }).textContent())!;
    assert.match(stats, /^8 tokens · [\d.]+ tok\/s decode · TTFT [\d.]+ (µs|ms|s) · [\d.]+% accepted · mean length [\d.]+ · max tokens/);
    assert.equal(
      await u
        .replies()
        .filter({ has: page.getByRole('group', { name: 'Reply stats' }) })
        .count(),
      await u.replies().count(),
      'under every reply',
    );

    const first = u.replies().first();
    const tokens = /^(\d+) tokens/.exec((await first.getByRole('group', { name: 'Reply stats' }).textContent())!)![1]!;
    await first.getByRole('button', { name: 'Inspect' }).click();
    await u.panel().getByText('The reply you inspected').waitFor();
    assert.equal(await panelFigure(u.panel(), 'Tokens').textContent(), tokens, 'the panel shows the inspected reply');
    const bars = await u.panel().getByRole('list', { name: 'Acceptance per position' }).locator('li').allTextContents();
    assert.equal(bars.length, 7, 'K bars');
    for (const b of bars) assert.match(b, /^\d+Position \d+: (\d+%|—not reached)$/);
    const spark = u.panel().getByRole('img', { name: /^decode tok\/s per round: \d+ rounds, from [\d.]+ to [\d.]+ tok\/s$/ });
    await spark.waitFor();
    assert.equal(await u.panel().locator('.spark-axis span').count(), 2, 'the scale: top and bottom');
    await first.getByRole('button', { name: 'Inspect' }).click();
    await u.panel().getByText('The last reply').waitFor();
    assert.equal(await panelFigure(u.panel(), 'Stop reason').textContent(), 'max tokens');
  });

  test('defect 2: the A/B keeps both replies, the verdict first in words', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '32');
    const speculative = await u.sendAndWait('For the A/B.');
    const id = await speculative.getAttribute('data-message-id');
    await u.button('Run A/B').click();
    const verdict = u.log().getByRole('group', { name: 'A/B verdict' }).last();
    await verdict.locator('.verdict').waitFor({ timeout: LONG });
    await u.replyEnded(1);
    assert.match((await verdict.locator('.verdict').textContent())!, /^(\d+\.\d× (faster|slower)|as fast \([\d.]+×\)) · Digests match$/);
    assert.match((await verdict.textContent())!, /[\d.]+ tok\/s vs [\d.]+ tok\/s autoregressive/, 'both rates');
    assert.match(
      (await verdict.textContent())!,
      /(request-wide (\d+\.\d× (faster|slower)|as fast \([\d.]+×\)|speed unknown) \(prefills alike|no request-wide speedup: the prefills differ \([^;]+); time to first token [\d.]+ (µs|ms|s) vs [\d.]+ (µs|ms|s)\)/,
      'a request-wide speedup only where both sides prefilled alike, with both times to first token',
    );
    assert.ok(await verdict.isVisible(), 'the verdict is on screen');
    const box = (await verdict.boundingBox())!;
    assert.ok(box.y >= 0 && box.y + box.height <= 900, `in the viewport: ${JSON.stringify(box)}`);

    // the speculative reply stays, with its token origins; the control's is collapsed under it
    assert.equal(await u.replies().last().getAttribute('data-message-id'), id);
    const control = u.log().getByRole('article', { name: 'Control' }).last();
    assert.equal(await control.isVisible(), false, 'collapsed');
    await u.log().locator('details.control-reply > summary').last().click();
    await control.waitFor();
    assert.match((await control.locator('header').textContent())!, / · none · Autoregressive control/);
    await page.getByRole('checkbox', { name: 'Show token origins' }).check();
    assert.ok((await u.replies().last().locator('.tok-accepted').count()) > 0, 'accepted proposals are still shown');
    await page.getByRole('checkbox', { name: 'Show token origins' }).uncheck();

    // the panel follows the speculative reply, and nothing overflows it
    assert.match((await u.panel().locator('.headline').textContent())!, /^\d+\.\d% accepted this reply/);
    const side = await page.evaluate(() => {
      const s = document.querySelector('.side')!;
      return [s.scrollWidth, s.clientWidth];
    });
    assert.ok(side[0]! <= side[1]!, `the side panel does not overflow: ${side}`);
    assert.match(
      (await page.getByRole('list', { name: 'A/B results' }).locator('li').first().textContent())!,
      /^(\d+\.\d× (faster|slower)|as fast)/,
    );
  });

  test('defect 3: the A/B and the rolling figures belong to their chat and model', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '24');
    await u.sendAndWait('A reply with an A/B.');
    await u.button('Run A/B').click();
    await u.log().getByRole('group', { name: 'A/B verdict' }).last().locator('.verdict').waitFor({ timeout: LONG });
    await u.replyEnded(1);
    const firstChat = (await u.chats().locator('[aria-current=true]').textContent())!;
    await page.locator('button.new-chat').click();
    await page.getByText('An empty chat: send a message to start it.').waitFor();
    assert.equal(await page.getByRole('list', { name: 'A/B results' }).locator('li').count(), 0, 'no A/B verdict from another chat');
    assert.equal(await u.log().getByRole('group', { name: 'A/B verdict' }).count(), 0);

    await u.sendAndWait('Target first.');
    await u.load('hybrid-mtp', 'mtp');
    await u.sendAndWait('Then the hybrid.');
    const rolling = u.panel().locator('dt', { hasText: 'Rolling (this chat, hybrid-mtp)' });
    await rolling.waitFor();
    // one hybrid-mtp reply in this chat: its rolling rate is its own rate, not pooled with the target's
    const own = /^([\d.]+%)/.exec((await u.panel().locator('.headline').textContent())!)![1];
    assert.equal(await panelFigure(u.panel(), 'Rolling (this chat, hybrid-mtp)').textContent(), own);

    await u.chats().getByRole('button', { name: firstChat, exact: true }).click();
    await u.log().getByRole('group', { name: 'A/B verdict' }).first().waitFor();
    assert.ok((await page.getByRole('list', { name: 'A/B results' }).locator('li').count()) >= 1, 'its A/B is back with it');
  });

  test('defect 9: Escape stops the reply; another chat says why it cannot send, and Stop acts on the streaming reply only', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '4000');
    const count = await u.replies().count();
    await u.textbox('Message').fill('Write a long story.');
    await u.button('Send').click();
    await u.replyStreaming();
    // stopped mid-reply: once tokens arrive
    await page.waitForFunction(
      () => /^[1-9]\d* tokens/.test(document.querySelector('[role=log] article[aria-busy=true] .reply-stats')?.textContent ?? ''),
      null,
      { timeout: LONG },
    );
    await page.keyboard.press('Escape');
    await u.replyEnded(count + 1);
    await u.replies().last().locator('header', { hasText: 'stopped' }).waitFor();

    await u.textbox('Message').fill('Another long story.');
    await u.button('Send').click();
    await u.replyStreaming();
    await page.locator('button.new-chat').click();
    await page.getByText('An empty chat: send a message to start it.').waitFor();
    await u.textbox('Message').fill('Meanwhile, here.');
    assert.equal(await u.button('Send').isDisabled(), true);
    assert.match((await u.runLine().textContent())!, /A reply is being written in “.+”: wait for it, or open that chat to stop it\./);
    assert.equal(await u.button('Stop').isDisabled(), true, 'Stop here does not stop the other chat’s reply');
    const streaming = u.chats().locator('li[data-streaming=true]');
    assert.equal(await streaming.count(), 1, 'the streaming chat is marked');
    assert.match((await streaming.locator('.chat-open').textContent())!, /writing a reply/);
    await streaming.locator('.chat-open').click();
    await u.button('Stop').click();
    await u.replyEnded(count + 2);
    await u.replies().last().locator('header', { hasText: 'stopped' }).waitFor();
    await u.textbox('Message').fill('');
  });

  test('defect 10: delete asks first and opens another chat; New chat reuses an empty one; every bad field is marked and named; light, dark and system themes', async () => {
    // two chats that hold a reply each
    await loadTarget();
    await u.setSampling('Max tokens', '8');
    await u.sendAndWait('The first chat.');
    await page.locator('button.new-chat').click();
    await page.getByText('An empty chat: send a message to start it.').waitFor();
    await u.sendAndWait('The second chat.');
    // New chat twice: one empty chat (the first one made is reused)
    await page.locator('button.new-chat').click();
    await page.locator('button.new-chat').click();
    await page.getByText('An empty chat: send a message to start it.').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('nav[aria-label=Chats] li').length > 0);
    assert.equal(
      await u
        .chats()
        .locator('li .chat-open', { hasText: /^New chat$/ })
        .count(),
      1,
      'one empty New chat',
    );

    const items = u.chats().locator('li');
    const n = await items.count();
    await u.chats().locator('li').first().locator('.chat-open').click();
    const title = (await u.chats().locator('[aria-current=true]').textContent())!;
    await u
      .chats()
      .getByRole('button', { name: `Delete ${title}`, exact: true })
      .click();
    const confirm = u.chats().getByRole('group', { name: `Delete ${title}?` });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Cancel', exact: true }).click();
    assert.equal(await items.count(), n, 'Cancel keeps it');
    await u
      .chats()
      .getByRole('button', { name: `Delete ${title}`, exact: true })
      .click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForFunction((k) => document.querySelectorAll('nav[aria-label=Chats] li').length === k, n - 1);
    await u.chats().locator('[aria-current=true]').waitFor();
    assert.notEqual(await u.chats().locator('[aria-current=true]').textContent(), title, 'another chat is open');

    await u.setSampling('Temperature', 'hot');
    await u.setSampling('Top-p', '1.5');
    await u.textbox('Message').fill('With bad sampling.');
    assert.equal(await u.textbox('Temperature').getAttribute('aria-invalid'), 'true');
    assert.equal(await u.textbox('Top-p').getAttribute('aria-invalid'), 'true');
    assert.equal(await u.textbox('Max tokens').getAttribute('aria-invalid'), 'false');
    assert.equal(await u.button('Send').isDisabled(), true);
    assert.match((await u.runLine().textContent())!, /Fix Temperature and Top-p under Sampling: Temperature must be .*Top-p must be /);
    await u.setSampling('Temperature', '0');
    await u.setSampling('Top-p', '0.95');
    await u.enabledSoon('Send');
    assert.equal(await u.button('Send').isDisabled(), false);
    await u.textbox('Message').fill('');

    const theme = (): Promise<string | undefined> => page.evaluate(() => document.documentElement.dataset['theme']);
    const background = (): Promise<string> => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await u.combo('Theme').selectOption({ label: 'Dark' });
    assert.equal(await theme(), 'dark');
    const dark = await background();
    await u.combo('Theme').selectOption({ label: 'Light' });
    assert.equal(await theme(), 'light');
    assert.notEqual(await background(), dark);
    await u.combo('Theme').selectOption({ label: 'System' });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.documentElement.dataset['theme'] === 'dark');
    assert.equal(await background(), dark);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.waitForFunction(() => document.documentElement.dataset['theme'] === 'light');
    await u.combo('Theme').selectOption({ label: 'Dark' });
    await page.reload();
    await page.waitForFunction(() => document.documentElement.dataset['theme'] === 'dark');
    assert.equal(await u.combo('Theme').inputValue(), 'dark', 'the choice is kept');
    await u.combo('Theme').selectOption({ label: 'System' });
  });

  test('defect 6: at 1440×900, 1024×700 and 800×600 nothing overflows, the header keeps its height and the conversation keeps half the screen', async () => {
    await loadTarget();
    await u.setSampling('Max tokens', '24');
    await u.sendAndWait('A reply to lay out.');
    for (const [width, height] of [
      [1440, 900],
      [1024, 700],
      [800, 600],
    ] as const) {
      await page.setViewportSize({ width, height });
      await chooseModel('hybrid-mtp', 'mtp');
      const hybrid = await u.layout();
      await chooseModel('target', 'draft-model');
      const target = await u.layout();
      const where = `${width}×${height}`;
      assert.equal(target.header, hybrid.header, `${where}: the header keeps its height`);
      assert.ok(target.log >= height / 2, `${where}: the Messages log is ${target.log} px of ${height}`);
      await u.assertNoHorizontalOverflow(where);
      const narrow = width < 1100;
      assert.equal(await u.button('Show stats').isVisible(), narrow, `${where}: the side panels are toggles below 1100 px`);
      if (narrow) {
        assert.equal(await u.panel().isVisible(), false);
        await u.button('Show stats').click();
        await u.panel().waitFor();
        await page.screenshot({ path: join(RESULTS, `ui-${width}x${height}-stats.png`) });
        await u.button('Hide stats').click();
        await u.panel().waitFor({ state: 'hidden' });
        await u.button('Show chats').click();
        await u.chats().waitFor();
        await u.button('Hide chats').click();
      } else assert.equal(await u.panel().isVisible(), true);
      await page.screenshot({ path: join(RESULTS, `ui-${width}x${height}.png`) });
    }
    // an empty chat: the log still fills the conversation area
    await u.button('Show chats').click();
    await page.locator('button.new-chat').click();
    await page.getByText('An empty chat: send a message to start it.').waitFor();
    assert.ok((await u.layout()).log >= 300, 'the empty log fills its area at 800×600');
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
