// The report's pure derivations: order statistics, the steady-decode figure, the comparison with
// the control, per-profile aggregates, profile names, task files and the built-in task sets.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { compareWithControl, pooledAcceptancePerPosition, summarizeProfiles } from '../../app/contract/report/aggregate.js';
import { parseProfileList, ProfileListError } from '../../app/report/bench-profiles.js';
import { K_MAX } from '../../app/contract/profile.js';
import { CSV_COLUMNS, CSV_DERIVED_COLUMNS, reportToCsv } from '../../app/report/csv.js';
import type { Report, RequestRecord, RoundSample } from '../../app/contract/report/schema.js';
import { quantile, spread, steadyDecodeTokensPerSecond } from '../../app/contract/report/stats.js';
import { parseTasks, TaskFileError } from '../../app/report/tasks.js';
import { prefillsAlike, requestSpeedup } from '../../app/report/prefill.js';
import { profilesTable } from '../../app/report/tables.js';
import { chromiumCandidates, ChromiumError, findChromium } from '../../app/report/pdf.js';
import { progressLine } from '../../app/bench/progress.js';
import { loadTaskSet, TASKS_DIR } from '../../app/bench/tasks.js';

const DIGEST_A = `sha256:${'a'.repeat(64)}`;
const DIGEST_B = `sha256:${'b'.repeat(64)}`;

function sample(proposed: number, accepted: number, emitted: number, endUs: number): RoundSample {
  return { proposed, accepted, emitted, replay: false, clampedTo: null, endUs, proposeUs: 0, verifyUs: 0, commitUs: 0 };
}

function record(over: Partial<RequestRecord> & Pick<RequestRecord, 'task' | 'profile'>): Omit<RequestRecord, 'matchesControl'> {
  return {
    category: 'coding',
    repeat: 0,
    seed: null,
    promptTokens: 10,
    generatedTokens: 8,
    stopReason: 'max-tokens',
    ttftMs: 5,
    prefillTokensPerSecond: 2000,
    steadyDecodeTokensPerSecond: 100,
    requestTokensPerSecond: 80,
    proposed: 0,
    accepted: 0,
    rounds: 0,
    acceptanceRate: null,
    meanAcceptanceLength: null,
    acceptancePerPosition: [],
    replays: 0,
    clampedTo: null,
    digest: DIGEST_A,
    samples: [],
    ...over,
  };
}

describe('order statistics', () => {
  test('quantiles interpolate linearly between order statistics', () => {
    assert.equal(quantile([3, 1, 2], 0.5), 2);
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
    assert.ok(Math.abs(quantile([0, 10], 0.1)! - 1) < 1e-12);
    assert.equal(quantile([], 0.5), null);
  });

  test('spread ignores missing values and is null when none is left', () => {
    assert.deepEqual(spread([null, 5, null]), { median: 5, p10: 5, p90: 5, n: 1 });
    assert.equal(spread([null, null]), null);
  });
});

describe('steady decode', () => {
  test('tokens after the warm-up rounds over the time since the last warm-up round', () => {
    // rounds end at 10, 20, 30, 50 ms; after two warm-up rounds: 4 + 2 tokens in 30 ms
    const rounds = [sample(0, 0, 1, 10_000), sample(4, 3, 4, 20_000), sample(4, 3, 4, 30_000), sample(4, 1, 2, 50_000)];
    assert.equal(steadyDecodeTokensPerSecond(rounds, 2), 200);
  });

  test('weighs rounds by their tokens: a 5-token round counts five times a 1-token round', () => {
    const rounds = [sample(0, 0, 1, 1000), sample(0, 0, 1, 2000), sample(4, 4, 5, 3000), sample(4, 0, 1, 7000)];
    // 6 tokens in 5 ms = 1200/s (a median of per-round rates would say 5000 or 250)
    assert.equal(steadyDecodeTokensPerSecond(rounds, 2), 1200);
  });

  test('null when no round follows the warm-up', () => {
    assert.equal(steadyDecodeTokensPerSecond([sample(0, 0, 1, 1000), sample(0, 0, 1, 2000)], 2), null);
  });
});

describe('comparison with the control and aggregates', () => {
  const requests = compareWithControl([
    record({ task: 't1', profile: 'control', steadyDecodeTokensPerSecond: 100, requestTokensPerSecond: 50 }),
    record({
      task: 't1',
      profile: 'k4',
      steadyDecodeTokensPerSecond: 150,
      requestTokensPerSecond: 60,
      proposed: 8,
      accepted: 5,
      rounds: 2,
      samples: [sample(4, 4, 5, 1000), sample(4, 1, 2, 2000)],
    }),
    record({ task: 't2', category: 'maths', profile: 'control', steadyDecodeTokensPerSecond: 200, requestTokensPerSecond: 100 }),
    record({
      task: 't2',
      category: 'maths',
      profile: 'k4',
      steadyDecodeTokensPerSecond: 400,
      requestTokensPerSecond: 150,
      proposed: 4,
      accepted: 0,
      rounds: 1,
      digest: DIGEST_B,
      samples: [sample(4, 0, 1, 1000)],
    }),
  ]);

  test('a digest matches the control of the same task and repeat; the control itself has null', () => {
    assert.deepEqual(
      requests.map((r) => r.matchesControl),
      [null, true, null, false],
    );
  });

  test('speedups: ratio of medians and median of per-task ratios', () => {
    const profiles = [
      { name: 'control', strategy: 'none' as const, k: null, s: null },
      { name: 'k4', strategy: 'ngram' as const, k: 4, s: null },
    ];
    const [control, k4] = summarizeProfiles(profiles, requests as RequestRecord[]);
    assert.equal(control!.speedup, null);
    assert.equal(control!.digestMatches, null);
    assert.equal(control!.steadyDecodeTokensPerSecond!.median, 150);
    // medians 275 / 150; per task 1.5 and 2.0
    assert.ok(Math.abs(k4!.speedup!.steadyDecode.ratioOfMedians! - 275 / 150) < 1e-12);
    assert.equal(k4!.speedup!.steadyDecode.medianOfTaskRatios, 1.75);
    assert.equal(k4!.speedup!.steadyDecode.pairs, 2);
    assert.equal(k4!.speedup!.request.medianOfTaskRatios, (1.2 + 1.5) / 2);
    assert.equal(k4!.digestMatches, 1);
    assert.equal(k4!.proposed, 12);
    assert.equal(k4!.accepted, 5);
    assert.deepEqual(
      k4!.categories.map((c) => [c.category, c.speedup]),
      [
        ['coding', 1.5],
        ['maths', 2],
      ],
    );
  });

  test('acceptance per position is pooled over every verify round', () => {
    // rounds: accepted 4 of 4, 1 of 4, 0 of 4 -> position 1: 2/3, positions 2-4: 1/3
    assert.deepEqual(pooledAcceptancePerPosition(requests as RequestRecord[]), [2 / 3, 1 / 3, 1 / 3, 1 / 3]);
  });
});

describe('the request speedup', () => {
  const profiles = [
    { name: 'control', strategy: 'none' as const, k: null, s: null },
    { name: 'k7', strategy: 'ngram' as const, k: 7, s: null },
  ];
  const built = (records: Omit<RequestRecord, 'matchesControl'>[]): Report => {
    const requests = compareWithControl(records) as RequestRecord[];
    return { kind: 'power-bench-report', profiles: summarizeProfiles(profiles, requests), requests } as unknown as Report;
  };
  const cell = (report: Report) => profilesTable(report).rows[1]![profilesTable(report).headers.indexOf('request speedup')];
  // issue 55: ngram K7, 1.2x in steady decode; the control prefilled on a cold session, 2484 ms to its first token against 631
  const cold = { ttftMs: 2484, prefillTokensPerSecond: 824, steadyDecodeTokensPerSecond: 100, requestTokensPerSecond: 8.4 };
  const warm = { ttftMs: 631, prefillTokensPerSecond: 3245, steadyDecodeTokensPerSecond: 120, requestTokensPerSecond: 30 };

  test('a cold prefill against a warm one is no request-wide speedup: the table says the prefill differed, the steady speedup stays', () => {
    const report = built([record({ task: 't1', profile: 'control', ...cold }), record({ task: 't1', profile: 'k7', ...warm })]);
    const table = profilesTable(report);
    assert.equal(table.rows[1]![table.headers.indexOf('speedup (median of task ratios)')], '1.20x');
    assert.equal(cell(report), '- (prefill differed in 1 of 1 pairs)');
    assert.deepEqual(requestSpeedup(report, 'k7'), { medianOfTaskRatios: null, alike: 0, pairs: 1 });
  });

  test('only the pairs that prefilled alike count, and the cell says how many', () => {
    const report = built([
      record({ task: 't1', profile: 'control', ...cold }),
      record({ task: 't1', profile: 'k7', ...warm }),
      record({ task: 't2', profile: 'control', ttftMs: 600, prefillTokensPerSecond: 3300, requestTokensPerSecond: 25 }),
      record({ task: 't2', profile: 'k7', ttftMs: 640, prefillTokensPerSecond: 3100, requestTokensPerSecond: 28 }),
    ]);
    assert.equal(cell(report), '1.12x (1 of 2 pairs; 1 prefilled unlike)');
    // all alike: the plain ratio
    assert.equal(cell(built(report.requests.filter((r) => r.task === 't2'))), '1.12x');
  });

  test('alike: times to first token and prefill rates within the band; no prefill on either side is alike', () => {
    const base = { ...record({ task: 't', profile: 'control' }), matchesControl: null };
    assert.equal(prefillsAlike(base, { ...base, ttftMs: 6, prefillTokensPerSecond: 1700 }), true);
    assert.equal(prefillsAlike(base, { ...base, ttftMs: 20 }), false, 'a later first token: more evaluated, or slower');
    assert.equal(prefillsAlike(base, { ...base, prefillTokensPerSecond: 500 }), false);
    assert.equal(prefillsAlike(base, { ...base, ttftMs: null }), false, 'unknown is not alike');
    const kept = { ...base, prefillTokensPerSecond: null };
    assert.equal(prefillsAlike(kept, kept), true);
    assert.equal(prefillsAlike(kept, base), false);
  });
});

describe('profile names', () => {
  test('named, k<K> and k<K>s<S> profiles; the control always comes first', () => {
    assert.deepEqual(parseProfileList('balanced,peak,k4,k7s5'), [
      { name: 'control', k: null, s: null },
      { name: 'balanced', k: 7, s: 7 },
      { name: 'peak', k: 7, s: 6 },
      { name: 'k4', k: 4, s: 4 },
      { name: 'k7s5', k: 7, s: 5 },
    ]);
    assert.deepEqual(
      parseProfileList('control,k2').map((p) => p.name),
      ['control', 'k2'],
    );
  });

  for (const bad of ['fast', 'k0', `k${K_MAX + 1}`, 'k3s4', 'k4,,k5', 'balanced,k7s7', 'k']) {
    test(`'${bad}' is refused with the reason`, () => {
      assert.throws(() => parseProfileList(bad), ProfileListError);
    });
  }
});

describe('task files', () => {
  test('a JSONL line with a missing field names the file, the line and the field', () => {
    const text = '{"id":"a","category":"coding","prompt":"x"}\n\n{"id":"b","category":"coding"}\n';
    assert.throws(
      () => parseTasks(text, 'my.jsonl'),
      (e: Error) => e instanceof TaskFileError && /my\.jsonl line 3: prompt/.test(e.message),
    );
  });

  test('not JSON, unknown fields, duplicate ids and an empty file are refused', () => {
    assert.throws(() => parseTasks('{oops', 'f'), /f line 1 is not JSON/);
    assert.throws(() => parseTasks('{"id":"a","category":"x","prompt":"p","temp":1}', 'f'), /f line 1: .*temp/);
    const dup = '{"id":"a","category":"x","prompt":"p"}\n{"id":"a","category":"y","prompt":"q"}';
    assert.throws(() => parseTasks(dup, 'f'), /f line 2: task id 'a' appears twice/);
    assert.throws(() => parseTasks('// only a comment\n', 'f'), /holds no task/);
  });

  test('the built-in sets: calibration is one task per category of matrix; matrix has 100 tasks', async () => {
    const calibration = await loadTaskSet('calibration');
    const matrix = await loadTaskSet('matrix');
    assert.equal(matrix.tasks.length, 100);
    const categories = [...new Set(matrix.tasks.map((t) => t.category))];
    assert.equal(categories.length, 12);
    assert.equal(calibration.tasks.length, 12);
    assert.deepEqual(
      calibration.tasks.map((t) => t.category),
      categories,
    );
    for (const t of calibration.tasks)
      assert.deepEqual(
        matrix.tasks.find((m) => m.id === t.id),
        t,
      );
    for (const c of categories) assert.ok(matrix.tasks.filter((t) => t.category === c).length >= 8, c);
    const raw = await readFile(join(TASKS_DIR, 'matrix.jsonl'), 'utf8');
    assert.equal(new Set(matrix.tasks.map((t) => t.prompt)).size, 100, 'every prompt is different');
    assert.ok(raw.startsWith('//'));
  });
});

describe('CSV', () => {
  test('quotes fields with commas, quotes or line breaks; null is empty; lists are ;-separated', () => {
    const r = { ...record({ task: 't1', profile: 'k4', acceptancePerPosition: [0.5, 0.25] }), matchesControl: null, category: 'a,b "c"' };
    const csv = reportToCsv({ run: { profiles: [] }, requests: [r] } as unknown as Report);
    const [header, row] = csv.split('\r\n');
    assert.equal(header, [...CSV_COLUMNS, ...CSV_DERIVED_COLUMNS].join(','));
    assert.deepEqual(CSV_DERIVED_COLUMNS.slice(0, 2), ['members', 'thinkingTokens']);
    assert.match(row!, /^t1,"a,b ""c""",k4,0,,10,/);
    assert.match(row!, /,0\.5;0\.25,/);
    assert.ok(row!.endsWith(`,${DIGEST_A},,${','.repeat(13)}`), 'matchesControl, members, the thinking parts and sources empty');
  });
});

describe('progress line', () => {
  test('says task i of n, the profile, its tok/s and the time left', () => {
    const line = progressLine({
      done: 3,
      total: 36,
      task: 'maths-01',
      taskIndex: 2,
      taskCount: 12,
      profile: 'balanced',
      tokensPerSecond: 84.25,
      elapsedMs: 6000,
    });
    assert.match(line, /3\/36/);
    assert.match(line, /task 2\/12 maths-01/);
    assert.match(line, /balanced/);
    assert.match(line, /84\.3 tok\/s/);
    assert.match(line, /ETA 1:06/);
  });
});

describe('the print engine for PDF reports', () => {
  test("looked for where each system keeps a Chromium-based browser: Edge and Chrome on Windows, Debian's Chromium on Linux", () => {
    const windows = chromiumCandidates('win32', { ProgramFiles: 'C:\\Program Files', 'ProgramFiles(x86)': 'C:\\Program Files (x86)' });
    assert.equal(windows[0], 'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe');
    assert.ok(windows.includes('C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe'));
    assert.equal(chromiumCandidates('linux', {})[0], '/usr/bin/chromium');
    assert.ok(chromiumCandidates('darwin', {}).includes('/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'));
  });

  test('none found: the error says what was looked for, what to install and the way around it', () => {
    assert.throws(
      () => findChromium({ ProgramFiles: 'Z:\\nowhere' }, 'export HTML', 'win32'),
      (e: Error) =>
        e instanceof ChromiumError &&
        e.message.includes('looked for Z:\\nowhere\\Microsoft\\Edge\\Application\\msedge.exe') &&
        e.message.endsWith('; install Microsoft Edge or Google Chrome, point POWER_CHROMIUM at one, or export HTML'),
    );
    assert.throws(
      () => findChromium({ POWER_CHROMIUM: '/nonexistent/chromium' }),
      /POWER_CHROMIUM=\/nonexistent\/chromium is not an executable file/,
    );
  });
});
