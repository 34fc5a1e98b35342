// What the UI suites share: the controls by their accessible names, and waits on the page's
// own state (never on time).
import assert from 'node:assert/strict';

import type { Locator, Page } from 'playwright-core';

/** the machine is shared and slow: generous waits, never timing assertions */
export const LONG = 120_000;

export function ui(page: Page) {
  const combo = (name: string): Locator => page.getByRole('combobox', { name, exact: true });
  const button = (name: string): Locator => page.getByRole('button', { name, exact: true });
  const textbox = (name: string): Locator => page.getByRole('textbox', { name, exact: true });
  const log = (): Locator => page.getByRole('log', { name: 'Messages', exact: true });
  const replies = (): Locator => log().getByRole('article', { name: 'Assistant', exact: true });
  const panel = (): Locator => page.getByRole('region', { name: 'Acceptance', exact: true });
  const chats = (): Locator => page.getByRole('navigation', { name: 'Chats', exact: true });
  const runLine = (): Locator => page.locator('#send-reason');

  async function openPopover(className: string, summary: string): Promise<void> {
    const details = page.locator(`details.${className}`);
    if ((await details.getAttribute('open')) === null) await details.locator('summary', { hasText: summary }).click();
  }

  async function setSampling(label: string, value: string): Promise<void> {
    await openPopover('sampling', 'Sampling');
    await textbox(label).fill(value);
  }

  async function closePopovers(): Promise<void> {
    await page.evaluate(() => document.querySelectorAll('details.popover[open]').forEach((d) => d.removeAttribute('open')));
  }

  /** Chooses a model, a method (then the chain's other members, and a draft) and loads it; waits for the engine to say so. */
  async function load(model: string, method: string, draft?: string, then: readonly string[] = []): Promise<void> {
    await combo('Model').selectOption({ label: model });
    await page.waitForFunction(
      ([m]) => Array.from(document.querySelectorAll<HTMLOptionElement>('#method option')).some((o) => o.value === m && !o.disabled),
      [method],
      { timeout: LONG },
    );
    await combo('Draft method').selectOption(method);
    // a chain chosen before is dropped first: its × buttons
    const remove = page.getByRole('group', { name: 'Chain', exact: true }).getByRole('button');
    while ((await remove.count()) > 0) await remove.first().click();
    for (const next of then) await combo('Then try').selectOption(next);
    if (draft) await combo('Draft model').selectOption({ label: draft });
    await button('Load').click();
    const chain = [method, ...then].join(' → ');
    try {
      await page
        .locator('.engine-line[data-status="ready"]', { hasText: `Loaded ${model} with ${chain}${draft ? `: ${draft}` : ''}` })
        .waitFor({ timeout: LONG });
    } catch (error) {
      // what the page said instead
      const said = await page.evaluate(() => [
        document.querySelector('.engine-line')?.textContent,
        document.querySelector('.notice')?.textContent,
        (document.querySelector('#method') as HTMLSelectElement).value,
        (document.querySelector('#draft') as HTMLSelectElement).value,
      ]);
      throw new Error(`${(error as Error).message}\nthe page: ${JSON.stringify(said)}`);
    }
  }

  /** Types into a Load settings field a value it refuses: the field is marked invalid and an alert there says `says`. */
  async function refusedLoadSetting(label: string, value: string, says: string): Promise<void> {
    await textbox(label).fill(value);
    assert.equal(await textbox(label).getAttribute('aria-invalid'), 'true');
    await page.locator('.load-settings').getByRole('alert').filter({ hasText: says }).waitFor();
  }

  /** Waits (LONG at most) until the named button is enabled: a gate that follows the engine's state updates on a render after it */
  async function enabledSoon(name: string): Promise<void> {
    const handle = await button(name).elementHandle();
    await page.waitForFunction((b) => !(b as HTMLButtonElement).disabled, handle, { timeout: LONG }).catch(() => {});
  }

  /** Waits until `count` Assistant replies are shown and none streams in the open chat. */
  async function replyEnded(count: number): Promise<void> {
    await page.waitForFunction(
      (n) =>
        document.querySelectorAll('[role=log] article[aria-label=Assistant]').length >= n &&
        document.querySelector('[role=log]')?.getAttribute('aria-busy') === 'false',
      count,
      { timeout: LONG },
    );
  }

  async function sendAndWait(text: string): Promise<Locator> {
    const before = await replies().count();
    await textbox('Message').fill(text);
    await button('Send').click();
    await replyEnded(before + 1);
    return replies().last();
  }

  /** Regenerates the last reply and waits until its replacement has ended. */
  async function regenerate(): Promise<void> {
    const count = await replies().count();
    const old = await replies().last().getAttribute('data-message-id');
    await button('Regenerate').click();
    await page.waitForFunction(
      (id) => {
        const all = document.querySelectorAll('[role=log] article[aria-label=Assistant]');
        const last = all[all.length - 1];
        return last?.getAttribute('data-message-id') !== id && last?.getAttribute('aria-busy') === 'false';
      },
      old,
      { timeout: LONG },
    );
    await replyEnded(count);
  }

  /** Waits for a reply to start streaming in the open chat. */
  async function replyStreaming(): Promise<void> {
    await page.waitForFunction(() => document.querySelector('[role=log]')?.getAttribute('aria-busy') === 'true', null, { timeout: LONG });
  }

  /** The viewport, the header, the Messages log; and whether anything sticks out on the right. */
  async function layout(): Promise<{ width: number; height: number; header: number; log: number; scrollWidth: number; outside: string[] }> {
    return page.evaluate(() => {
      const width = window.innerWidth;
      const outside: string[] = [];
      for (const el of Array.from(document.querySelectorAll<HTMLElement>('.top *, .composer *, .tabs-row *'))) {
        if (el.closest('.popover-body')) continue;
        const r = el.getBoundingClientRect();
        if (r.width > 0 && (r.right > width + 0.5 || r.left < -0.5))
          outside.push(`${el.tagName.toLowerCase()}.${el.className}: ${Math.round(r.left)}…${Math.round(r.right)}`);
      }
      return {
        width,
        height: window.innerHeight,
        header: document.querySelector('.top')!.getBoundingClientRect().height,
        log: document.querySelector('[role=log]')!.getBoundingClientRect().height,
        scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
        outside,
      };
    });
  }

  async function assertNoHorizontalOverflow(where: string): Promise<void> {
    const l = await layout();
    assert.ok(l.scrollWidth <= l.width, `${where}: the page is ${l.scrollWidth} px wide in ${l.width}`);
    assert.deepEqual(l.outside, [], `${where}: controls outside the viewport`);
  }

  return {
    enabledSoon,
    combo,
    button,
    textbox,
    log,
    replies,
    panel,
    chats,
    runLine,
    openPopover,
    closePopovers,
    refusedLoadSetting,
    setSampling,
    load,
    replyEnded,
    sendAndWait,
    regenerate,
    replyStreaming,
    layout,
    assertNoHorizontalOverflow,
  };
}

/** The figure next to a label in the Acceptance panel. */
export function panelFigure(panel: Locator, label: string): Locator {
  return panel.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
}

/** a reply's own text (a thinking reply's answer): the article without its header, its thinking, its tool calls and its stats */
export function replyText(reply: Locator): Promise<string> {
  return reply.evaluate((el) => {
    const copy = el.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('header, .thinking, .tool-calls, .reply-stats, .reply-error').forEach((n) => n.remove());
    return (copy.textContent ?? '').trim();
  });
}
