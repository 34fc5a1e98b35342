// Images in the chat, in Chromium over a real `power serve` on the synthetic gemma3 target and
// its projector: the attach button says why it is off for a model without one; an image joins
// the message by the file picker and by a drop onto the composer, one by a paste, each a thumbnail
// with its remove button; the sent message shows its thumbnails (a click shows one larger) and the
// reply comes, the Acceptance panel counting the images encoded; an edit of the message shows its
// images, removes one and attaches another. The screenshot goes to test-results/chat-images.png.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { ROOT } from '../../app/paths.js';
import { closeAppPage, openAppPage, seriousAxeViolations } from '../fixtures/browser.js';
import { pngImage } from '../fixtures/images.js';
import { syntheticModels } from '../fixtures/models.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, ui } from './ui-helpers.js';

const RESULTS = join(ROOT, 'test-results');

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

/** Hands `bytes` to the composer as a file the way a drop or a paste does (a DataTransfer on the event). */
async function transfer(kind: 'drop' | 'paste', name: string, bytes: Uint8Array): Promise<void> {
  await page.evaluate(
    ({ kind, name, data }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(data)], name, { type: 'image/png' }));
      if (kind === 'paste') {
        document
          .querySelector('textarea[aria-label=Message]')!
          .dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
      } else {
        const form = document.querySelector('form.composer')!;
        form.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        form.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }
    },
    { kind, name, data: Array.from(bytes) },
  );
}

/** Waits until the chat's user messages show `n` thumbnails, each picture loaded. */
async function sentImagesShown(n: number): Promise<void> {
  await page.waitForFunction(
    (n) => {
      const imgs = Array.from(document.querySelectorAll<HTMLImageElement>('[role=log] article[aria-label=You] .message-images img'));
      return imgs.length === n && imgs.every((i) => i.complete && i.naturalWidth > 0);
    },
    n,
    { timeout: LONG },
  );
}

describe('images in the chat', { timeout: 10 * 60_000 }, () => {
  before(async () => {
    await syntheticModels();
    await mkdir(RESULTS, { recursive: true });
    serve = await startServe();
    ({ browser, page, pageErrors } = await openAppPage({ width: 1280, height: 860 }));
    await page.goto(serve.url);
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('attach, drop and paste images, send them, see the thumbnails and a reply', async () => {
    const u = ui(page);
    const attach = u.button('Attach image');
    const pending = page.getByLabel('Attached images', { exact: true }).locator('figure.image-thumb');

    await u.load('target', 'none');
    assert.equal(await attach.isDisabled(), true, 'a model without a projector reads no images');
    assert.match((await attach.getAttribute('title'))!, /target reads text only: images need its projector/);

    await u.load('swa-target', 'ngram');
    await page.waitForFunction(() => !(document.querySelector('.composer .attach') as HTMLButtonElement).disabled, null, { timeout: LONG });
    await u.setSampling('Max tokens', '24');
    await u.closePopovers();

    await page
      .getByLabel('Image files', { exact: true })
      .setInputFiles({ name: 'first.png', mimeType: 'image/png', buffer: Buffer.from(pngImage(64, 64, 1)) });
    await pending.nth(0).waitFor();
    await transfer('drop', 'dropped.png', pngImage(48, 48, 2));
    await pending.nth(1).waitFor();
    await transfer('paste', 'pasted.png', pngImage(40, 40, 3));
    await pending.nth(2).waitFor();
    // one goes again before the message is sent
    await u.button('Remove dropped.png').click();
    await page.waitForFunction(() => document.querySelectorAll('.pending-images figure').length === 2);
    // the thumbnails show the pictures (the page's CSP lets their data: URLs in)
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll<HTMLImageElement>('.pending-images img')).every((i) => i.complete && i.naturalWidth > 0),
    );
    await page.locator('form.composer').screenshot({ path: join(RESULTS, 'chat-images-composer.png') });

    // a file that is no image is refused with the reason, and nothing is attached
    await page
      .getByLabel('Image files', { exact: true })
      .setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('just text') });
    await page.locator('.notice', { hasText: /notes\.png: this is not an image format Power reads/ }).waitFor();
    assert.equal(await pending.count(), 2);

    const reply = await u.sendAndWait('What is in these pictures?');
    assert.ok(((await reply.textContent()) ?? '').length > 0, 'a reply');
    assert.equal(await pending.count(), 0, 'the composer is empty again');
    const sent = u.log().getByRole('article', { name: 'You', exact: true }).last();
    const thumbs = sent.locator('.message-images img');
    await sentImagesShown(2);
    assert.deepEqual(await thumbs.evaluateAll((is) => is.map((i) => (i as HTMLImageElement).alt)), ['first.png', 'pasted.png']);
    assert.equal(await sent.locator('p').textContent(), 'What is in these pictures?');

    // the thumbnails are the service's: they come back with the chat after a reload
    await page.reload();
    await u.log().getByRole('article', { name: 'You', exact: true }).locator('.message-images img').first().waitFor({ timeout: LONG });
    await page.screenshot({ path: join(RESULTS, 'chat-images.png') });
    assert.deepEqual(await seriousAxeViolations(page), [], 'thumbnails and the attach button pass axe-core');

    await u.log().getByRole('button', { name: 'first.png: show larger' }).click();
    const view = page.getByRole('dialog', { name: 'first.png' });
    await view.waitFor();
    assert.deepEqual(await seriousAxeViolations(page, '.image-view'), [], 'the larger view passes axe-core');
    await page.keyboard.press('Escape');
    await view.waitFor({ state: 'detached' });

    // the Acceptance panel says the projector encoded both images for this reply
    assert.match((await panelFigure(u.panel(), 'Prompt').textContent()) ?? '', /^\d+ tokens · 2 images encoded$/);
  });

  test("an edit shows the message's images: one removed, one attached, the message and its reply follow", async () => {
    const u = ui(page);
    await u.button('New chat').click();
    await u.load('swa-target', 'ngram');
    await page.waitForFunction(() => !(document.querySelector('.composer .attach') as HTMLButtonElement).disabled, null, { timeout: LONG });
    await u.setSampling('Max tokens', '16');
    await u.closePopovers();
    await page.getByLabel('Image files', { exact: true }).setInputFiles([
      { name: 'kept.png', mimeType: 'image/png', buffer: Buffer.from(pngImage(64, 64, 5)) },
      { name: 'dropped.png', mimeType: 'image/png', buffer: Buffer.from(pngImage(48, 48, 6)) },
    ]);
    await page.waitForFunction(() => document.querySelectorAll('.composer .pending-images figure').length === 2);
    await u.sendAndWait('What are these?');
    const mine = u.log().getByRole('article', { name: 'You', exact: true }).last();
    const oldReply = await u.replies().last().getAttribute('data-message-id');
    await mine.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = mine.locator('form.edit-message');
    const shown = form.getByLabel('Images of the message', { exact: true }).locator('figure.image-thumb');
    await shown.nth(1).waitFor();
    assert.equal(await shown.count(), 2, "the message's two images");
    await form.getByRole('button', { name: 'Remove dropped.png', exact: true }).click();
    await form
      .getByLabel('Image files', { exact: true })
      .setInputFiles({ name: 'added.png', mimeType: 'image/png', buffer: Buffer.from(pngImage(56, 56, 4)) });
    await page.waitForFunction(() => document.querySelectorAll('form.edit-message .pending-images figure').length === 2);
    await form.getByRole('textbox', { name: 'Edit message', exact: true }).fill('And these?');
    await form.getByRole('button', { name: 'Save and continue', exact: true }).click();
    await page.waitForFunction(
      (id) => {
        const all = document.querySelectorAll('[role=log] article[aria-label=Assistant]');
        const last = all[all.length - 1];
        return last !== undefined && last.getAttribute('data-message-id') !== id && last.getAttribute('aria-busy') === 'false';
      },
      oldReply,
      { timeout: LONG },
    );
    const edited = u.log().getByRole('article', { name: 'You', exact: true }).last();
    await sentImagesShown(2);
    assert.deepEqual(await edited.locator('.message-images img').evaluateAll((is) => is.map((i) => (i as HTMLImageElement).alt)), [
      'kept.png',
      'added.png',
    ]);
    assert.equal(await edited.locator('p').textContent(), 'And these?');
    assert.equal(await page.locator('.notice', { hasText: 'Editing the message' }).count(), 0, 'no error');
  });
});
