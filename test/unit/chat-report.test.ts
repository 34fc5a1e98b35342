// The chat report (app/contract/report/chat.ts and reports.exportChat): the bench report's schema built
// from a saved chat, the A/B's control pairing, and derived formats that agree with the JSON.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { AssistantMessage, Chat } from '../../app/contract/api/chats.js';
import { everyMessage } from '../../app/contract/branches.js';
import { chatReportFileName } from '../../app/report/chat-export.js';
import { chatReport, ChatReportError, type Machine } from '../../app/contract/report/chat.js';
import { renderReport } from '../../app/report/render.js';
import { Report } from '../../app/contract/report/schema.js';
import { CHAT } from '../../app/service/chat-store.js';
import { createPowerService } from '../../app/service/index.js';
import { writeDocument } from '../../app/service/storage/document.js';
import type { PowerService } from '../../app/service/types.js';
import { reply, sampleChat } from '../fixtures/chats.js';
import { assertCsvAgrees, assertMarkdownAgrees, markdownRows } from '../fixtures/report-agreement.js';

const MACHINE: Machine = {
  os: { platform: 'linux', release: '6.1', arch: 'x64' },
  cpu: { model: 'Test CPU', logicalCores: 2 },
  memoryBytes: 8 * 2 ** 30,
  gpuDriver: null,
  llamaCppRelease: 'b9999',
  powerVersion: '0.1.0',
  nodeVersion: 'v20.19.0',
};
const MODELS = [
  {
    role: 'target' as const,
    name: 'target.gguf',
    sizeBytes: 1000,
    sha256: 'ab'.repeat(32),
    architecture: 'llama',
    quantization: 'F32',
    parameters: 1e6,
  },
];

function report(chat: Chat): Report {
  return chatReport({ chat, machine: MACHINE, models: MODELS, command: 'test' });
}

describe('the chat report', () => {
  let chat: Chat;
  let r: Report;
  before(async () => {
    chat = await sampleChat();
    r = report(chat);
  });

  test('validates against the report schema: same version, the chat variant with its chat section', () => {
    const parsed = Report.parse(JSON.parse(JSON.stringify(r)));
    assert.equal(parsed.schemaVersion, 1);
    assert.equal(parsed.kind, 'power-chat-report');
    assert.equal(parsed.chat!.id, chat.id);
    assert.equal(parsed.chat!.turns, 3);
    // a bench report may not carry a chat section, a chat report must
    assert.equal(Report.safeParse({ ...parsed, kind: 'power-bench-report' }).success, false);
    assert.equal(Report.safeParse({ ...parsed, chat: undefined }).success, false);
  });

  test('one request per completed reply in conversation order, replaced ones first; a failed reply is left out with why', () => {
    assert.deepEqual(
      r.chat!.replies.map((x) => [x.messageId, x.task, x.superseded]),
      [
        ['s1', 'turn 1', true],
        ['c1', 'turn 1', false],
        ['s2', 'turn 2', true],
        ['p2', 'turn 2 (2)', false],
      ],
    );
    assert.deepEqual(
      r.requests.map((q) => [q.task, q.category, q.profile]),
      [
        ['turn 1', 'chat', 'Balanced'],
        ['turn 1', 'chat', 'control'],
        ['turn 2', 'chat', 'Balanced'],
        ['turn 2 (2)', 'chat', 'Peak'],
      ],
    );
    assert.deepEqual(
      r.chat!.left.map((l) => l.messageId),
      ['e3'],
    );
    assert.match(r.chat!.left[0]!.reason, /failed \(the engine stopped during this reply\)/);
    assert.equal(r.requests[3]!.stopReason, 'cancelled');
    assert.equal(r.requests[2]!.seed, 42);
  });

  test("each request carries the reply's evidence and its raw rounds", () => {
    const s1 = chat.branches![0]!.tails[0]![0]! as AssistantMessage;
    const q = r.requests[0]!;
    assert.equal(q.generatedTokens, s1.tokens.length);
    assert.equal(q.digest, s1.digest);
    assert.equal(q.proposed, s1.stats!.proposed);
    assert.equal(q.accepted, s1.stats!.accepted);
    assert.equal(q.rounds, s1.stats!.rounds);
    assert.equal(q.steadyDecodeTokensPerSecond, s1.stats!.steadyDecodeTokensPerSecond);
    assert.deepEqual(q.acceptancePerPosition, s1.stats!.acceptancePerPosition);
    assert.equal(q.samples.length, s1.rounds.length);
    assert.equal(
      q.samples.reduce((n, x) => n + x.emitted, 0),
      q.generatedTokens,
    );
  });

  test("the A/B's control pairs with the reply it replaced: same turn, same sampling; no control elsewhere", () => {
    assert.deepEqual(
      r.requests.map((q) => q.matchesControl),
      [true, null, null, null],
    );
    const balanced = r.profiles.find((p) => p.name === 'Balanced')!;
    assert.equal(balanced.digestMatches, 1);
    assert.equal(balanced.speedup!.steadyDecode.pairs, 1);
    assert.deepEqual(
      r.profiles.map((p) => p.name),
      ['control', 'Balanced', 'Peak'],
    );
    assert.equal(r.profiles.find((p) => p.name === 'Peak')!.speedup!.steadyDecode.pairs, 0);
  });

  /** The chat with its replaced Balanced reply (the A/B's speculative side) written again from these tokens. */
  const withReplaced = async (ids: number[], status?: 'stopped') => {
    const other = structuredClone(chat);
    other.branches![0]!.tails[0]![0] = await reply({
      id: 's1',
      profile: { id: 'balanced', name: 'Balanced' },
      strategy: 'draft-model',
      k: 7,
      s: null,
      ids,
      ...(status ? { status } : {}),
    });
    return other;
  };

  test('an A/B whose control prefilled cold claims no request speedup: the profiles table says the prefill differed, the steady one stays', () => {
    const balancedRow = (rep: Report) => markdownRows(renderReport(rep, 'md'), 'Profiles').find((c) => c[0] === 'Balanced')!;
    const [steady, requestSpeedup] = [7, 9];
    // both sides prefilled alike in the fixture: the ratio is printed
    assert.match(balancedRow(r)[requestSpeedup]!, /^\d+\.\d\dx$/);
    const cold = structuredClone(chat);
    const control = cold.messages[1]!;
    assert.ok(control.role === 'assistant' && control.strategy === 'none' && control.stats);
    // issue 55's A/B: the control's session was cold, its prefill four times slower
    control.stats = {
      ...control.stats,
      ttftMs: control.stats.ttftMs! * 4,
      prefillTokensPerSecond: control.stats.prefillTokensPerSecond! / 4,
      requestTokensPerSecond: control.stats.requestTokensPerSecond! / 3,
    };
    const rep = report(cold);
    const balanced = rep.profiles.find((p) => p.name === 'Balanced')!;
    assert.deepEqual(
      balanced.speedup!.request,
      { ratioOfMedians: null, medianOfTaskRatios: null, pairs: 0, prefilledUnlike: 1 },
      'the JSON leaves the pair out as the table does',
    );
    assert.equal(balancedRow(rep)[requestSpeedup], '- (prefill differed in 1 of 1 pairs)');
    assert.equal(balancedRow(rep)[steady], balancedRow(r)[steady]);
    assert.match(renderReport(rep, 'md'), /The request speedup counts only the pairs that prefilled alike/);
    assertMarkdownAgrees(renderReport(rep, 'md'), rep);
  });

  test('a reply whose tokens differ from its control does not match', async () => {
    const other = await withReplaced([5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 99]);
    assert.equal(report(other).requests[0]!.matchesControl, false);
  });

  test('a reply the user stopped is cut short: it pairs with no control', async () => {
    const stopped = report(await withReplaced([5, 9, 12], 'stopped'));
    assert.deepEqual(
      stopped.requests.slice(0, 2).map((q) => [q.task, q.profile, q.matchesControl]),
      [
        ['turn 1', 'Balanced', null],
        ['turn 1 (2)', 'control', null],
      ],
    );
  });

  test('one app profile name with different settings becomes one report profile per setting', async () => {
    const custom = { id: 'custom', name: 'Custom' };
    const other = structuredClone(chat);
    other.messages.push(
      { id: 'u4', role: 'user', content: 'k4', createdAt: '2026-01-01T00:06:00.000Z' },
      await reply({ id: 'k4', profile: custom, strategy: 'draft-model', k: 4, s: null, ids: [1, 2, 3, 4, 5, 6] }),
      { id: 'u5', role: 'user', content: 'k5', createdAt: '2026-01-01T00:07:00.000Z' },
      await reply({ id: 'k5', profile: custom, strategy: 'draft-model', k: 5, s: null, ids: [1, 2, 3, 4, 5, 6] }),
    );
    const names = report(other).profiles.map((p) => [p.name, p.k]);
    assert.deepEqual(names.slice(-2), [
      ['Custom (draft-model K4 draft-close)', 4],
      ['Custom (draft-model K5 draft-close)', 5],
    ]);
  });

  test('the environment comes from what the replies recorded; older replies say it is unknown', async () => {
    assert.equal(r.environment.backend!.device, 'cpu (Test CPU)');
    assert.deepEqual(r.environment.settings, { gpuLayers: null, flashAttn: 'off', contextSize: 4096, threads: 2, batchSize: 512 });
    assert.deepEqual(r.environment.models, MODELS);
    const old = structuredClone(chat);
    for (const m of everyMessage(old)) if (m.role === 'assistant') delete m.environment;
    const unknown = report(old);
    assert.equal(unknown.environment.backend, null);
    assert.equal(unknown.environment.settings, null);
    assert.match(unknown.chat!.notes.join(' '), /before Power recorded what ran them/);
    assert.match(renderReport(unknown, 'md'), /\| backend \| not recorded \|/);
  });

  test('a chat without a completed reply has no report, and says why', async () => {
    const empty = { ...chat, messages: chat.messages.slice(0, 1), branches: [] };
    assert.throws(
      () => report(empty),
      (e: Error) => e instanceof ChatReportError && /no reply yet/.test(e.message),
    );
    const failed = { ...chat, messages: chat.messages.slice(4), branches: [] };
    assert.throws(
      () => report(failed),
      (e: Error) => e instanceof ChatReportError && /no completed reply/.test(e.message),
    );
  });

  test('the CSV has one row per request and the Markdown tables carry the JSON figures', () => {
    const csv = renderReport(r, 'csv');
    assertCsvAgrees(csv, r);
    const md = renderReport(r, 'md');
    assertMarkdownAgrees(md, r);
    assert.match(md, /^# Power chat report\n/);
    assert.match(md, /\| chat \| A\/B, peak & a failure \(/);
    assert.match(md, /\| left out \| e3: failed/);
    assert.match(md, /\| Balanced \| K7 \| 2 \|.* \| 1\/1 \(1 without control\) \|\n\| Peak \| K7 \| 1 \|.* \| no control \|/);
  });

  test('the HTML is one self-contained page with the three charts and the report as data', () => {
    const html = renderReport(r, 'html');
    assert.doesNotMatch(html, /\s(src|href)=/i, 'nothing to load');
    assert.match(html, /<h1>Power chat report<\/h1>/);
    for (const id of ['tokens-per-second', 'acceptance-per-position', 'speedup-per-category'])
      assert.match(html, new RegExp(`id="chart-${id}"`));
    const block = /<script type="application\/json" id="power-report">(.*)<\/script>/.exec(html)![1]!;
    assert.deepEqual(JSON.parse(block), JSON.parse(JSON.stringify({ ...r, requests: r.requests.map(({ samples: _s, ...q }) => q) })));
  });

  test('file names are safe on every system', () => {
    assert.equal(
      chatReportFileName({ title: 'A/B, peak & a failure' }, 'pdf', new Date('2026-03-04T05:06:07Z')),
      'power-chat-a-b-peak-a-failure-2026-03-04.pdf',
    );
    assert.equal(chatReportFileName({ title: '***' }, 'csv', new Date(0)), 'power-chat-chat-1970-01-01.csv');
  });
});

describe('reports.exportChat in the service', () => {
  let dir: string;
  let service: PowerService;
  let chat: Chat;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-chat-report-'));
    chat = await sampleChat();
    await mkdir(join(dir, 'chats'), { recursive: true });
    await writeDocument(CHAT, join(dir, 'chats', `${chat.id}.json`), chat);
    service = await createPowerService({ dataDir: dir });
  });
  after(async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('returns the file: name, type and bytes of the report built from the saved chat', async () => {
    const file = await service.reports.exportChat({ chatId: chat.id, format: 'json' });
    assert.match(file.fileName, /^power-chat-a-b-peak-a-failure-\d{4}-\d\d-\d\d\.json$/);
    assert.equal(file.mimeType, 'application/json');
    const parsed = Report.parse(JSON.parse(Buffer.from(file.base64, 'base64').toString('utf8')));
    assert.equal(parsed.requests.length, 4);
    assert.equal(parsed.environment.cpu.logicalCores > 0, true);
    // the models are not in this library: said, not invented
    assert.deepEqual(parsed.environment.models, []);
    assert.match(parsed.chat!.notes.join(' '), /target model target is no longer in the library/);
    const csv = await service.reports.exportChat({ chatId: chat.id, format: 'csv' });
    assertCsvAgrees(Buffer.from(csv.base64, 'base64').toString('utf8'), parsed);
  });

  test('bad requests get typed errors', async () => {
    await assert.rejects(service.reports.exportChat({ chatId: 'nope', format: 'json' }), { code: 'not-found' });
    await assert.rejects(service.reports.exportChat({ chatId: chat.id, format: 'docx' as 'json' }), { code: 'bad-input' });
    const empty = await service.chats.create({ title: 'empty' });
    await assert.rejects(service.reports.exportChat({ chatId: empty.id, format: 'md' }), { code: 'bad-input', message: /no reply yet/ });
  });

  test('PDF without a print engine: unsupported, saying what to install', async () => {
    const saved = process.env.POWER_CHROMIUM;
    process.env.POWER_CHROMIUM = join(dir, 'no-such-chromium');
    try {
      await assert.rejects(service.reports.exportChat({ chatId: chat.id, format: 'pdf' }), {
        code: 'unsupported',
        message: /PDF export: POWER_CHROMIUM=.* is not an executable file/,
      });
    } finally {
      if (saved === undefined) delete process.env.POWER_CHROMIUM;
      else process.env.POWER_CHROMIUM = saved;
    }
  });
});
