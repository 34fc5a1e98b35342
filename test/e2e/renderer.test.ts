// The renderer in Chromium against a real `power serve` running the real engine on the
// synthetic models: every control of the model bar, the chat and the live panel, driven by
// their accessible names. Screenshots go to test-results/. Stop, and the live panel while a reply
// streams, are in stop.test.ts: a server whose engine holds each reply until it is stopped.
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Locator, Page } from 'playwright-core';

import { Report } from '../../app/contract/report/schema.js';
import { ROOT } from '../../app/paths.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, ui } from './ui-helpers.js';
import { K_MAX } from '../../app/contract/profile.js';

const RESULTS = join(ROOT, 'test-results');
/** the machine is shared and slow: generous waits, never timing assertions */

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

const combo = (name: string): Locator => page.getByRole('combobox', { name, exact: true });
const button = (name: string): Locator => page.getByRole('button', { name, exact: true });
const messageBox = (): Locator => page.getByRole('textbox', { name: 'Message', exact: true });
const panel = (): Locator => page.getByRole('region', { name: 'Acceptance', exact: true });
const log = (): Locator => page.getByRole('log', { name: 'Messages', exact: true });
const replies = (): Locator => log().getByRole('article', { name: 'Assistant', exact: true });

async function openSampling(): Promise<void> {
  const details = page.locator('details.sampling');
  if ((await details.getAttribute('open')) === null) await page.getByText('Sampling', { exact: true }).click();
}

async function setSampling(label: string, value: string): Promise<void> {
  await openSampling();
  await page.getByRole('textbox', { name: label, exact: true }).fill(value);
}

/** Opens the Load settings popover (GPU layers, Flash Attention, the memory estimate...). */
async function openLoadSettings(): Promise<void> {
  const details = page.locator('details.load-settings');
  if ((await details.getAttribute('open')) === null) await page.getByText('Load settings', { exact: true }).click();
}

// the shared steps of the e2e suites (test/e2e/ui-helpers.ts), with this suite's check that a
// reply that ended leaves Stop disabled
const load = (model: string, method: string, draft?: string): Promise<void> => ui(page).load(model, method, draft);

async function replyEnded(count: number): Promise<void> {
  await ui(page).replyEnded(count);
  assert.equal(await button('Stop').isDisabled(), true, 'Stop is disabled once the reply ended');
}

/** Sends a message and waits for the reply to end; returns the reply's article. */
async function sendAndWait(text: string): Promise<Locator> {
  const before = await replies().count();
  await messageBox().fill(text);
  await button('Send').click();
  await replyEnded(before + 1);
  return replies().last();
}

describe('the renderer in Chromium over power serve', { timeout: 15 * 60_000 }, () => {
  before(async () => {
    await syntheticModels();
    await mkdir(RESULTS, { recursive: true });
    serve = await startServe();
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }, { acceptDownloads: true }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('the main screen lists the library and the presets', async () => {
    await combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
    const models = await combo('Model').locator('option').allTextContents();
    for (const name of ['target', 'draft-close', 'hybrid-mtp']) assert.ok(models.includes(name), `${name} in ${models}`);
    assert.deepEqual(await combo('Profile').locator('option').allTextContents(), ['Balanced', 'Peak', 'Autoregressive', 'Custom']);
    await combo('Model').selectOption({ label: 'target' });
    // an attention-only target without NextN layers: no mtp; draft-model with the library's drafts
    await page.waitForFunction(
      () => Array.from(document.querySelectorAll<HTMLOptionElement>('#method option')).some((o) => o.value === 'draft-model'),
      null,
      { timeout: LONG },
    );
    const methods = await combo('Draft method')
      .locator('option')
      .evaluateAll((os) => (os as HTMLOptionElement[]).map((o) => o.value));
    assert.ok(methods.includes('none') && methods.includes('ngram') && methods.includes('draft-model'), String(methods));
    assert.ok(!methods.includes('mtp'), 'mtp is not offered for a target without NextN layers');
    await combo('Draft method').selectOption('draft-model');
    const bad = combo('Draft model').locator('option', { hasText: 'draft-badvocab' });
    assert.equal(await bad.isDisabled(), true, 'an incompatible draft is listed disabled');
    assert.match((await bad.textContent())!, /vocab/i, 'with its reason');
    await openLoadSettings();
    await page.getByText(/this load needs about \d/).waitFor({ timeout: LONG });
    await page.screenshot({ path: join(RESULTS, 'renderer-main.png') });
    await page.keyboard.press('Escape');
  });

  test('a bad custom K/S is refused in the form', async () => {
    await combo('Profile').selectOption({ label: 'Custom' });
    const k = page.getByRole('textbox', { name: 'K', exact: true });
    const s = page.getByRole('textbox', { name: 'S', exact: true });
    await k.fill('0');
    await button('Apply').click();
    await page
      .getByRole('alert')
      .filter({ hasText: `K must be a whole number from 1 to ${K_MAX}` })
      .waitFor();
    assert.equal(await k.getAttribute('aria-invalid'), 'true');
    await k.fill(String(K_MAX + 1));
    await button('Apply').click();
    await page.getByRole('alert').filter({ hasText: 'K must be' }).waitFor();
    // S is not applicable to the attention-only target
    assert.equal(await s.isDisabled(), true);
    await page.getByText(/S: not applicable/).waitFor();
    // on the hybrid target S applies and must not exceed K
    await combo('Model').selectOption({ label: 'hybrid-mtp' });
    await page.waitForFunction(() => !(document.querySelector('#custom-s') as HTMLInputElement).disabled);
    await k.fill('4');
    await s.fill('6');
    await button('Apply').click();
    await page.getByRole('alert').filter({ hasText: 'S must not exceed K (4)' }).waitFor();
    assert.equal(await s.getAttribute('aria-invalid'), 'true');
    await combo('Profile').selectOption({ label: 'Balanced' });
    await page.locator('.profile-to-run', { hasText: 'Balanced K7/S7' }).waitFor();
  });

  test('a bad value is explained where the user is looking, with what to do', async () => {
    await openLoadSettings();
    await page.getByRole('textbox', { name: 'GPU layers', exact: true }).fill('lots');
    await button('Load').click();
    const notice = page.getByRole('alert').filter({ hasText: 'Loading failed.' });
    await notice.waitFor();
    assert.match((await notice.textContent())!, /GPU layers must be a whole number.*Check the values you entered/);
    await openLoadSettings();
    await page.getByRole('textbox', { name: 'GPU layers', exact: true }).fill('-1');
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'detached' });
  });

  test('each draft method loads and streams a reply with live acceptance', async () => {
    await setSampling('Max tokens', '24');
    const runs: Array<[string, string, string | undefined]> = [
      ['target', 'none', undefined],
      ['target', 'ngram', undefined],
      ['hybrid-mtp', 'mtp', undefined],
      ['target', 'draft-model', 'draft-close'],
    ];
    for (const [model, method, draft] of runs) {
      await load(model, method, draft);
      const reply = await sendAndWait(`Tell me about ${method}.`);
      assert.ok(((await reply.textContent()) ?? '').length > 0, `${method}: a reply`);
      assert.match((await reply.locator('header').textContent())!, new RegExp(`${model} · ${method}`));
      const figures = (await panel().textContent())!;
      if (method === 'none') assert.match(figures, /autoregressive/);
      else assert.match(figures, /\d+\.\d%/, `${method}: the acceptance rate as a percentage`);
    }
  });

  test('token origins: coloured by origin with a legend, each token with its round', async () => {
    await page.getByRole('checkbox', { name: 'Show token origins' }).check();
    await page.getByRole('list', { name: 'Token origins' }).waitFor();
    const spans = replies().last().locator('.tok');
    assert.ok((await spans.count()) > 0);
    const origins = await spans.evaluateAll((els) => [...new Set(els.map((e) => e.className))]);
    assert.ok(
      origins.some((c) => /tok-(accepted|correction|bonus)/.test(c)),
      `a draft-model reply has proposal origins: ${origins}`,
    );
    await spans.first().hover();
    assert.match((await spans.first().getAttribute('title'))!, /^round \d+: /);
    await page.screenshot({ path: join(RESULTS, 'renderer-origins.png') });
    await page.getByRole('checkbox', { name: 'Show token origins' }).uncheck();
  });

  test('Regenerate replaces the last reply', async () => {
    const count = await replies().count();
    await ui(page).regenerate();
    assert.equal(await replies().count(), count, 'the reply was replaced, not added');
    assert.doesNotMatch((await replies().last().locator('header').textContent())!, /stopped/, 'the new reply ran to its end');
  });

  test('switching the profile applies to the next message without reloading', async () => {
    await combo('Profile').selectOption({ label: 'Peak' });
    await page.locator('.profile-to-run', { hasText: 'Peak K7/S6' }).waitFor();
    const reply = await sendAndWait('Again, with the peak profile.');
    assert.match((await reply.locator('header').textContent())!, /Peak/);
    assert.match((await page.locator('.engine-line').textContent())!, /Loaded target with draft-model/);
    await combo('Profile').selectOption({ label: 'Balanced' });
    await page.locator('.profile-to-run', { hasText: 'Balanced K7/S7' }).waitFor();
  });

  test('the A/B re-runs the last prompt on the autoregressive control and compares digests', async () => {
    await sendAndWait('One more, for the A/B.');
    await button('Run A/B').click();
    const result = page.getByRole('list', { name: 'A/B results' }).locator('li').first();
    await result.waitFor({ timeout: LONG });
    const text = (await result.textContent())!;
    // a steady-decode figure, and a request-wide one only where both sides prefilled alike
    assert.match(text, /(faster|slower|as fast).*steady decode/);
    assert.match(text, /request-wide .*\(prefills alike|no request-wide speedup: the prefills differ/);
    assert.match(text, /Digests match/, 'greedy speculative decoding is exact');
  });

  test("the report lists the chat's replies, replaced ones included, and exports them as the chat report", async () => {
    await page.getByRole('tab', { name: 'Report' }).click();
    const rows = page.locator('.report tbody tr');
    assert.ok((await rows.count()) >= 8, `rows: ${await rows.count()}`);
    assert.ok((await page.locator('.report tbody tr.replaced').count()) >= 2, 'Regenerate and the A/B kept the replies they replaced');
    const [download] = await Promise.all([page.waitForEvent('download'), button('Export JSON').click()]);
    const report = Report.parse(JSON.parse(await readFile((await download.path())!, 'utf8')));
    assert.equal(report.kind, 'power-chat-report');
    assert.equal(report.requests.length, await rows.count());
    // the A/B's speculative reply and its control: the same tokens
    assert.ok(
      report.requests.some((r) => r.matchesControl === true),
      JSON.stringify(report.requests.map((r) => [r.task, r.profile, r.matchesControl])),
    );
    assert.ok(
      report.requests.every((r) => r.matchesControl !== false),
      'greedy speculative decoding is exact',
    );
    await page.getByRole('tab', { name: 'Chat' }).click();
  });
  test('Reply format JSON with a schema: the reply is shown as formatted JSON and its figures say so', async () => {
    await load('target', 'draft-model', 'draft-close');
    await setSampling('Max tokens', '64');
    await combo('Reply format').selectOption({ label: 'JSON' });
    const schema = {
      type: 'object',
      properties: { pet: { type: 'string', maxLength: 8 }, legs: { type: 'integer' } },
      required: ['pet', 'legs'],
    };
    await page.getByRole('textbox', { name: 'JSON schema', exact: true }).fill(JSON.stringify(schema));
    try {
      const reply = await sendAndWait('A pet, as JSON.');
      const json = reply.getByLabel('JSON reply', { exact: true });
      const shown = (await json.textContent())!;
      assert.match(shown, /^\{\n {2}"pet": /, 'pretty-printed, two spaces');
      assert.deepEqual(Object.keys(JSON.parse(shown) as object).sort(), ['legs', 'pet']);
      assert.match((await reply.locator('.reply-stats').textContent())!, /JSON schema/);
      await page.screenshot({ path: join(RESULTS, 'json-reply.png') });
    } finally {
      await openSampling();
      await combo('Reply format').selectOption({ label: 'Text' });
    }
  });

  test('a chain loads, a Custom profile with p-min and adaptive K applies, and the reply says which member drafted what', async () => {
    await combo('Model').selectOption({ label: 'hybrid-mtp' });
    await page.waitForFunction(
      () => Array.from(document.querySelectorAll<HTMLOptionElement>('#method option')).some((o) => o.value === 'mtp'),
      null,
      {
        timeout: LONG,
      },
    );
    await combo('Draft method').selectOption('ngram-mod');
    // what cannot follow is listed disabled with the contract's reason
    const twice = combo('Then try').locator('option[value="ngram-mod"]');
    assert.equal(await twice.isDisabled(), true);
    assert.match((await twice.getAttribute('title'))!, /'ngram-mod' appears twice/);
    await ui(page).load('hybrid-mtp', 'ngram-mod', undefined, ['mtp']);
    // the chain's members fit the model bar, also on a narrower window
    await page.setViewportSize({ width: 1024, height: 700 });
    await ui(page).assertNoHorizontalOverflow('a loaded chain at 1024×700');
    await page.screenshot({ path: join(RESULTS, 'renderer-chain-1024.png') });
    await page.setViewportSize({ width: 1400, height: 900 });
    await combo('Profile').selectOption({ label: 'Custom' });
    await page.getByRole('textbox', { name: 'K', exact: true }).fill('4');
    await page.getByRole('textbox', { name: 'S', exact: true }).fill('');
    const pMin = page.getByRole('textbox', { name: 'p-min', exact: true });
    await pMin.fill('1.5');
    await button('Apply').click();
    await page.getByRole('alert').filter({ hasText: 'p-min must be a number from 0 to 1' }).waitFor();
    await pMin.fill('0.2');
    await page.getByRole('checkbox', { name: 'Adaptive K' }).check();
    // FR is open to a chain with mtp in it
    const fr = page.getByRole('textbox', { name: 'FR vocab', exact: true });
    assert.equal(await fr.isDisabled(), false);
    await button('Apply').click();
    await page.locator('.profile-to-run', { hasText: 'Custom K4 · p-min 0.2 · adaptive K' }).waitFor({ timeout: LONG });
    await ui(page).closePopovers();
    await setSampling('Max tokens', '48');
    const reply = await sendAndWait('Count: one two three, one two three, one two three.');
    assert.match((await reply.locator('header').textContent())!, /hybrid-mtp · ngram-mod → mtp K4\/S4 · p-min 0.2 · adaptive K/);
    const stats = (await reply.locator('.reply-stats').textContent())!;
    assert.match(stats, /by ngram-mod \d+ rounds? \(.*\), mtp \d+ rounds? \(/, stats);
    assert.match(stats, /p-min 0\.2 · adaptive K/);
    // the members' proposals add up to the reply's
    const proposed = async (label: string): Promise<number> => {
      const text = (await panelFigure(panel(), label).textContent())!;
      return Number(/ · (\d+) \/ \d+ · /.exec(text)?.[1] ?? NaN);
    };
    const total = Number((await panelFigure(panel(), 'Proposed / accepted').textContent())!.split(' / ')[0]);
    assert.equal((await proposed('ngram-mod drafted')) + (await proposed('mtp drafted')), total, (await panel().textContent())!);
    // the synthetic text rarely repeats, so ngram-mod seldom drafts: mtp, asked after it, does
    assert.match((await panelFigure(panel(), 'mtp drafted').textContent())!, /^[1-9]\d* rounds? · /);
    assert.match((await panelFigure(panel(), 'Drafting').textContent())!, /p-min 0\.2 · adaptive K/);
    await page.screenshot({ path: join(RESULTS, 'renderer-chain.png') });
    // token origins name the member that drafted a token's round
    await page.getByRole('checkbox', { name: 'Show token origins' }).check();
    const titles = await reply.locator('.tok').evaluateAll((els) => els.map((e) => e.getAttribute('title') ?? ''));
    assert.ok(
      titles.some((t) => /^round \d+ \(mtp\): /.test(t)),
      titles.slice(0, 5).join(' | '),
    );
    await page.getByRole('checkbox', { name: 'Show token origins' }).uncheck();
    await combo('Profile').selectOption({ label: 'Balanced' });
  });
});
