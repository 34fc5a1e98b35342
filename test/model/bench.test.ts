// `power bench` end to end on the synthetic models: the calibration set in every format, the
// JSON against its schema, every derived format against the JSON (CSV and Markdown parsed
// back, the HTML rendered in a real headless Chromium with its charts), the PDF, a user's own
// task file with a seeded recurrent run, and bad input.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';

import { chromium, type Browser } from 'playwright-core';

import { summarizeProfiles } from '../../app/contract/report/aggregate.js';
import { Report } from '../../app/contract/report/schema.js';
import { steadyDecodeTokensPerSecond } from '../../app/contract/report/stats.js';
import { findChromium, offlineFlags } from '../../app/report/pdf.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertUsageError, power, type CliRun } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';
import { assertCsvAgrees, assertHtmlAgrees, assertMarkdownAgrees } from '../fixtures/report-agreement.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';
import { K_MAX } from '../../app/contract/profile.js';

describe('power bench', () => {
  const dir = suiteTempDir('power-bench-');
  let models: ModelSet;
  let report: Report;
  let run: CliRun;

  before(async () => {
    models = await syntheticModels();
    run = power([
      'bench',
      '--model',
      models['target.gguf'],
      '--draft',
      models['draft-close.gguf'],
      '--strategy',
      'draft-model',
      '--profiles',
      'balanced,k3',
      '--tasks',
      'calibration',
      '--max-tokens',
      '20',
      '--threads',
      '1',
      '--device',
      'cpu',
      '--out',
      join(dir(), 'calibration'),
      '--formats',
      'json,csv,md,html,pdf',
    ]);
    assert.equal(run.code, 0, run.stderr);
    report = JSON.parse(await readFile(join(dir(), 'calibration', 'report.json'), 'utf8')) as Report;
  });

  test('runs the calibration set with the control and each profile, interleaved, and writes every format', () => {
    for (const f of ['json', 'csv', 'md', 'html', 'pdf']) assert.ok(existsSync(join(dir(), 'calibration', `report.${f}`)), f);
    assert.equal(report.requests.length, 12 * 3);
    // A B A B: each task runs the control, then balanced, then k3, before the next task
    assert.deepEqual(
      report.requests.slice(0, 6).map((r) => r.profile),
      ['control', 'balanced', 'k3', 'control', 'balanced', 'k3'],
    );
    assert.equal(new Set(report.requests.map((r) => r.category)).size, 12);
    assert.match(run.stdout, /balanced: steady .* tok\/s .*speedup/);
  });

  test('report.json validates against its schema, and every speculative output equals the control (greedy)', () => {
    const parsed = Report.parse(report); // strict: a wrong field type or a missing field throws
    assert.equal(parsed.schemaVersion, 1);
    assert.deepEqual(
      parsed.run.profiles.map((p) => [p.name, p.strategy, p.k, p.s]),
      [
        ['control', 'none', null, null],
        ['balanced', 'draft-model', 7, null], // attention-only target: S does not apply
        ['k3', 'draft-model', 3, null],
      ],
    );
    for (const r of parsed.requests) {
      assert.equal(r.generatedTokens, 20, `${r.task}/${r.profile}`);
      assert.equal(r.matchesControl, r.profile === 'control' ? null : true, `${r.task}/${r.profile}`);
      if (r.profile !== 'control') assert.ok(r.proposed > 0 && r.rounds > 0);
    }
    const [target, draft] = parsed.environment.models;
    assert.equal(target!.name, 'target.gguf');
    assert.equal(draft!.role, 'draft');
    assert.equal(parsed.environment.backend?.kind, 'cpu');
    assert.equal(parsed.environment.settings?.threads, 1);
  });

  test('the aggregates and steady-decode figures follow from the requests and their raw samples', () => {
    assert.deepEqual(summarizeProfiles(report.run.profiles, report.requests), report.profiles);
    for (const r of report.requests) {
      assert.equal(
        r.samples.reduce((n, s) => n + s.emitted, 0),
        r.generatedTokens,
      );
      assert.equal(steadyDecodeTokensPerSecond(r.samples, report.run.warmupRounds), r.steadyDecodeTokensPerSecond);
      assert.equal(
        r.samples.reduce((n, s) => n + s.proposed, 0),
        r.proposed,
      );
    }
    const balanced = report.profiles.find((p) => p.name === 'balanced')!;
    assert.equal(balanced.digestMatches, 12);
    assert.equal(balanced.acceptancePerPosition.length, 7);
    assert.ok(balanced.speedup!.steadyDecode.pairs === 12);
  });

  test('report.csv parses back to the JSON requests, one row each', async () => {
    assertCsvAgrees(await readFile(join(dir(), 'calibration', 'report.csv'), 'utf8'), report);
  });

  test('report.md tables agree with the JSON', async () => {
    assertMarkdownAgrees(await readFile(join(dir(), 'calibration', 'report.md'), 'utf8'), report);
  });

  test('report.html renders offline in Chromium with its three charts, whose bars and tables carry the JSON figures', async () => {
    const profileDir = await mkdtemp(join(tmpdir(), 'power-chromium-'));
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: findChromium(),
        args: offlineFlags(profileDir).filter((f) => f !== '--headless' && !f.startsWith('--user-data-dir')),
      });
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const fetched: string[] = [];
      page.on('request', (r) => fetched.push(r.url()));
      const htmlPath = join(dir(), 'calibration', 'report.html');
      await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
      assert.deepEqual(fetched, [pathToFileURL(htmlPath).href], 'the page loads nothing but itself');

      await assertHtmlAgrees(page, report);

      const png = await page.screenshot({ fullPage: true });
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
      assert.ok(png.length > 20_000);
    } finally {
      await browser?.close();
      await rm(profileDir, { recursive: true, force: true });
    }
  });

  test('report.pdf is a PDF printed from the HTML', async () => {
    const pdf = await readFile(join(dir(), 'calibration', 'report.pdf'));
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.ok(pdf.length > 10_000);
  });

  test("a user's JSONL task file, seeded sampling and repeats on the recurrent target: K/S, seeds per repeat, replays", async () => {
    const tasks = join(dir(), 'mine.jsonl');
    await writeFile(
      tasks,
      [
        '// two tasks of my own',
        JSON.stringify({ id: 'greet', category: 'dialogue', prompt: 'hello world, how are you' }),
        JSON.stringify({ id: 'story', category: 'long-form', prompt: 'write a story about the quick brown fox', maxTokens: 8 }),
      ].join('\n'),
    );
    const out = join(dir(), 'mine');
    const r = power([
      'bench',
      '--model',
      models['hybrid-mtp.gguf'],
      '--strategy',
      'ngram',
      '--profiles',
      'balanced,peak',
      '--tasks',
      tasks,
      '--repeat',
      '2',
      '--max-tokens',
      '14',
      '--temperature',
      '0.8',
      '--seed',
      '7',
      '--threads',
      '1',
      '--device',
      'cpu',
      '--out',
      out,
      '--formats',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(join(out, 'report.html')));
    const mine = Report.parse(JSON.parse(await readFile(join(out, 'report.json'), 'utf8')));
    assert.equal(mine.run.tasks.name, 'mine.jsonl');
    assert.deepEqual(
      mine.run.profiles.map((p) => [p.name, p.k, p.s]),
      [
        ['control', null, null],
        ['balanced', 7, 7],
        ['peak', 7, 6],
      ],
    );
    assert.equal(mine.requests.length, 2 * 2 * 3);
    assert.deepEqual([...new Set(mine.requests.map((q) => `${q.repeat}:${q.seed}`))], ['0:7', '1:8']);
    assert.equal(mine.run.seed, 7);
    for (const q of mine.requests) {
      assert.equal(typeof q.replays, 'number');
      if (q.profile !== 'control') assert.equal(typeof q.matchesControl, 'boolean');
    }
  });

  describe('bad input: exit 2 with one error line', () => {
    const base = () => ['bench', '--model', models['target.gguf'], '--threads', '1', '--device', 'cpu', '--out', join(dir(), 'bad')];
    const cases: [string, string[], RegExp][] = [
      ['an unknown profile', ['--profiles', 'balanced,turbo'], /--profiles: 'turbo' is not a profile/],
      ['K out of range', ['--profiles', `k${K_MAX + 1}`], new RegExp(`K must be from 1 to ${K_MAX}`)],
      ['S above K', ['--profiles', 'k3s5'], /S must be from 0 to K/],
      ['an unknown strategy', ['--strategy', 'warp'], /--strategy must be one of/],
      ['the control as the strategy', ['--strategy', 'none'], /--strategy none is the control/],
      ['a strategy the model cannot serve', ['--strategy', 'mtp'], /strategy 'mtp' is not available .*NextN/],
      ['a missing task file', ['--tasks', '/nonexistent/tasks.jsonl'], /--tasks: cannot read the task file .*no such file/],
      ['an unknown format', ['--formats', 'json,docx'], /--formats takes/],
    ];
    for (const [what, args, pattern] of cases) {
      test(what, () => assertUsageError(power([...base(), ...args]), pattern));
    }

    test('pdf without a usable Chromium is refused before anything runs', () => {
      const refused = power([...base(), '--formats', 'json,pdf'], { env: { POWER_CHROMIUM: '/nonexistent/chromium' } });
      assertUsageError(refused, /--formats pdf: POWER_CHROMIUM=.* is not an executable/);
      assert.ok(!existsSync(join(dir(), 'bad')), 'nothing written');
    });

    test('a task file with a bad line names the line', async () => {
      const bad = join(dir(), 'bad.jsonl');
      await writeFile(bad, '{"id":"a","category":"coding","prompt":"x"}\n{"id":"b","category":"coding","prompt":""}\n');
      assertUsageError(power([...base(), '--tasks', bad]), /bad\.jsonl line 2: prompt/);
      assert.ok(!existsSync(join(dir(), 'bad')), 'nothing written');
    });
  });
});
