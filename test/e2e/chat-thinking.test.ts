// The thinking in the chat, in Chromium over a real `power serve`: a saved chat whose first
// reply thought (a chat document in the data folder, built as the service builds replies) shows
// its thinking folded above the answer with its time and tokens, unfolds and folds from the
// keyboard, and gives the thinking's and the answer's figures under the reply and in the
// Acceptance panel; the reply that did not think has none of it. Then a thinking model (the
// real-vocabulary target with Qwen 3.5's template, whose generation prompt opens the thinking)
// replying live: the thinking streams open while the model thinks, folds once the answer starts
// (the engine's holdReplies hook keeps each reply in flight at a chosen round), and the thinking
// budget ends it.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import type { AssistantMessage, Chat } from '../../app/contract/api/chats.js';
import { ROOT } from '../../app/paths.js';
import { CHAT } from '../../app/service/chat-store.js';
import { writeDocument } from '../../app/service/storage/document.js';
import { closeAppPage, openAppPage } from '../fixtures/browser.js';
import { reply } from '../fixtures/chats.js';
import { thinkingModels } from '../fixtures/models.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';
import { startServe, type ServeProcess } from '../fixtures/serve-process.js';
import { LONG, panelFigure, replyText, ui } from './ui-helpers.js';

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

describe('a thinking model replying in the chat', { timeout: 10 * 60_000 }, () => {
  let live: InProcessServe | null = null;
  let livePage: Page;
  let liveBrowser: Browser | undefined;
  let liveErrors: string[] = [];

  before(async () => {
    const models = await thinkingModels();
    live = await startServeWithModels(
      'power-thinking-ui-',
      { 'thinking-target.gguf': models.target },
      { staticDir: join(ROOT, 'dist', 'renderer'), testHooks: true },
    );
    ({ browser: liveBrowser, page: livePage, pageErrors: liveErrors } = await openAppPage({ width: 1400, height: 900 }));
    await livePage.goto(`${live.origin}/?token=${live.token}`);
    await ui(livePage).load('thinking-target', 'ngram');
    await ui(livePage).setSampling('Max tokens', '64');
    await ui(livePage).closePopovers();
  });

  after(async () => {
    await liveBrowser?.close();
    await live?.close();
    assert.deepEqual(liveErrors, [], 'the page threw nothing');
  });

  /** Sends `text` with the thinking budget `budget`, the engine holding the reply after `rounds` rounds; returns the reply. */
  async function sendHeld(text: string, budget: string, rounds: number) {
    const u = ui(livePage);
    await u.setSampling('Thinking budget', budget);
    await u.closePopovers();
    await live!.service.holdRepliesForTest(rounds);
    const before = await u.replies().count();
    await u.textbox('Message').fill(text);
    await u.button('Send').click();
    await u.replies().nth(before).waitFor({ timeout: LONG });
    return u.replies().nth(before);
  }

  /** Stops the held reply and waits until it has ended. */
  async function stopHeld(): Promise<void> {
    await ui(livePage).button('Stop').click();
    await livePage.waitForFunction(() => document.querySelector('[role=log]')?.getAttribute('aria-busy') === 'false', null, {
      timeout: LONG,
    });
    await live!.service.holdRepliesForTest(null);
  }

  test('the thinking streams open in its block while the model thinks, with its token count; the answer is empty meanwhile', async () => {
    const reply = await sendHeld('Why is the sky blue?', '', 3);
    const block = reply.getByRole('region', { name: 'Thinking', exact: true });
    // held at round 3 with no budget: the model is still thinking
    await block.locator('.thinking-header', { hasText: /^Thinking… [1-9]\d* tokens?$/ }).waitFor({ timeout: LONG });
    assert.equal(await block.getByRole('button').getAttribute('aria-expanded'), 'true');
    assert.equal(await block.locator('.thinking-body').isVisible(), true);
    assert.equal(await replyText(reply), '', 'no answer while the model thinks');
    await stopHeld();
    await block.locator('.thinking-header', { hasText: /^Thinking stopped · [1-9]\d* tokens?$/ }).waitFor();
  });

  test('the budget ends the thinking: the block folds when the answer starts and says so, and the stats give each part', async () => {
    // a budget of 4 ends the thinking within a few rounds; the reply is held at round 16, inside its answer
    const reply = await sendHeld('Tell me about the sea.', '4', 16);
    const block = reply.getByRole('region', { name: 'Thinking', exact: true });
    const header = block.locator('.thinking-header', { hasText: /^Thought for \d+\.\d s · \d+ tokens \(budget reached\)$/ });
    await header.waitFor({ timeout: LONG });
    assert.equal(await reply.getAttribute('aria-busy'), 'true', 'the reply is still being written');
    assert.equal(await block.getByRole('button').getAttribute('aria-expanded'), 'false', 'folded once the answer started');
    assert.equal(await block.locator('.thinking-body').isVisible(), false);
    await stopHeld();
    const { chats } = await live!.service.chats.list({});
    const chat = await live!.service.chats.get({ chatId: chats[0]!.id });
    const message = chat.messages.at(-1)!;
    assert.ok(message.role === 'assistant' && message.thinking, 'the stored reply thought');
    assert.equal(message.thinking.forced, true);
    assert.equal(
      await header.textContent(),
      `Thought for ${(message.thinking.ms! / 1000).toFixed(1)} s · ${message.thinking.tokens} tokens (budget reached)`,
    );
    assert.equal(await replyText(reply), message.content.trim());
    const parts = await reply.locator('.stats-parts').textContent();
    assert.match(
      parts ?? '',
      new RegExp(
        `^thinking ${message.thinking.tokens} tokens, .+ accepted, .+ · answer ${message.tokens.length - message.thinking.tokens} tokens, .+ accepted, .+$`,
      ),
    );
  });
});
