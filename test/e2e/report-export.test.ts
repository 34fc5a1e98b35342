// The Report tab in Chromium over a real `power serve` on the real engine: a chat on the
// synthetic target with a draft, an A/B, then every export of the chat's report, each file
// checked against the JSON (schema, CSV rows, Markdown tables, the HTML's charts offline, the
// PDF). The service prints through a wrapper around Debian's Chromium that the test can break,
// to see the error line of a failed export.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { Report } from '../../app/contract/report/schema.js';
import { ROOT } from '../../app/paths.js';
import { CHROMIUM, openAppPage } from '../fixtures/browser.js';
import { syntheticModels } from '../fixtures/models.js';
import { assertCsvAgrees, assertHtmlAgrees, assertMarkdownAgrees } from '../fixtures/report-agreement.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, ui } from './ui-helpers.js';

const RESULTS = join(ROOT, 'test-results');

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let dir: string;
let pageErrors: string[] = [];

let u: ReturnType<typeof ui>;

/** Clicks an export button and returns the downloaded file's name and bytes. */
async function exportFile(label: string): Promise<{ name: string; bytes: Buffer; path: string }> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: LONG }), u.button(`Export ${label}`).click()]);
  // saved under its own name: a browser opens a .html file as a page
  const path = join(dir, download.suggestedFilename());
  await download.saveAs(path);
  return { name: download.suggestedFilename(), bytes: await readFile(path), path };
}

describe('the Report tab exports the chat report in every format', { timeout: 10 * 60_000 }, () => {
  before(async () => {
    await syntheticModels();
    dir = await mkdtemp(join(tmpdir(), 'power-report-e2e-'));
    const wrapper = join(dir, 'chromium');
    await writeFile(
      wrapper,
      `#!/bin/sh\nif [ -e "${join(dir, 'broken')}" ]; then echo "cannot open the display (test)" >&2; exit 1; fi\nexec "${CHROMIUM}" "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    serve = await startServe({ env: { POWER_CHROMIUM: wrapper } });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }, { acceptDownloads: true }));
    u = ui(page);
    await page.goto(serve.url);
  });

  after(async () => {
    await browser?.close();
    assert.equal(await serve?.stop(), 0, 'power serve stops cleanly');
    await rm(dir, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'the page threw nothing');
  });

  test('a chat with an A/B, then JSON, CSV, Markdown, HTML and PDF, and a failed export says why', async () => {
    await u.combo('Model').locator('option', { hasText: 'target' }).first().waitFor({ state: 'attached', timeout: LONG });
    await u.combo('Model').selectOption({ label: 'target' });
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll<HTMLOptionElement>('#method option')).some((o) => o.value === 'draft-model' && !o.disabled),
      null,
      { timeout: LONG },
    );
    await u.combo('Draft method').selectOption('draft-model');
    await u.combo('Draft model').selectOption({ label: 'draft-close' });
    await u.button('Load').click();
    await page.locator('.engine-line[data-status="ready"]').waitFor({ timeout: LONG });
    if ((await page.locator('details.sampling').getAttribute('open')) === null) await page.getByText('Sampling', { exact: true }).click();
    await u.textbox('Max tokens').fill('24');

    for (const [i, text] of ['Tell me about reports.', 'And about charts.'].entries()) {
      await u.textbox('Message').fill(text);
      await u.button('Send').click();
      await u.replyEnded(i + 1);
    }
    await u.button('Run A/B').click();
    const ab = page.getByRole('list', { name: 'A/B results' }).locator('li').first();
    await ab.waitFor({ timeout: LONG });
    assert.match((await ab.textContent())!, /Digests match/);

    await page.getByRole('tab', { name: 'Report' }).click();
    const rows = page.locator('.report tbody tr');
    // two turns: the first reply, the A/B's speculative reply (replaced) and its control
    await page.waitForFunction(() => document.querySelectorAll('.report tbody tr').length === 3, null, { timeout: LONG });
    assert.match((await rows.nth(1).textContent())!, /^2 \(replaced\)/);
    await mkdir(RESULTS, { recursive: true });
    await page.screenshot({ path: join(RESULTS, 'report-tab.png') });

    const json = await exportFile('JSON');
    assert.match(json.name, /^power-chat-tell-me-about-reports-\d{4}-\d\d-\d\d\.json$/);
    const report = Report.parse(JSON.parse(json.bytes.toString('utf8')));
    assert.equal(report.kind, 'power-chat-report');
    assert.equal(report.requests.length, 3);
    assert.deepEqual(
      report.requests.map((r) => [r.task, r.profile === 'control' ? 'control' : 'speculative', r.matchesControl]),
      [
        ['turn 1', 'speculative', null],
        ['turn 2', 'speculative', true],
        ['turn 2', 'control', null],
      ],
    );
    assert.equal(report.environment.backend?.kind, 'cpu');
    assert.deepEqual(
      report.environment.models.map((m) => [m.role, m.name]),
      [
        ['target', 'target.gguf'],
        ['draft', 'draft-close.gguf'],
      ],
    );

    const csv = await exportFile('CSV');
    assert.equal(csv.bytes.toString('utf8').trimEnd().split('\r\n').length - 1, 3, 'one CSV row per assistant message');
    assertCsvAgrees(csv.bytes.toString('utf8'), report);
    assertMarkdownAgrees((await exportFile('Markdown')).bytes.toString('utf8'), report);

    const html = await exportFile('HTML');
    const viewer = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    try {
      const fetched: string[] = [];
      viewer.on('request', (r) => fetched.push(r.url()));
      await viewer.goto(pathToFileURL(html.path).href, { waitUntil: 'load' });
      assert.deepEqual(fetched, [pathToFileURL(html.path).href], 'the page loads nothing but itself');
      await assertHtmlAgrees(viewer, report);
    } finally {
      await viewer.close();
    }

    // a print engine that fails: the error line says so, and nothing else changes
    await writeFile(join(dir, 'broken'), '');
    await u.button('Export PDF').click();
    const alert = page.locator('.report').getByRole('alert');
    await alert.waitFor({ timeout: LONG });
    await page.locator('.report').screenshot({ path: join(RESULTS, 'report-export-error.png') });
    assert.match(
      (await alert.textContent())!,
      /^Export PDF failed: PDF export: .* did not print the PDF \(exit 1\): cannot open the display \(test\)/,
    );
    assert.equal(await rows.count(), 3);
    await rm(join(dir, 'broken'));
    const pdf = await exportFile('PDF');
    assert.equal(pdf.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.match(pdf.name, /\.pdf$/);
    await alert.waitFor({ state: 'detached' });
  });
});
