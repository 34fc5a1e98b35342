// Drafting beyond one strategy and a fixed K: chained proposers (--strategy ngram,mtp: the first
// member that drafts wins the round), p-min (a greedy drafter stops under a top-1 probability)
// and adaptive K (shorter drafts after rejections). Each changes only what is proposed, so the
// target's tokens are the autoregressive control's, greedy and seeded, past 256 positions; and
// each does what it says: a chain's rounds come from more than one member, p-min cuts drafts
// short, adaptive K follows its policy round by round.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type RoundRecord, type SamplingOptions } from '../../app/contract/engine-types.js';
import type { GenerationResult } from '../../app/contract/generation-result.js';
import { Report } from '../../app/contract/report/schema.js';
import type { RequestOutcome } from '../../app/service/request.js';
import type { SessionRequest, TargetRequest } from '../../app/runtime/target.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { assertCsvAgrees, markdownRows } from '../fixtures/report-agreement.js';
import { syntheticModels } from '../fixtures/models.js';
import { runControlAndStrategy } from '../fixtures/target-runs.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const SEEDED: SamplingOptions = { ...SAMPLING_DEFAULTS, temperature: 0.9, seed: 99 };
// the first repeats itself (n-gram matches), the second wanders
const PROMPTS = [
  [1, 300, 301, 302, 303, 300, 301, 302],
  [1, 263, 400, 500, 600, 700],
];
const MAX_TOKENS = 300; // past 256 positions
const K = 6;

type Config = { name: string; target: Omit<TargetRequest, 'path'> & { model: keyof ModelSet; draft?: keyof ModelSet } } & {
  drafting?: Pick<SessionRequest, 'pMin' | 'adaptiveK'>;
};

/** Runs the control and the configuration; asserts equal tokens for every prompt, greedy and seeded; the configuration's runs. */
async function exactRuns(models: ModelSet, c: Config): Promise<RequestOutcome[]> {
  const { model, draft, ...request } = c.target;
  const { runs } = await runControlAndStrategy(
    { ...request, path: models[model], ...(draft ? { draftPath: models[draft] } : {}) },
    { k: K, seeded: SEEDED, prompts: PROMPTS, maxTokens: MAX_TOKENS, ...(c.drafting ? { drafting: c.drafting } : {}) },
  );
  const spec: RequestOutcome[] = [];
  for (const [key, control] of runs) {
    if (!key.startsWith('none ')) continue;
    const mine = key.replace(/^none /, `${request.strategy} `);
    const run = runs.get(mine)!;
    assert.equal(control.tokens.length, MAX_TOKENS, `${key}: the control ran to the budget`);
    assert.deepEqual(run.tokens, control.tokens, `${c.name}, ${mine}: the control's tokens`);
    spec.push(run);
  }
  assert.ok(
    spec.some((r) => r.stats.accepted > 0),
    `${c.name}: proposals were accepted somewhere`,
  );
  return spec;
}

/** The verify rounds (the first token's round carries no proposal). */
const verifyRounds = (runs: RequestOutcome[]): RoundRecord[] => runs.flatMap((r) => r.rounds.filter((x) => x.proposed > 0));

const cpu = { device: 'cpu', gpuLayers: 0, contextSize: 1024 } as const;

describe('chained proposers, p-min and adaptive K are exact and do what they say', () => {
  let models: ModelSet;
  const dir = suiteTempDir('power-drafting-');
  before(async () => {
    models = await syntheticModels();
  });

  for (const c of [
    {
      name: 'ngram,draft-model',
      target: { ...cpu, model: 'target.gguf', draft: 'draft-close.gguf', strategy: 'ngram', fallbacks: ['draft-model'], s: K },
    },
    { name: 'ngram,mtp (hybrid)', target: { ...cpu, model: 'hybrid-mtp.gguf', strategy: 'ngram', fallbacks: ['mtp'], s: K - 1 } },
    // llama.cpp's EAGLE-3 behind ngram: it encodes every batch, drafted by it or not
    {
      name: 'ngram,eagle3',
      target: { ...cpu, model: 'target.gguf', draft: 'eagle3-close.gguf', strategy: 'ngram', fallbacks: ['eagle3'], s: K },
    },
  ] satisfies Config[]) {
    test(`a chain ${c.name} emits the control's tokens; both members win rounds, each named in its record`, async () => {
      const rounds = verifyRounds(await exactRuns(models, c));
      assert.ok(
        rounds.every((r) => r.member === 0 || r.member === 1),
        'every drafted round names its member',
      );
      assert.ok(
        rounds.some((r) => r.member === 0),
        'the first member (ngram) drafts where it matches',
      );
      assert.ok(
        rounds.some((r) => r.member === 1),
        'the second member drafts where ngram finds nothing',
      );
    });
  }

  test('a chain mtp,ngram under p-min: where the head is unsure, ngram drafts', async () => {
    const c: Config = {
      name: 'mtp,ngram p-min 0.9',
      target: { ...cpu, model: 'hybrid-mtp.gguf', strategy: 'mtp', fallbacks: ['ngram'], s: K - 1 },
      drafting: { pMin: 0.9 },
    };
    const rounds = verifyRounds(await exactRuns(models, c));
    assert.ok(
      rounds.some((r) => r.member === 1),
      'ngram drafted some rounds',
    );
  });

  for (const c of [
    {
      name: 'draft-model',
      target: { ...cpu, model: 'target.gguf', draft: 'draft-close.gguf', strategy: 'draft-model', s: K },
      drafting: { pMin: 0.5 },
    },
    { name: 'mtp (hybrid)', target: { ...cpu, model: 'hybrid-mtp.gguf', strategy: 'mtp', s: K - 1 }, drafting: { pMin: 0.5 } },
    // llama.cpp's own p_min, over its top-10 draft sampler's probabilities (higher than a whole row's)
    {
      name: 'eagle3',
      target: { ...cpu, model: 'target.gguf', draft: 'eagle3-close.gguf', strategy: 'eagle3', s: K },
      drafting: { pMin: 0.9 },
    },
  ] satisfies Config[]) {
    test(`p-min ${c.drafting.pMin} on ${c.name} emits the control's tokens and cuts drafts short`, async () => {
      const runs = await exactRuns(models, c);
      // a greedy drafter without p-min always drafts what the round schedules (K, or the S clamp,
      // or what the budget leaves); under p-min some drafts stop earlier, or before their first token
      const short = runs.flatMap((run) => {
        let generated = 0;
        return run.rounds.filter((r, i) => {
          const budget = MAX_TOKENS - generated;
          generated += r.tokens.length;
          const scheduled = Math.min(r.clampedTo ?? K, K, budget - 1);
          return i > 0 && r.proposed < scheduled; // round 0 is the first token's
        });
      });
      assert.ok(short.length > 0, `${c.name}: some drafts stopped under p-min`);
    });
  }

  /**
   * Adaptive K's policy (transaction.cpp adapt_k), replayed over a draft-model request (it drafts
   * whatever it is scheduled): each round asks for min(cap, budget - 1) proposals; after a round
   * with a rejection the cap is accepted + 1, after a full acceptance twice the cap, up to K.
   */
  function checkAdaptive(run: RequestOutcome, label: string): { shortened: boolean } {
    let cap = K;
    let generated = 0;
    let shortened = false;
    run.rounds.forEach((r, i) => {
      const budget = MAX_TOKENS - generated;
      generated += r.tokens.length;
      if (i === 0) return; // the first token: no proposals
      assert.equal(r.proposed, Math.max(0, Math.min(cap, budget - 1)), `${label} round ${i}: cap ${cap}`);
      if (r.proposed === 0) return;
      if (r.proposed < K && r.proposed < budget - 1) shortened = true;
      cap = r.accepted < r.proposed ? r.accepted + 1 : Math.min(K, cap * 2);
    });
    return { shortened };
  }

  test("adaptive K on draft-model emits the control's tokens and follows its policy", async () => {
    const runs = await exactRuns(models, {
      name: 'draft-model adaptive K',
      target: { ...cpu, model: 'target.gguf', draft: 'draft-close.gguf', strategy: 'draft-model', s: K },
      drafting: { adaptiveK: true },
    });
    const shortened = runs.map((run, i) => checkAdaptive(run, `run ${i}`).shortened);
    assert.ok(shortened.some(Boolean), 'some rounds asked for fewer than K after a rejection');
  });

  test('power generate: a chain and its profile keys run end to end; the JSON and the summary name the members', async () => {
    const profile = join(dir(), 'chain.toml');
    await writeFile(profile, 'spec_mode = "ngram,mtp"\nspec_draft_max = 4\nspec_mtp_recurrent_snapshots = 3\nspec_adaptive_k = true\n');
    const args = generateArgs(models['hybrid-mtp.gguf'], PROMPTS[0]!, '--max-tokens', '80');
    const control = jsonOf<GenerationResult>(power([...args, '--json']));
    const run = power([...args, '--profile', profile, '--p-min', '0.2', '--json', '--rounds']);
    const out = jsonOf<GenerationResult & { rounds: { proposed: number; member?: number }[] }>(run);
    assert.deepEqual(
      { strategy: out.strategy, fallbacks: out.fallbacks, pMin: out.pMin, adaptiveK: out.adaptiveK, k: out.k, s: out.s },
      { strategy: 'ngram', fallbacks: ['mtp'], pMin: 0.2, adaptiveK: true, k: 4, s: 3 },
    );
    assert.deepEqual(out.tokens, control.tokens, "the control's tokens");
    assert.ok(
      out.rounds.every((r) => r.proposed > 0 === (r.member !== undefined)),
      'each round that drafted names its member',
    );
    assert.equal(control.fallbacks, undefined, 'one strategy: no fallbacks in the JSON');
    const text = power([...args, '--profile', profile]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stderr, /proposed in \d+ rounds \(ngram \d+\/\d+ in \d+ rounds, mtp \d+\/\d+ in \d+ rounds\)/);
  });

  test("power bench of a chain with p-min, adaptive K and FR: the report names each member, whose counts add up to the profile's; outputs the control's", async () => {
    const tasks = join(dir(), 'chain-tasks.jsonl');
    await writeFile(
      tasks,
      [
        JSON.stringify({ id: 'repeat', category: 'rewrite', prompt: 'the cat sat on the mat, the cat sat on the mat, the cat sat' }),
        JSON.stringify({ id: 'wander', category: 'dialogue', prompt: 'hello world, how are you' }),
      ].join('\n'),
    );
    const out = join(dir(), 'chain-bench');
    const flags =
      '--strategy ngram,mtp --p-min 0.2 --adaptive-k --fr-vocab 400 --profiles k4s3 --max-tokens 40 --threads 1 --device cpu --formats json,csv,md';
    const run = power(['bench', '--model', models['hybrid-mtp.gguf'], ...flags.split(' '), '--tasks', tasks, '--out', out]);
    assert.equal(run.code, 0, run.stderr);
    const report = Report.parse(JSON.parse(await readFile(join(out, 'report.json'), 'utf8')));
    assert.deepEqual(report.run.profiles[1], {
      name: 'k4s3',
      strategy: 'ngram',
      k: 4,
      s: 3,
      fallbacks: ['mtp'],
      pMin: 0.2,
      adaptiveK: true,
      frVocab: 400,
    });
    const chain = report.profiles[1]!;
    const own = report.requests.filter((r) => r.profile === 'k4s3');
    assert.equal(chain.digestMatches, own.length, "every output is the control's");
    assert.deepEqual(
      chain.members?.map((m) => m.strategy),
      ['ngram', 'mtp'],
    );
    const sum = (key: 'rounds' | 'proposed' | 'accepted') => chain.members!.reduce((n, m) => n + m[key], 0);
    assert.equal(
      sum('rounds'),
      own.reduce((n, r) => n + r.rounds, 0),
      "the members' rounds are the verify rounds",
    );
    assert.equal(sum('proposed'), chain.proposed);
    assert.equal(sum('accepted'), chain.accepted);
    assert.ok(
      chain.members!.every((m) => m.rounds > 0),
      'both members won rounds',
    );
    assert.ok(
      own.every((r) => r.samples.every((x) => x.proposed > 0 === (x.member !== undefined))),
      'each verify round names its member',
    );
    assertCsvAgrees(await readFile(join(out, 'report.csv'), 'utf8'), report);
    const md = await readFile(join(out, 'report.md'), 'utf8');
    assert.deepEqual(
      markdownRows(md, 'Chain members').map((row) => row.slice(0, 5)),
      chain.members!.map((m) => ['k4s3', m.strategy, String(m.rounds), String(m.proposed), String(m.accepted)]),
    );
    assert.match(run.stdout, /k4s3: .*acceptance [\d.]+% \(ngram \d+\/\d+ in \d+ rounds, mtp \d+\/\d+ in \d+ rounds\)/);
  });

  test("adaptive K on mtp (hybrid, S < K) emits the control's tokens", async () => {
    const runs = await exactRuns(models, {
      name: 'mtp adaptive K',
      target: { ...cpu, model: 'hybrid-mtp.gguf', strategy: 'mtp', s: K - 1 },
      drafting: { adaptiveK: true },
    });
    assert.ok(
      verifyRounds(runs).some((r) => r.proposed < K && r.proposed > 0),
      'drafts shorter than K',
    );
  });
});
