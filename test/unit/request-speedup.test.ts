// The JSON export's request-wide speedup (profiles[].speedup.request) counts a (task, repeat)
// pair only where both requests prefilled alike, by the rule the profiles table prints
// (app/contract/report/prefill.ts): the same prompt tokens evaluated and kept from the previous
// request, at prefill rates within PREFILL_BAND. It says how many pairs it counted and left out,
// and the table's cell says the same from it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { buildReport } from '../../app/contract/report/build.js';
import { chatReport, type Machine } from '../../app/contract/report/chat.js';
import { PREFILL_BAND, prefillsAlike } from '../../app/contract/report/prefill.js';
import { Report, type Environment, type ProfileRun, type RequestRecord, type RunInfo } from '../../app/contract/report/schema.js';
import { renderReport } from '../../app/report/render.js';
import { sampleChat } from '../fixtures/chats.js';
import { markdownRows } from '../fixtures/report-agreement.js';

const DIGEST = `sha256:${'c'.repeat(64)}`;
const PROFILES: ProfileRun[] = [
  { name: 'control', strategy: 'none', k: null, s: null },
  { name: 'k7', strategy: 'ngram', k: 7, s: null },
];

type Prefill = Pick<RequestRecord, 'promptTokens' | 'reusedPromptTokens' | 'ttftMs' | 'prefillTokensPerSecond' | 'requestTokensPerSecond'>;

function request(task: string, profile: string, prefill: Prefill): Omit<RequestRecord, 'matchesControl'> {
  return {
    task,
    category: 'coding',
    profile,
    repeat: 0,
    seed: null,
    generatedTokens: 64,
    stopReason: 'max-tokens',
    steadyDecodeTokensPerSecond: profile === 'control' ? 100 : 120,
    proposed: profile === 'control' ? 0 : 70,
    accepted: profile === 'control' ? 0 : 50,
    rounds: profile === 'control' ? 0 : 10,
    acceptanceRate: null,
    meanAcceptanceLength: null,
    acceptancePerPosition: [],
    replays: 0,
    clampedTo: null,
    digest: DIGEST,
    samples: [],
    ...prefill,
  };
}

const MACHINE: Machine = {
  os: { platform: 'linux', release: '6', arch: 'x64' },
  cpu: { model: 'cpu', logicalCores: 2 },
  memoryBytes: 1024,
  gpuDriver: null,
  llamaCppRelease: 'b1',
  powerVersion: '0.0.0',
  nodeVersion: 'v22',
};
const ENVIRONMENT: Environment = { ...MACHINE, gpus: [], backend: null, models: [], settings: null };

const RUN: RunInfo = {
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T00:01:00Z',
  command: 'power bench',
  strategy: 'ngram',
  profiles: PROFILES,
  tasks: { name: 'calibration', count: 3, categories: ['coding'] },
  repeat: 1,
  maxTokens: 64,
  temperature: 0,
  seed: null,
  warmupRounds: 2,
  cancelled: false,
};

/** The report as the JSON export writes it, read back. */
function exported(requests: Omit<RequestRecord, 'matchesControl'>[]): Report {
  return Report.parse(JSON.parse(renderReport(buildReport(RUN, ENVIRONMENT, requests), 'json')));
}

// issue 55's A/B: 2048 prompt tokens evaluated on both sides, the control on a cold session
const cold = { promptTokens: 2048, reusedPromptTokens: 0, ttftMs: 2484, prefillTokensPerSecond: 824, requestTokensPerSecond: 8.4 };
const warm = { promptTokens: 2048, reusedPromptTokens: 0, ttftMs: 631, prefillTokensPerSecond: 3245, requestTokensPerSecond: 30 };
// a pair that prefilled alike: the same tokens, rates 1.06x apart
const alikeControl = { promptTokens: 300, reusedPromptTokens: 100, ttftMs: 70, prefillTokensPerSecond: 3300, requestTokensPerSecond: 25 };
const alikeSpec = { promptTokens: 300, reusedPromptTokens: 100, ttftMs: 72, prefillTokensPerSecond: 3100, requestTokensPerSecond: 28 };

describe("the JSON export's request speedup", () => {
  test('leaves out the pair that prefilled unlike, counts the other, and says how many of each as the table does', () => {
    const report = exported([
      request('t1', 'control', cold),
      request('t1', 'k7', warm),
      request('t2', 'control', alikeControl),
      request('t2', 'k7', alikeSpec),
    ]);
    const k7 = report.profiles.find((p) => p.name === 'k7')!;
    // with the cold pair counted, the median of the two ratios would be (30/8.4 + 28/25) / 2, 2.35x
    assert.deepEqual(k7.speedup!.request, { ratioOfMedians: 28 / 25, medianOfTaskRatios: 28 / 25, pairs: 1, prefilledUnlike: 1 });
    // the steady-decode speedup counts both pairs: prefill is no part of it
    assert.equal(k7.speedup!.steadyDecode.pairs, 2);
    // the requests carry what the rule read
    assert.deepEqual(
      report.requests.map((r) => r.reusedPromptTokens),
      [0, 0, 100, 100],
    );
    const row = markdownRows(renderReport(report, 'md'), 'Profiles').find((c) => c[0] === 'k7')!;
    const { pairs, prefilledUnlike } = k7.speedup!.request;
    assert.equal(row[9], `1.12x (${pairs} of ${pairs + prefilledUnlike!} pairs; ${prefilledUnlike} prefilled unlike)`);
  });

  test('a pair that kept different prompt tokens is unlike even at the same prefill rate; every pair unlike leaves no ratio', () => {
    const keptMore = { ...alikeSpec, reusedPromptTokens: 250, ttftMs: 20 };
    const report = exported([request('t2', 'control', alikeControl), request('t2', 'k7', keptMore)]);
    const k7 = report.profiles.find((p) => p.name === 'k7')!;
    assert.deepEqual(k7.speedup!.request, { ratioOfMedians: null, medianOfTaskRatios: null, pairs: 0, prefilledUnlike: 1 });
    const row = markdownRows(renderReport(report, 'md'), 'Profiles').find((c) => c[0] === 'k7')!;
    assert.equal(row[9], '- (prefill differed in 1 of 1 pairs)');
  });

  test('every pair alike: all counted, none left out, the plain ratio', () => {
    const report = exported([request('t2', 'control', alikeControl), request('t2', 'k7', alikeSpec)]);
    const k7 = report.profiles.find((p) => p.name === 'k7')!;
    assert.deepEqual(k7.speedup!.request, { ratioOfMedians: 28 / 25, medianOfTaskRatios: 28 / 25, pairs: 1, prefilledUnlike: 0 });
    assert.equal(markdownRows(renderReport(report, 'md'), 'Profiles').find((c) => c[0] === 'k7')![9], '1.12x');
  });
});

describe("a chat's JSON export", () => {
  test("reads each reply's kept prompt tokens: an A/B whose control kept more of the prompt is left out of the request speedup", async () => {
    const chat = await sampleChat();
    const exportOf = (c: typeof chat) =>
      Report.parse(JSON.parse(renderReport(chatReport({ chat: c, machine: MACHINE, models: [], command: 'test' }), 'json')));
    const balanced = (r: Report) => r.profiles.find((p) => p.name === 'Balanced')!.speedup!.request;
    const alike = exportOf(chat);
    assert.deepEqual(
      alike.requests.map((r) => r.reusedPromptTokens),
      [0, 0, 0, 0],
    );
    assert.equal(balanced(alike).pairs, 1);
    // the control's session kept 20 of the 30 prompt tokens: the same prefill rate, less to evaluate
    const warm = structuredClone(chat);
    const control = warm.messages[1]!;
    assert.ok(control.role === 'assistant' && control.strategy === 'none' && control.stats);
    control.stats = { ...control.stats, reusedPromptTokens: 20, evaluatedPromptTokens: 10 };
    const report = exportOf(warm);
    assert.equal(report.requests.find((r) => r.profile === 'control')!.reusedPromptTokens, 20);
    assert.deepEqual(balanced(report), { ratioOfMedians: null, medianOfTaskRatios: null, pairs: 0, prefilledUnlike: 1 });
  });
});

describe('the prefill rule', () => {
  test(`alike: the same prompt tokens evaluated and kept, prefill rates within ${PREFILL_BAND}x; nothing evaluated on either side is alike`, () => {
    assert.equal(prefillsAlike(alikeControl, alikeSpec), true);
    assert.equal(prefillsAlike(cold, warm), false, 'a cold prefill against a warm one');
    assert.equal(prefillsAlike(alikeControl, { ...alikeSpec, reusedPromptTokens: 99 }), false, 'one more token kept');
    assert.equal(prefillsAlike(alikeControl, { ...alikeSpec, promptTokens: 301 }), false, 'another prompt length');
    assert.equal(prefillsAlike(alikeControl, { ...alikeSpec, prefillTokensPerSecond: null }), false, 'a rate unknown');
    const allKept = { promptTokens: 300, reusedPromptTokens: 300, ttftMs: 9, prefillTokensPerSecond: null };
    assert.equal(prefillsAlike(allKept, { ...allKept, ttftMs: 30 }), true, 'nothing evaluated: no prefill to differ');
  });

  test('a request that does not record its kept tokens (a report written before) is judged by its time to first token and prefill rate', () => {
    const old = (p: typeof cold) => ({ ...p, reusedPromptTokens: undefined });
    assert.equal(prefillsAlike(old(alikeControl), old(alikeSpec)), true);
    assert.equal(prefillsAlike(old(cold), old(warm)), false);
    assert.equal(prefillsAlike(old(alikeControl), alikeSpec), true, 'one side unrecorded: the fallback');
    assert.equal(prefillsAlike(old(alikeControl), { ...alikeSpec, ttftMs: 200 }), false);
  });

  test('a report written before the rule (no kept tokens, no prefilledUnlike) still validates', () => {
    const report = exported([request('t2', 'control', alikeControl), request('t2', 'k7', alikeSpec)]);
    const old = JSON.parse(JSON.stringify(report)) as Report;
    for (const r of old.requests) delete r.reusedPromptTokens;
    for (const p of old.profiles) if (p.speedup) delete p.speedup.request.prefilledUnlike;
    assert.equal(Report.safeParse(old).success, true);
  });
});
