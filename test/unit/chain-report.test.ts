// A chain's share of the rounds, computed once (memberStats) from the rounds' `member`: the
// report's profiles carry it and its drafting settings (chain, p-min, adaptive K, FR), the
// Markdown and HTML print them; `power audit` and `power bench` read the chain, p-min and
// adaptive K with power generate's reader and refuse a bad one before any model loads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { auditCommand } from '../../app/cli/audit.js';
import { benchCommand } from '../../app/cli/bench.js';
import { UsageError } from '../../app/cli/errors.js';
import type { Io } from '../../app/cli/generate.js';
import { buildReport } from '../../app/contract/report/build.js';
import {
  Report,
  type Environment,
  type ProfileRun,
  type RequestRecord,
  type RoundSample,
  type RunInfo,
} from '../../app/contract/report/schema.js';
import { memberStats } from '../../app/contract/report/stats.js';
import { reportToCsv } from '../../app/report/csv.js';
import { reportToHtml } from '../../app/report/html.js';
import { reportToMarkdown } from '../../app/report/markdown.js';
import { chatReport, type Machine } from '../../app/contract/report/chat.js';
import { reply, sampleChat } from '../fixtures/chats.js';
import { assertCsvAgrees, markdownRows } from '../fixtures/report-agreement.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const IDS = [5, 9, 12, 7, 3, 3, 8, 1, 4, 6, 2, 11, 10, 13, 14, 15, 16, 17];
const MACHINE: Machine = {
  os: { platform: 'linux', release: '6', arch: 'x64' },
  cpu: { model: 'cpu', logicalCores: 2 },
  memoryBytes: 1024,
  gpuDriver: null,
  llamaCppRelease: 'b1',
  powerVersion: '0.0.0',
  nodeVersion: 'v22',
};

function round(proposed: number, accepted: number, member?: number): RoundSample {
  return {
    proposed,
    accepted,
    emitted: proposed > 0 ? accepted + 1 : 1,
    replay: false,
    clampedTo: null,
    endUs: 1000,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
    ...(member !== undefined ? { member } : {}),
  };
}

function request(profile: string, samples: RoundSample[]): Omit<RequestRecord, 'matchesControl'> {
  const verify = samples.filter((r) => r.proposed > 0);
  const proposed = verify.reduce((n, r) => n + r.proposed, 0);
  const accepted = verify.reduce((n, r) => n + r.accepted, 0);
  return {
    task: 't1',
    category: 'coding',
    profile,
    repeat: 0,
    seed: null,
    promptTokens: 4,
    generatedTokens: samples.reduce((n, r) => n + r.emitted, 0),
    stopReason: 'max-tokens',
    ttftMs: 1,
    prefillTokensPerSecond: 100,
    steadyDecodeTokensPerSecond: 10,
    requestTokensPerSecond: 10,
    proposed,
    accepted,
    rounds: verify.length,
    acceptanceRate: proposed > 0 ? accepted / proposed : null,
    meanAcceptanceLength: null,
    acceptancePerPosition: [],
    replays: 0,
    clampedTo: null,
    digest: DIGEST,
    samples,
  };
}

const ENVIRONMENT: Environment = {
  os: { platform: 'linux', release: '6', arch: 'x64' },
  cpu: { model: 'cpu', logicalCores: 2 },
  memoryBytes: 1024,
  gpus: [],
  gpuDriver: null,
  backend: null,
  llamaCppRelease: 'b1',
  powerVersion: '0.0.0',
  nodeVersion: 'v22',
  models: [],
  settings: null,
};

function benchReport(profiles: ProfileRun[], requests: Omit<RequestRecord, 'matchesControl'>[]): Report {
  const run: RunInfo = {
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: '2026-01-01T00:01:00Z',
    command: 'power bench',
    strategy: profiles[1]!.strategy,
    profiles,
    tasks: { name: 'calibration', count: 1, categories: ['coding'] },
    repeat: 1,
    maxTokens: 16,
    temperature: 0,
    seed: null,
    warmupRounds: 2,
    cancelled: false,
  };
  return buildReport(run, ENVIRONMENT, requests);
}

const CONTROL: ProfileRun = { name: 'control', strategy: 'none', k: null, s: null };
const CHAIN: ProfileRun = { name: 'k4', strategy: 'ngram', k: 4, s: 3, fallbacks: ['mtp'], pMin: 0.2, adaptiveK: true, frVocab: 4096 };
// the first round carries no proposal; ngram drafts twice, mtp once
const CHAIN_ROUNDS = [round(0, 0), round(4, 4, 0), round(3, 1, 1), round(4, 2, 0)];

describe('memberStats', () => {
  test("each member's rounds, proposed and accepted, in chain order; they add up to the totals", () => {
    const stats = memberStats(['ngram', 'mtp'], CHAIN_ROUNDS);
    assert.deepEqual(stats, [
      { strategy: 'ngram', rounds: 2, proposed: 8, accepted: 6, acceptanceRate: 0.75 },
      { strategy: 'mtp', rounds: 1, proposed: 3, accepted: 1, acceptanceRate: 1 / 3 },
    ]);
    const verify = CHAIN_ROUNDS.filter((r) => r.proposed > 0);
    assert.equal(
      stats.reduce((n, m) => n + m.rounds, 0),
      verify.length,
    );
    assert.equal(
      stats.reduce((n, m) => n + m.proposed, 0),
      verify.reduce((n, r) => n + r.proposed, 0),
    );
  });

  test('a member that never drafted is listed with zeros and no acceptance; rounds without a member count for none', () => {
    assert.deepEqual(memberStats(['ngram', 'mtp'], [round(0, 0), round(4, 2, 0)]), [
      { strategy: 'ngram', rounds: 1, proposed: 4, accepted: 2, acceptanceRate: 0.5 },
      { strategy: 'mtp', rounds: 0, proposed: 0, accepted: 0, acceptanceRate: null },
    ]);
  });
});

describe("a chain's report", () => {
  const report = benchReport([CONTROL, CHAIN], [request('control', [round(0, 0), round(0, 0)]), request('k4', CHAIN_ROUNDS)]);

  test("the chain profile's summary carries its members (pooled over its requests); the control has none", () => {
    const [control, chain] = report.profiles;
    assert.equal(control!.members, undefined);
    assert.deepEqual(
      chain!.members?.map((m) => [m.strategy, m.rounds, m.proposed, m.accepted]),
      [
        ['ngram', 2, 8, 6],
        ['mtp', 1, 3, 1],
      ],
    );
    assert.deepEqual(
      report.requests[1]!.samples.map((r) => r.member),
      [undefined, 0, 1, 0],
    );
  });

  test('the Markdown names the chain and its settings, and has a row per member', () => {
    const md = reportToMarkdown(report);
    const run = new Map(markdownRows(md, 'Run').map(([k, v]) => [k, v]));
    assert.equal(run.get('strategy'), 'ngram,mtp');
    assert.equal(run.get('profiles'), 'control (AR), k4 (K4/S3, chain ngram,mtp, p-min 0.2, adaptive K, FR 4096 tokens)');
    assert.deepEqual(markdownRows(md, 'Chain members'), [
      ['k4', 'ngram', '2', '8', '6', '75.0%'],
      ['k4', 'mtp', '1', '3', '1', '33.3%'],
    ]);
  });

  test("the CSV's members column gives each member's rounds, proposed and accepted per request; empty for the control", () => {
    const csv = reportToCsv(report);
    assertCsvAgrees(csv, report);
    // the members column follows matchesControl (the thinking columns after it are empty in a bench report)
    const rows = csv
      .trimEnd()
      .split('\r\n')
      .map((r) => r.split(','));
    const at = rows[0]!.indexOf('members');
    assert.equal(rows[0]![at - 1], 'matchesControl');
    assert.equal(rows[1]![at], '', 'the control: no members');
    assert.equal(rows[2]![at], 'ngram:2:8:6;mtp:1:3:1');
  });

  test('the HTML has the members table and names the chain in its lede', () => {
    const html = reportToHtml(report);
    assert.match(html, /<table id="table-members">/);
    assert.match(html, /strategy ngram,mtp;/);
  });

  test('a one-strategy report has no members table and reads as before', () => {
    const one = benchReport(
      [CONTROL, { name: 'k4', strategy: 'ngram', k: 4, s: null }],
      [request('control', [round(0, 0)]), request('k4', [round(0, 0), round(4, 2)])],
    );
    assert.equal(one.profiles[1]!.members, undefined);
    const md = reportToMarkdown(one);
    assert.doesNotMatch(md, /Chain members/);
    assert.equal(new Map(markdownRows(md, 'Run').map(([k, v]) => [k, v])).get('profiles'), 'control (AR), k4 (K4)');
    assert.doesNotMatch(reportToHtml(one), /table-members/);
  });

  test('a report written before chains (no member, no drafting settings) still validates', () => {
    const old = JSON.parse(JSON.stringify(report)) as Record<string, unknown> & Report;
    delete old.profiles[1]!.members;
    for (const p of old.run.profiles) for (const key of ['fallbacks', 'pMin', 'adaptiveK', 'frVocab'] as const) delete p[key];
    for (const r of old.requests) for (const s of r.samples) delete s.member;
    assert.equal(Report.safeParse(old).success, true);
  });
});

describe("a chat's chain reply", () => {
  test("its report profile records the chain and its settings, and counts each member's rounds from the reply's rounds", async () => {
    const chat = await sampleChat();
    const m = await reply({
      id: 'chain',
      profile: { id: 'custom', name: 'Chain' },
      strategy: 'ngram',
      k: 4,
      s: null,
      ids: IDS,
      accepted: [4, 1],
    });
    // the service keeps each round's member as the engine named it: here ngram and mtp take turns
    const rounds = m.rounds.map((r, i) => (r.proposed > 0 ? { ...r, member: i % 2 } : r));
    const chained = { ...m, rounds, fallbacks: ['mtp' as const], pMin: 0.3, adaptiveK: true, frVocab: 64 };
    chat.messages.push({ id: 'u9', role: 'user', content: 'chain', createdAt: '2026-01-01T00:09:00.000Z' }, chained);
    const r = chatReport({ chat, machine: MACHINE, models: [], command: 'test' });
    const profile = r.profiles.find((p) => p.name === 'Chain')!;
    assert.deepEqual(
      r.run.profiles.find((p) => p.name === 'Chain'),
      { name: 'Chain', strategy: 'ngram', k: 4, s: null, fallbacks: ['mtp'], pMin: 0.3, adaptiveK: true, frVocab: 64 },
    );
    const verify = rounds.filter((x) => x.proposed > 0);
    assert.deepEqual(profile.members, memberStats(['ngram', 'mtp'], verify));
    assert.equal(
      profile.members!.reduce((n, x) => n + x.rounds, 0),
      verify.length,
    );
    assert.equal(
      profile.members!.reduce((n, x) => n + x.accepted, 0),
      profile.accepted,
    );
    assert.ok(profile.members!.every((x) => x.rounds > 0));
    assertCsvAgrees(reportToCsv(r), r);
    const md = reportToMarkdown(r);
    assert.deepEqual(
      markdownRows(md, 'Chain members').map((row) => row.slice(0, 2)),
      [
        ['Chain', 'ngram'],
        ['Chain', 'mtp'],
      ],
    );
    assert.match(
      new Map(markdownRows(md, 'Chat').map(([k, v]) => [k, v])).get('profiles')!,
      /Chain \(K4, chain ngram,mtp, p-min 0\.3, adaptive K, FR 64 tokens\)/,
    );
  });
});

describe('power audit and power bench read a chain, p-min and adaptive K as power generate does', () => {
  const io: Io = { out: () => {}, err: () => {}, onInterrupt: () => () => {} };
  const model = ['--model', '/nonexistent/model.gguf', '--prompt-tokens', '1,2,3'];
  const benchModel = ['--model', '/nonexistent/model.gguf', '--out', '/nonexistent/bench-out'];
  const cases: [string, string[], RegExp][] = [
    ['none in a chain', ['--strategy', 'ngram,none'], /--strategy: 'none' cannot be part of a strategy list/],
    ['a member twice', ['--strategy', 'ngram,ngram'], /'ngram' appears twice/],
    ['an unknown member', ['--strategy', 'ngram,warp'], /'warp' is not a strategy/],
    ['two members that each need the draft', ['--strategy', 'draft-model,eagle3'], /a chain takes one draft/],
    ['p-min out of range', ['--strategy', 'ngram,mtp', '--p-min', '1.5'], /--p-min/],
    [
      'FR without mtp in the chain',
      ['--strategy', 'ngram,draft-model', '--fr-vocab', '64'],
      /applies to strategy 'mtp' only, not 'ngram,draft-model'/,
    ],
  ];
  for (const [command, run] of [
    ['audit', (argv: string[]) => auditCommand([...model, ...argv], io)],
    ['bench', (argv: string[]) => benchCommand([...benchModel, ...argv], io)],
  ] as const) {
    for (const [what, args, pattern] of cases) {
      test(`power ${command} refuses ${what} before any model loads`, async () => {
        await assert.rejects(run(args), (e: unknown) => e instanceof UsageError && pattern.test(e.message));
      });
    }
  }

  test('power audit without --strategy, or with the control, is refused', async () => {
    await assert.rejects(auditCommand(model, io), (e: unknown) => e instanceof UsageError && /needs --strategy/.test(e.message));
    await assert.rejects(
      auditCommand([...model, '--strategy', 'none'], io),
      (e: unknown) => e instanceof UsageError && /the control itself/.test(e.message),
    );
  });
});
