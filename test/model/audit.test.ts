// `power audit`: on the default (batch-invariant) engine the speculative run is identical to the
// control; where a verify row is made to round differently (the test hook raises its runner-up),
// the audit finds the position, measures the rows and explains it; where the token does not come
// from the row it sampled (a transaction bug), it says so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { AuditReport } from '../../app/cli/audit.js';
import { runAudit, type AuditRequest } from '../../app/service/audit.js';
import { EngineClient } from '../../app/engine/client.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';
import { GREEDY } from '../fixtures/engine-generate.js';

type Report = AuditReport;

const PROMPT = [1, 300, 301, 302, 303];
const SEEDED: SamplingOptions = { ...GREEDY, temperature: 0.9, seed: 77 };

describe('power audit', () => {
  let models: ModelSet;
  before(async () => {
    models = await syntheticModels();
  });

  test('identical on the default engine: Q4_0 target with its draft, greedy (exit 0, full JSON shape)', () => {
    const run = power([
      'audit',
      '--json',
      '--threads',
      '1',
      '--model',
      models['target-q4_0.gguf'],
      '--draft',
      models['draft-close-q4_0.gguf'],
      '--strategy',
      'draft-model',
      '--k',
      '4',
      '--prompt-tokens',
      PROMPT.join(','),
      '--max-tokens',
      '48',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const report = jsonOf<Report>(run);
    assert.deepEqual(Object.keys(report).sort(), [
      'batchInvariant',
      'batchInvariantWhy',
      'controlDigest',
      'firstDivergence',
      'flashAttn',
      'flavour',
      'identical',
      'k',
      's',
      'specDigest',
      'strategy',
      'tokens',
      'verdict',
    ]);
    assert.deepEqual([report.strategy, report.k, report.s], ['draft-model', 4, null]);
    assert.equal(report.identical, true);
    assert.equal(report.controlDigest, report.specDigest);
    assert.equal(report.tokens, 48);
    assert.equal(report.flavour, 'cpu');
    assert.equal(report.batchInvariant, true);
    assert.equal(report.verdict, 'identical');
    assert.equal(report.firstDivergence, null);
  });

  test('identical on the default engine: Q8_0 hybrid with MTP, seeded, S < K (text output)', () => {
    const run = power([
      'audit',
      '--threads',
      '1',
      '--model',
      models['hybrid-mtp-q8_0.gguf'],
      '--strategy',
      'mtp',
      '--k',
      '7',
      '--s',
      '6',
      '--prompt-tokens',
      PROMPT.join(','),
      '--max-tokens',
      '40',
      '--temperature',
      '0.9',
      '--seed',
      '5',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^identical: 40 tokens \(engine: flavour cpu, Flash Attention (on|off), batch-invariant\)$/m);
  });

  for (const c of [
    {
      name: 'ngram,mtp on the hybrid, seeded, p-min and adaptive K',
      args: ['--model', 'hybrid-mtp.gguf', '--strategy', 'ngram,mtp', '--k', '4', '--s', '3', '--p-min', '0.2', '--adaptive-k'],
      seeded: true,
      audited: { strategy: 'ngram', fallbacks: ['mtp'], k: 4, s: 3 },
    },
    {
      name: 'ngram,draft-model with its draft, greedy',
      args: ['--model', 'target.gguf', '--draft', 'draft-close.gguf', '--strategy', 'ngram,draft-model', '--k', '4'],
      seeded: false,
      // attention only: S does not apply
      audited: { strategy: 'ngram', fallbacks: ['draft-model'], k: 4, s: null },
    },
  ]) {
    test(`a chain ${c.name}: identical to the control, the report names the chain`, () => {
      const args = c.args.map((a) => (a.endsWith('.gguf') ? models[a as keyof ModelSet] : a));
      const sampling = c.seeded ? ['--temperature', '0.9', '--seed', '5'] : [];
      const run = power([
        'audit',
        '--json',
        '--threads',
        '1',
        ...args,
        '--prompt-tokens',
        PROMPT.join(','),
        '--max-tokens',
        '60',
        ...sampling,
      ]);
      assert.equal(run.code, 0, run.stderr);
      const report = jsonOf<Report>(run);
      assert.equal(report.verdict, 'identical');
      assert.equal(report.tokens, 60);
      assert.deepEqual({ strategy: report.strategy, fallbacks: report.fallbacks, k: report.k, s: report.s }, c.audited);
    });
  }

  test('bad input is exit 2 with one error line', () => {
    const base = ['audit', '--model', models['target.gguf'], '--prompt-tokens', '1,2,3'];
    for (const [args, message] of [
      [base, /needs --strategy/],
      [[...base, '--strategy', 'none'], /the control itself/],
      [[...base, '--strategy', 'ngram', '--temperature', '0.5'], /needs --seed/],
      [[...base, '--strategy', 'draft-model'], /not available/],
      [[...base, '--strategy', 'ngram', '--k', '3', '--s', '4'], /--s must be/],
    ] as const) {
      const run = power([...args]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1);
    }
  });

  describe('a verify row made to round differently (test hook)', () => {
    let engine: EngineClient;
    const ids: string[] = [];
    before(() => {
      engine = EngineClient.start({ testHooks: true });
    });
    after(async () => {
      for (const modelId of ids) await engine.call('disposeModel', { modelId });
      const live = await engine.call('liveHandles', {});
      await engine.close();
      assert.deepEqual({ models: live.models, contexts: live.contexts }, { models: 0, contexts: 0 });
    });

    async function request(target: keyof ModelSet, draft: keyof ModelSet | null, sampling: SamplingOptions): Promise<AuditRequest> {
      const t = await engine.call('loadModel', { path: models[target], gpuLayers: 0 });
      ids.push(t.modelId);
      const d = draft ? await engine.call('loadModel', { path: models[draft], gpuLayers: 0 }) : null;
      if (d) ids.push(d.modelId);
      return {
        modelId: t.modelId,
        ...(d ? { draftModelId: d.modelId } : {}),
        strategy: d ? 'draft-model' : 'ngram',
        k: 4,
        s: 4,
        contextSize: 256,
        threads: 1,
        prompt: Int32Array.from(PROMPT),
        maxTokens: 40,
        sampling,
      };
    }

    for (const [mode, sampling] of [
      ['greedy', GREEDY],
      ['seeded', SEEDED],
    ] as const) {
      test(`${mode}: finds the position, measures the rows and explains it`, async () => {
        const base = await request('target-f16.gguf', 'draft-close-f16.gguf', sampling);
        // a raised runner-up always moves a greedy choice; a seeded draw only when it lands
        // between the old and the new boundaries, so try positions until one moves
        let at = 12;
        let out = await runAudit(engine, base);
        assert.equal(out.identical, true, 'unperturbed, the default engine is exact');
        for (; at < 30; at++) {
          const position = PROMPT.length + at;
          out = await runAudit(engine, {
            ...base,
            onSpeculativeSession: (sessionId) => engine.call('perturbRow', { sessionId, position, hidden: false }).then(() => {}),
          });
          if (!out.identical) break;
        }
        assert.equal(out.identical, false, 'some perturbed position moved the draw');
        if (mode === 'greedy') assert.equal(at, 12);
        const d = out.firstDivergence!;
        assert.equal(d.index, at);
        assert.equal(d.controlToken, out.control.tokens[at]);
        assert.equal(d.specToken, out.spec.tokens[at]);
        assert.notEqual(d.controlToken, d.specToken);
        assert.ok(d.controlMargin > 0);
        // the hook raised the runner-up by more than the margin: that is the row difference
        assert.ok(d.rowMaxAbsDiff >= d.controlMargin, `diff ${d.rowMaxAbsDiff} vs margin ${d.controlMargin}`);
        assert.equal(d.rowsAccount, true);
        assert.deepEqual(out.spec.tokens.slice(0, at), out.control.tokens.slice(0, at));
      });
    }

    test('a token that does not come from its row is not explained', async () => {
      const base = await request('target-q8_0.gguf', 'draft-close-q8_0.gguf', GREEDY);
      const at = 9;
      const out = await runAudit(engine, {
        ...base,
        onSpeculativeSession: (sessionId) =>
          engine.call('perturbRow', { sessionId, position: PROMPT.length + at, hidden: true }).then(() => {}),
      });
      const d = out.firstDivergence!;
      assert.equal(d.index, at);
      assert.equal(d.rowMaxAbsDiff, 0, 'the captured verify row equals the one-row decode');
      assert.equal(d.rowsAccount, false);
    });
  });
});
