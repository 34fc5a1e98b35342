// `power bench --tasks calibration` on the real model (Gemma 3 270M Q4_K_M, the chat template's
// ChatML fallback): quick settings (16 tokens, one repeat, ngram K3), then the report: every
// task of the 12 categories ran the control and the profile, report.json validates, and every
// speculative output equals the control. Skipped, with the reason, where the model is absent.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Report } from '../../app/contract/report/schema.js';
import { power, type CliRun } from '../fixtures/cli.js';
import { REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';

const skip = realModelSkip();
const TOKENS = 16;

describe('power bench --tasks calibration on the real model', { skip }, () => {
  let dir = '';
  let run: CliRun;
  let report: Report;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-bench-real-'));
    run = power([
      'bench',
      '--model',
      REAL_MODEL,
      '--strategy',
      'ngram',
      '--profiles',
      'k3',
      '--tasks',
      'calibration',
      '--max-tokens',
      String(TOKENS),
      '--repeat',
      '1',
      '--threads',
      '2',
      '--device',
      'cpu',
      '--out',
      join(dir, 'out'),
      '--formats',
      'json,md',
    ]);
    assert.equal(run.code, 0, run.stderr);
    report = Report.parse(JSON.parse(await readFile(join(dir, 'out', 'report.json'), 'utf8')));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('runs the control and the profile on each of the 12 calibration categories and writes the report', () => {
    for (const f of ['json', 'md']) assert.ok(existsSync(join(dir, 'out', `report.${f}`)), f);
    assert.equal(report.requests.length, 12 * 2);
    assert.equal(new Set(report.requests.map((r) => r.category)).size, 12);
    assert.deepEqual(
      report.run.profiles.map((p) => [p.name, p.strategy, p.k]),
      [
        ['control', 'none', null],
        ['k3', 'ngram', 3],
      ],
    );
    assert.equal(report.environment.models[0]!.name, 'gemma-3-270m-q4_k_m.gguf');
    assert.match(run.stdout, /k3: steady .* tok\/s .*speedup/);
  });

  test('every ngram reply equals the control, and each ran its tokens', () => {
    for (const r of report.requests) {
      assert.ok(r.generatedTokens >= 1 && r.generatedTokens <= TOKENS, `${r.task}/${r.profile}: ${r.generatedTokens} tokens`);
      assert.equal(r.matchesControl, r.profile === 'control' ? null : true, `${r.task}/${r.profile}`);
    }
    const k3 = report.profiles.find((p) => p.name === 'k3')!;
    assert.equal(k3.digestMatches, 12);
  });
});
