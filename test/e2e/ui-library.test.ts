// The model library, downloads, load settings, message actions and accessibility of the renderer
// in Debian's Chromium over a real `power serve`: the Models dialog adds the synthetic models by
// their paths to an empty library, downloads come from a local file server (nothing reaches the
// internet), and axe-core runs inside the page. Each test starts its own `power serve` (on an
// empty library, or on the synthetic models' folder) and its own browser context, and loads what
// it needs itself, so each runs alone and in any order.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';

import { MODELS_CACHE, ROOT } from '../../app/paths.js';
import { launchChromium, seriousAxeViolations } from '../fixtures/browser.js';
import { startFileServer, type FileServer } from '../fixtures/file-server.js';
import { startRpcServer } from '../fixtures/rpc-servers.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, ui } from './ui-helpers.js';

const RESULTS = join(ROOT, 'test-results');

let serve: ServeProcess | null = null;
let files: FileServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let dir: string;
let u: ReturnType<typeof ui>;
const pageErrors: string[] = [];

const dialog = (): Locator => page.getByRole('dialog', { name: 'Models' });
const group = (heading: string): Locator => dialog().getByRole('region', { name: heading, exact: true });
const groupNames = async (heading: string): Promise<string[]> => group(heading).locator('li strong').allTextContents();

async function openModels(): Promise<void> {
  if (!(await dialog().isVisible())) await u.button('Models').click();
  await dialog().waitFor();
}

async function closeModels(): Promise<void> {
  await dialog().getByRole('button', { name: 'Close', exact: true }).click();
  await dialog().waitFor({ state: 'hidden' });
}

async function addPath(kind: 'file' | 'folder', path: string): Promise<string> {
  await dialog().getByRole('textbox', { name: 'Path on this machine', exact: true }).fill(path);
  const before = (await dialog().locator('#add-result').textContent()) ?? '';
  await dialog()
    .getByRole('button', { name: kind === 'file' ? 'Add model file' : 'Add model folder', exact: true })
    .click();
  await page.waitForFunction((old) => {
    const now = document.querySelector('#add-result')?.textContent ?? '';
    return now !== '' && now !== old;
  }, before);
  return (await dialog().locator('#add-result').textContent())!;
}

function assertNoViolations(where: string, found: Awaited<ReturnType<typeof seriousAxeViolations>>): void {
  assert.deepEqual(found, [], `${where}: ${found.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(', ')}`).join('; ')}`);
}

describe('issue 19: library, downloads, load settings, messages and accessibility', { timeout: 15 * 60_000 }, () => {
  before(async () => {
    const set = await syntheticModels();
    await mkdir(RESULTS, { recursive: true });
    dir = await mkdtemp(join(tmpdir(), 'power-ui-library-'));
    await writeFile(join(dir, 'not-a-model.gguf'), 'this is a text file, not a GGUF model\n'.repeat(20));
    const target = await readFile(set['target.gguf']);
    files = await startFileServer({
      '/slow/slow-target.gguf': { body: target, trickle: { chunk: 16 * 1024, delayMs: 100 } },
      '/fast/fast-target.gguf': { body: await readFile(set['target-q4_0.gguf']) },
    });
    browser = await launchChromium();
  });

  /** this test's power serve and page: on an empty library (downloads land in it), or on the synthetic models */
  async function open(library: 'empty' | 'synthetic'): Promise<void> {
    const modelsDir = library === 'synthetic' ? MODELS_CACHE : await mkdtemp(join(dir, 'empty-'));
    serve = await startServe({ modelsDir });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    pageErrors.length = 0;
    page.on('pageerror', (e) => pageErrors.push(e.message));
    u = ui(page);
    await page.goto(serve.url);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(serve.url).origin });
    if (library === 'synthetic')
      await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
  }

  afterEach(async () => {
    await context?.close();
    const s = serve;
    serve = null;
    assert.equal(await s?.stop(), 0, 'power serve stops cleanly');
    assert.deepEqual(pageErrors, [], 'the page threw nothing');
  });

  after(async () => {
    await browser?.close();
    await files?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the Models dialog: three groups, Add model file / folder by path, failures in words, Remove keeps the file', async () => {
    await open('empty');
    await u.combo('Model').locator('option', { hasText: 'No models in the library' }).waitFor({ state: 'attached', timeout: LONG });
    await openModels();
    for (const heading of ['Models', 'Draft models', 'Draft artifacts'])
      await dialog().getByRole('heading', { name: heading, exact: true }).waitFor();
    assert.deepEqual(await groupNames('Models'), []);

    assert.match(await addPath('file', MODELS_CACHE), /^A model file ends in \.gguf: for a folder, use Add model folder\.$/);
    assert.equal(await dialog().getByRole('textbox', { name: 'Path on this machine' }).getAttribute('aria-invalid'), 'true');
    const refused = await addPath('file', join(dir, 'not-a-model.gguf'));
    assert.match(refused, /not-a-model\.gguf/);
    assert.ok(await dialog().getByRole('alert').filter({ hasText: 'not-a-model.gguf' }).isVisible(), `in words: ${refused}`);

    assert.equal(await addPath('file', join(MODELS_CACHE, 'target.gguf')), 'Added target.');
    assert.deepEqual(await groupNames('Models'), ['target']);
    assert.match(
      await addPath('folder', MODELS_CACHE),
      /^Added .*hybrid-mtp.*\. Skipped 3: mmproj-gemma4-target\.gguf \(.*is a multimodal projector \(clip\), not a chat model.*\); mmproj-swa-target\.gguf \(.*is a multimodal projector \(clip\), not a chat model.*\); target\.gguf \(.+\)\.$/,
    );
    const models = await groupNames('Models');
    const drafts = await groupNames('Draft models');
    const artifacts = await groupNames('Draft artifacts');
    for (const m of ['target', 'hybrid-mtp', 'swa-target']) assert.ok(models.includes(m), `${m} in Models: ${models}`);
    for (const m of ['draft-close', 'draft-far', 'swa-draft-close']) assert.ok(drafts.includes(m), `${m} in Draft models: ${drafts}`);
    for (const m of ['eagle3-close', 'dflash-close', 'dspark-close'])
      assert.ok(artifacts.includes(m), `${m} in Draft artifacts: ${artifacts}`);
    for (const m of artifacts) assert.ok(!models.includes(m) && !drafts.includes(m), `${m} in one group only`);
    await page.screenshot({ path: join(RESULTS, 'ui-models-dialog.png') });
    assertNoViolations('the Models dialog', await seriousAxeViolations(page, 'dialog.models-dialog'));

    await group('Draft models')
      .locator('li', { has: page.locator('strong', { hasText: /^draft-far$/ }) })
      .getByRole('button', { name: 'Remove', exact: true })
      .click();
    // the list and the result line are two renders: wait for both before reading the line
    await page.waitForFunction(
      () =>
        !Array.from(document.querySelectorAll('dialog li strong')).some((s) => s.textContent === 'draft-far') &&
        (document.querySelector('dialog #add-result')?.textContent ?? '').startsWith('Removed'),
    );
    assert.match(
      (await dialog().locator('#add-result').textContent())!,
      /^Removed draft-far from the library \(the file stays where it is\)\.$/,
    );
    assert.ok((await stat(join(MODELS_CACHE, 'draft-far.gguf'))).size > 0, 'the file is still there');
    await closeModels();

    // the fresh library's default: a model, with its best method
    await page.waitForFunction(() => {
      const o = (document.querySelector('#target') as HTMLSelectElement).selectedOptions[0];
      return o?.parentElement instanceof HTMLOptGroupElement && o.parentElement.label === 'Models';
    });
    await page.waitForFunction(
      () => ['mtp', 'draft-model'].includes((document.querySelector('#method') as HTMLSelectElement).value),
      null,
      { timeout: LONG },
    );
  });

  test('downloads: the recommended pairs, a GGUF address with progress and Cancel download, a finished file joins the library, a failure in words', async () => {
    await open('empty');
    await openModels();
    const pairs = dialog().getByRole('list', { name: 'Recommended pairs' }).locator('li');
    // the built-in pairs (at least four) arrive after the dialog opens
    await pairs.nth(3).waitFor({ timeout: LONG });
    for (const pair of await pairs.all()) assert.equal(await pair.getByRole('button', { name: 'Download', exact: true }).isEnabled(), true);

    const address = dialog().getByRole('textbox', { name: 'GGUF address', exact: true });
    await address.fill(files.url('/slow/slow-target.gguf'));
    await dialog().getByRole('button', { name: 'Download from URL', exact: true }).click();
    const bar = dialog().getByRole('progressbar', { name: 'Download slow-target.gguf' });
    await bar.waitFor({ timeout: LONG });
    await page.waitForFunction(
      () =>
        Number(document.querySelector('[role=progressbar][aria-label="Download slow-target.gguf"]')?.getAttribute('aria-valuenow') ?? 0) >
        0,
      null,
      { timeout: LONG },
    );
    const slow = dialog().locator('li.download', { hasText: 'slow-target.gguf' });
    assert.match((await slow.textContent())!, /\d+% · [\d.]+ (B|KiB|MiB) of [\d.]+ MiB/);
    await slow.getByRole('button', { name: 'Cancel download', exact: true }).click();
    await slow.getByText('cancelled (the partial file was removed)').waitFor({ timeout: LONG });
    assert.equal(await bar.count(), 0);

    await address.fill(files.url('/fast/fast-target.gguf'));
    await dialog().getByRole('button', { name: 'Download from URL', exact: true }).click();
    await dialog()
      .locator('li.download', { hasText: 'fast-target.gguf' })
      .getByText('downloaded and added to the library')
      .waitFor({ timeout: LONG });
    await page.waitForFunction(
      () => Array.from(document.querySelectorAll('dialog li strong')).some((s) => s.textContent === 'fast-target'),
      null,
      { timeout: LONG },
    );

    await address.fill(files.url('/missing/missing.gguf'));
    await dialog().getByRole('button', { name: 'Download from URL', exact: true }).click();
    const failed = dialog().locator('li.download', { hasText: 'missing.gguf' });
    await failed.locator('.form-errors').waitFor({ timeout: LONG });
    assert.match((await failed.textContent())!, /failed: .*404/);
    await closeModels();
  });

  test('load settings: Context size, Threads, Device with free memory, Flash Attention; Unload; one status badge', async () => {
    await open('synthetic');
    await u.openPopover('load-settings', 'Load settings');
    // the devices' memory arrives after the page: wait for it
    await u
      .combo('Device')
      .locator('option', { hasText: /^CPU · .+ GiB free$/ })
      .waitFor({ state: 'attached', timeout: LONG });
    const devices = await u
      .combo('Device')
      .locator('option')
      .evaluateAll((os) => (os as HTMLOptionElement[]).map((o) => ({ value: o.value, label: o.textContent ?? '', disabled: o.disabled })));
    assert.match(devices[0]!.label, /^Auto/);
    assert.match(devices.find((d) => d.value === 'cpu')!.label, /^CPU · .+ · [\d.]+ \/ [\d.]+ GiB free$/);
    for (const d of devices.filter((x) => x.value.startsWith('cuda'))) {
      if (d.disabled) assert.match(d.label, /^(CUDA \(unavailable: .+\)|CUDA\d+ · .+ GiB free)$/);
      else assert.match(d.label, /^CUDA\d+ · .+ · [\d.]+ \/ [\d.]+ GiB free$/);
    }

    await u.refusedLoadSetting('Context size', '8', 'Context size must be a whole number of tokens from 16');
    await u.textbox('Context size').fill('512');
    await u.textbox('Threads').fill('1');
    await u.combo('Device').selectOption('cpu');
    await u.combo('Flash Attention').selectOption('off');
    await page.getByText(/this load needs about .* at ctx 512/).waitFor({ timeout: LONG });
    await u.closePopovers();

    await u.load('target', 'draft-model', 'draft-close');
    assert.match((await page.locator('.engine-line').getAttribute('title'))!, /on cpu .* · ctx 512$/);
    assert.match((await page.getByTestId('device-badge').textContent())!, /^Device: CPU$/);
    await u.setSampling('Max tokens', '16');
    const reply = await u.sendAndWait('With my settings.');
    assert.match((await reply.locator('header .run').getAttribute('title'))!, /· ctx 512 · 1 thread · /);

    await u.button('Unload').click();
    await page.locator('.engine-line[data-status="unloaded"]', { hasText: 'Nothing loaded' }).waitFor();
    await u.textbox('Message').fill('Anyone there?');
    assert.equal(await u.button('Send').isDisabled(), true);
    assert.match((await u.runLine().textContent())!, /Load a model first/);
    await u.load('target', 'draft-model', 'draft-close');
    await u.enabledSoon('Send');
    assert.equal(await u.button('Send').isDisabled(), false);
    await u.textbox('Message').fill('');
  });

  test('load settings: Remote machines splits the model over a power rpc server; a bad entry is marked and named; a machine that goes away ends the reply in words', async () => {
    await open('synthetic');
    const rpc = await startRpcServer();
    try {
      await u.openPopover('load-settings', 'Load settings');
      await u.refusedLoadSetting('Remote machines', 'gpu-box', "host:port of a running power rpc, separated by commas (not 'gpu-box')");
      await u.textbox('Remote machines').fill(rpc.endpoint);
      assert.equal(await u.textbox('Remote machines').getAttribute('aria-invalid'), 'false');
      await u.closePopovers();
      await u.load('target', 'draft-model', 'draft-close');
      await u.setSampling('Max tokens', '12');
      const reply = await u.sendAndWait('Over two machines.');
      assert.equal(await reply.locator('.reply-error').count(), 0, 'the split model replies');

      // the remote machine goes away: the next reply ends with the reason, nothing hangs
      await rpc.kill();
      const failed = await u.sendAndWait('Still there?');
      assert.match((await failed.locator('.reply-error').textContent())!, /remote machine|RPC/i);
    } finally {
      await rpc.stop().catch(() => null);
      await u.openPopover('load-settings', 'Load settings');
      await u.textbox('Remote machines').fill('');
      await u.closePopovers();
    }
    // without it the next load works
    await u.load('target', 'draft-model', 'draft-close');
  });

  test('messages: Copy and Edit (edit and continue)', async () => {
    await open('synthetic');
    await u.load('target', 'draft-model', 'draft-close');
    await u.setSampling('Max tokens', '16');
    await u.sendAndWait('Hello there.');
    const mine = u.log().getByRole('article', { name: 'You' });
    await mine.getByRole('button', { name: 'Copy', exact: true }).click();
    await mine.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'Hello there.');
    const answer = u.replies().last();
    await answer.getByRole('button', { name: 'Copy', exact: true }).click();
    await answer.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    assert.ok((await page.evaluate(() => navigator.clipboard.readText())).length > 0, 'the reply’s text');

    const old = await answer.getAttribute('data-message-id');
    await mine.getByRole('button', { name: 'Edit', exact: true }).click();
    await u.textbox('Edit message').fill('Hello again.');
    await u.button('Save and continue').click();
    await page.waitForFunction(
      (id) => {
        const all = document.querySelectorAll('[role=log] article[aria-label=Assistant]');
        return all.length === 1 && all[0]!.getAttribute('data-message-id') !== id && all[0]!.getAttribute('aria-busy') === 'false';
      },
      old,
      { timeout: LONG },
    );
    assert.deepEqual(
      await u.log().getByRole('article', { name: 'You' }).locator('p').allTextContents(),
      ['Hello again.'],
      'the edited message, and nothing after it but the new reply',
    );
  });

  test('accessibility: axe-core finds no serious or critical violation on the main screen, the Models dialog and the Report tab', async () => {
    await open('synthetic');
    await u.load('target', 'draft-model', 'draft-close');
    await u.setSampling('Max tokens', '16');
    await u.sendAndWait('A reply, for the report.');
    await page.waitForFunction(() => document.querySelector('[role=log]')?.getAttribute('aria-busy') === 'false');
    assertNoViolations('the main screen (light)', await seriousAxeViolations(page));
    await u.combo('Theme').selectOption({ label: 'Dark' });
    assertNoViolations('the main screen (dark)', await seriousAxeViolations(page));
    await openModels();
    assertNoViolations('the Models dialog (dark)', await seriousAxeViolations(page, 'dialog.models-dialog'));
    await closeModels();
    await u.combo('Theme').selectOption({ label: 'System' });
    await page.getByRole('tab', { name: 'Report' }).click();
    await page.locator('.report tbody tr').first().waitFor();
    assertNoViolations('the Report tab', await seriousAxeViolations(page));
    await page.screenshot({ path: join(RESULTS, 'ui-report-tab.png') });
    await page.getByRole('tab', { name: 'Chat' }).click();
  });
});
