// The thinking in the chat, in Chromium over a real `power serve`: a saved chat whose first
// reply thought (a chat document in the data folder, built as the service builds replies) shows
// its thinking folded above the answer with its time and tokens, unfolds and folds from the
// keyboard, and gives the thinking's and the answer's figures under the reply and in the
// Acceptance panel; the reply that did not think has none of it.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import type { AssistantMessage, Chat } from '../../app/contract/api/chats.js';
import { CHAT } from '../../app/service/chat-store.js';
import { writeDocument } from '../../app/service/storage/document.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { reply } from '../fixtures/chats.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { panelFigure, replyText, ui } from './ui-helpers.js';

const TITLE = 'Why is the sky blue?';
const THOUGHT = 'The user asks about the sky. Sunlight scatters off air molecules, blue most.';
const ANSWER = 'Because of **Rayleigh scattering**.';
const BALANCED = { id: 'balanced', name: 'Balanced' };
const IDS = [5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 13];

let serve: ServeProcess | null = null;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];
let thought: AssistantMessage;

/** Turn 1: a reply whose first 5 of 14 tokens were its thinking (round 2 straddles the end); turn 2: a reply that did not think. */
async function savedChat(): Promise<Chat> {
  const user = (id: string, content: string) => ({ id, role: 'user' as const, content, createdAt: '2026-01-01T00:00:00.000Z' });
  thought = {
    ...(await reply({
      id: 'thought',
      profile: BALANCED,
      strategy: 'ngram',
      k: 7,
      s: null,
      ids: IDS,
      accepted: [7, 3, 5],
      thinking: { tokens: 5, text: THOUGHT },
    })),
    content: ANSWER,
  };
  const plain = { ...(await reply({ id: 'plain', profile: BALANCED, strategy: 'ngram', k: 7, s: null, ids: IDS })), content: 'Plain.' };
  return {
    id: '00000000-0000-4000-8000-000000000051',
    title: TITLE,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:10:00.000Z',
    systemPrompt: null,
    messages: [user('u1', TITLE), thought, user('u2', 'And without thinking?'), plain],
  };
}

describe('the thinking in the chat', { timeout: 5 * 60_000 }, () => {
  before(async () => {
    const chat = await savedChat();
    serve = await startServe({
      prepare: async (dataDir) => {
        await mkdir(join(dataDir, 'chats'), { recursive: true });
        await writeDocument(CHAT, join(dataDir, 'chats', `${chat.id}.json`), chat);
      },
    });
    ({ browser, page, pageErrors } = await openAppPage({ width: 1400, height: 900 }));
    await page.goto(serve.url);
    await ui(page).chats().getByRole('button', { name: TITLE, exact: true }).click();
    await ui(page).replies().nth(1).waitFor();
  });

  after(() => closeAppPage(browser, serve, pageErrors));

  test('a reply that thought shows its thinking folded above the answer, with its time and tokens; the answer is the message', async () => {
    const first = ui(page).replies().first();
    const block = first.getByRole('region', { name: 'Thinking', exact: true });
    const toggle = block.getByRole('button');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await block.locator('.thinking-body').isVisible(), false);
    assert.equal(
      await block.locator('.thinking-header').textContent(),
      `Thought for ${(thought.thinking!.ms! / 1000).toFixed(1)} s · 5 tokens`,
    );
    assert.equal(await replyText(first), 'Because of Rayleigh scattering.');
    assert.equal(await first.locator(':scope > .markdown strong').textContent(), 'Rayleigh scattering', 'the answer is Markdown');
    // the reply that did not think has no thinking block
    assert.equal(await ui(page).replies().nth(1).getByRole('region', { name: 'Thinking' }).count(), 0);
  });

  test('the thinking unfolds and folds again from the keyboard', async () => {
    const block = ui(page).replies().first().getByRole('region', { name: 'Thinking', exact: true });
    const toggle = block.getByRole('button');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await block.locator('[aria-expanded="true"]').waitFor();
    assert.equal(await block.locator('.thinking-body').isVisible(), true);
    assert.equal((await block.locator('.thinking-body').textContent())?.trim(), THOUGHT);
    await page.keyboard.press('Space');
    await block.locator('[aria-expanded="false"]').waitFor();
    assert.equal(await block.locator('.thinking-body').isVisible(), false);
  });

  test("the stats and the Acceptance panel give the thinking's and the answer's acceptance apart", async () => {
    const first = ui(page).replies().first();
    // 5 thinking tokens: round 1 and 4 of round 2's 7 accepted proposals; the answer: the rest
    assert.equal(
      await first.locator('.stats-parts').textContent(),
      'thinking 5 tokens, 100.0% accepted, 1429 tok/s · answer 9 tokens, 35.3% accepted, 3000 tok/s',
    );
    assert.equal(await ui(page).replies().nth(1).locator('.stats-parts').count(), 0, 'none for the reply that did not think');
    await first.getByRole('button', { name: 'Inspect', exact: true }).click();
    const panel = ui(page).panel();
    await panel.getByText('The reply you inspected').waitFor();
    assert.equal(await panelFigure(panel, 'Thinking').textContent(), '100.0% · 4 / 4 · 5 tokens · 1429 tok/s');
    assert.equal(await panelFigure(panel, 'Answer').textContent(), '35.3% · 17 / 6 · 9 tokens · 3000 tok/s');
    // the other reply's figures have no parts
    await ui(page).replies().nth(1).getByRole('button', { name: 'Inspect', exact: true }).click();
    await panel.locator('dt', { hasText: 'Thinking' }).waitFor({ state: 'detached' });
  });
});
