// The chat report of replies that thought: each such reply's thinking and answer figures in the
// JSON (chat.replies[].parts), the "Thinking vs answer" table of the Markdown and the HTML, and
// the CSV's part columns; nothing of it for replies that did not think.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { parse as parseCsv } from 'csv-parse/sync';

import type { Chat } from '../../app/contract/api/chats.js';
import { chatReport, type Machine } from '../../app/contract/report/chat.js';
import { replyParts } from '../../app/contract/report/parts.js';
import { Report } from '../../app/contract/report/schema.js';
import { CSV_PART_COLUMNS } from '../../app/report/csv.js';
import { renderReport } from '../../app/report/render.js';
import { reply } from '../fixtures/chats.js';
import { assertCsvAgrees, assertMarkdownAgrees, markdownRows, near } from '../fixtures/report-agreement.js';

const MACHINE: Machine = {
  os: { platform: 'linux', release: '6.1', arch: 'x64' },
  cpu: { model: 'Test CPU', logicalCores: 2 },
  memoryBytes: 8 * 2 ** 30,
  gpuDriver: null,
  llamaCppRelease: 'b9999',
  powerVersion: '0.1.0',
  nodeVersion: 'v20.19.0',
};
const BALANCED = { id: 'balanced', name: 'Balanced' };
const IDS = [5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 13];
const user = (id: string) => ({ id, role: 'user' as const, content: 'why?', createdAt: '2026-01-01T00:00:00.000Z' });

/** Turn 1 thought (5 tokens, then the answer), turn 2 did not, turn 3 thought until the budget ended it. */
async function thinkingChat(): Promise<Chat> {
  return {
    id: '00000000-0000-4000-8000-000000000051',
    title: 'Thinking',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:10:00.000Z',
    systemPrompt: null,
    messages: [
      user('u1'),
      await reply({
        id: 't1',
        profile: BALANCED,
        strategy: 'ngram',
        k: 7,
        s: null,
        ids: IDS,
        accepted: [7, 3, 5],
        thinking: { tokens: 5 },
      }),
      user('u2'),
      await reply({ id: 'n2', profile: BALANCED, strategy: 'ngram', k: 7, s: null, ids: IDS, accepted: [7, 3, 5] }),
      user('u3'),
      await reply({
        id: 'b3',
        profile: BALANCED,
        strategy: 'ngram',
        k: 7,
        s: null,
        ids: IDS,
        accepted: [2],
        thinking: { tokens: 9, forced: true },
      }),
    ],
  };
}

function report(chat: Chat): Report {
  return chatReport({ chat, machine: MACHINE, models: [], command: 'test' });
}

describe('the chat report of replies that thought', () => {
  let chat: Chat;
  let r: Report;
  before(async () => {
    chat = await thinkingChat();
    r = report(chat);
  });

  test("the JSON keeps each thinking reply's parts, as parts.ts computes them, and none for the reply that did not think", () => {
    const parsed = Report.parse(JSON.parse(JSON.stringify(r)));
    const messages = chat.messages.filter((m) => m.role === 'assistant');
    assert.deepEqual(
      parsed.chat!.replies.map((x) => x.parts),
      messages.map((m) => replyParts(m) ?? undefined),
    );
    assert.equal(parsed.chat!.replies[1]!.parts, undefined);
    assert.equal(parsed.chat!.replies[2]!.parts!.forced, true);
  });

  test('the Markdown has a Thinking vs answer table: two rows per reply that thought, with tokens, acceptance and tok/s', () => {
    const md = renderReport(r, 'md');
    assertMarkdownAgrees(md, r);
    const rows = markdownRows(md, 'Thinking vs answer');
    assert.deepEqual(
      rows.map((c) => [c[0], c[2], c[3]]),
      [
        ['turn 1', 'thinking', '5'],
        ['turn 1', 'answer', '9'],
        ['turn 3', 'thinking (budget reached)', '9'],
        ['turn 3', 'answer', '5'],
      ],
    );
    const figures = [r.chat!.replies[0]!.parts!.thinking, r.chat!.replies[0]!.parts!.answer];
    rows.slice(0, 2).forEach((cells, i) => {
      const f = figures[i]!;
      assert.deepEqual(cells.slice(4, 7).map(Number), [f.rounds, f.proposed, f.accepted]);
      near(cells[7]!, f.acceptanceRate, 1, `${cells[2]} acceptance`);
      near(cells[8]!, f.tokensPerRound, 2, `${cells[2]} tokens per round`);
      near(cells[9]!, f.ms! / 1000, 2, `${cells[2]} time`);
      near(cells[10]!, f.tokensPerSecond, 1, `${cells[2]} tok/s`);
    });
    // the thinking drafted well here, the answer less: the table tells them apart
    assert.deepEqual([rows[0]![7], rows[1]![7]], ['100.0%', '35.3%']);
  });

  test('the HTML shows the same table', () => {
    const html = renderReport(r, 'html');
    assert.match(html, /<h2>Thinking vs answer \(replies that thought\)<\/h2>/);
    const table = /<table id="table-thinking">([\s\S]*?)<\/table>/.exec(html);
    assert.ok(table, 'the thinking table');
    assert.equal(table[1]!.match(/<tr>/g)!.length, 1 + 4, 'a header and four rows');
    assert.match(table[1]!, /thinking \(budget reached\)/);
  });

  test("the CSV's part columns carry each thinking reply's figures at full precision, empty for the reply that did not think", () => {
    const csv = renderReport(r, 'csv');
    assertCsvAgrees(csv, r);
    const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
    const parts = r.chat!.replies[0]!.parts!;
    assert.deepEqual(
      [rows[0]!.thinkingTokens, rows[0]!.thinkingAcceptanceRate, rows[0]!.answerTokens, rows[0]!.answerAcceptanceRate],
      [
        String(parts.thinking.tokens),
        String(parts.thinking.acceptanceRate),
        String(parts.answer.tokens),
        String(parts.answer.acceptanceRate),
      ],
    );
    assert.equal(rows[0]!.answerTokensPerSecond, String(parts.answer.tokensPerSecond));
    for (const c of CSV_PART_COLUMNS) assert.equal(rows[1]![c], '', `${c} is empty for a reply that did not think`);
  });

  test('a report whose replies did not think has no thinking table and empty part columns', async () => {
    const plain = report({ ...chat, messages: chat.messages.slice(2, 4) });
    assert.doesNotMatch(renderReport(plain, 'md'), /Thinking vs answer/);
    assert.doesNotMatch(renderReport(plain, 'html'), /table-thinking/);
    const rows = parseCsv(renderReport(plain, 'csv'), { columns: true }) as Record<string, string>[];
    for (const c of CSV_PART_COLUMNS) assert.equal(rows[0]![c], '');
  });
});
