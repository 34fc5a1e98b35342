// `power generate` with the autoregressive path: greedy output equals a reference loop
// written straight on llama.cpp's C API, runs reproduce, seeded sampling reproduces.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { GenerationResult } from '../../app/contract/generation-result.js';
import { addonDir } from '../../app/engine/build-info.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { syntheticModels } from '../fixtures/models.js';

function generate(args: string[]): GenerationResult {
  const run = power(['generate', '--json', '--threads', '1', ...args]);
  assert.equal(run.code, 0, run.stderr);
  return GenerationResult.passthrough().parse(jsonOf(run));
}

function reference(model: string, prompt: number[], n: number): number[] {
  const out = execFileSync(join(addonDir(), 'power-reference'), [model, String(n), '256', prompt.join(',')], {
    encoding: 'utf8',
  }).trim();
  return out === '' ? [] : out.split(',').map(Number);
}

const PROMPTS = [
  [1, 300, 301, 302],
  [1, 263, 400, 500, 600, 700],
  [1, 42],
];

describe('power generate (autoregressive)', () => {
  let models: ModelSet;
  before(async () => {
    models = await syntheticModels();
  });

  for (const name of ['target.gguf', 'hybrid-mtp.gguf'] as const) {
    test(`greedy ids on ${name} equal the reference loop on llama.cpp's C API`, () => {
      for (const prompt of PROMPTS) {
        const result = generate(['--model', models[name], '--prompt-tokens', prompt.join(','), '--max-tokens', '40']);
        assert.deepEqual(result.tokens, reference(models[name], prompt, 40), `prompt ${prompt}`);
      }
    });
  }

  test('greedy generation is reproducible run to run, with a digest over little-endian int32 ids', () => {
    const args = ['--model', models['target.gguf'], '--prompt', 'hello world', '--max-tokens', '48'];
    const a = generate(args);
    const b = generate(args);
    assert.deepEqual(a.tokens, b.tokens);
    assert.equal(a.tokens.length, 48);
    assert.equal(a.stopReason, 'max-tokens');
    const bytes = Buffer.alloc(a.tokens.length * 4);
    a.tokens.forEach((t, i) => bytes.writeInt32LE(t, i * 4));
    assert.equal(a.digest, `sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    assert.equal(a.digest, b.digest);
    assert.ok(a.text.length > 0);
  });

  test('seeded sampling is reproducible and the seed matters', () => {
    const args = [
      '--model',
      models['target.gguf'],
      '--prompt',
      'the fast model',
      '--max-tokens',
      '40',
      '--temperature',
      '1.5',
      '--top-k',
      '0',
      '--top-p',
      '1',
      '--min-p',
      '0',
    ];
    const a = generate([...args, '--seed', '7']);
    const b = generate([...args, '--seed', '7']);
    const c = generate([...args, '--seed', '8']);
    assert.deepEqual(a.tokens, b.tokens);
    assert.equal(a.seed, 7);
    assert.notDeepEqual(a.tokens, c.tokens);
    const greedy = generate(['--model', models['target.gguf'], '--prompt', 'the fast model', '--max-tokens', '40']);
    assert.notDeepEqual(a.tokens, greedy.tokens);
    assert.equal(greedy.seed, null);
  });

  test('the JSON carries the autoregressive evidence', () => {
    const r = generate(['--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '20']);
    assert.equal(r.strategy, 'none');
    assert.equal(r.k, null);
    assert.equal(r.s, null);
    assert.equal(r.backend.llamaCppRelease, 'v0.4.0');
    assert.match(r.backend.device, /^cpu/);
    const s = r.stats;
    assert.ok(s.promptTokens > 2);
    assert.ok(s.ttftMs! > 0);
    assert.ok(s.prefillTokensPerSecond! > 0);
    assert.ok(s.steadyDecodeTokensPerSecond! > 0);
    assert.ok(s.requestTokensPerSecond! > 0);
    assert.deepEqual(
      [s.proposed, s.accepted, s.rounds, s.replays, s.clampedTo, s.acceptanceRate, s.meanAcceptanceLength, s.acceptancePerPosition],
      [0, 0, 0, 0, null, null, null, []],
    );
  });

  test('--max-tokens bounds the tokens, and text streams to stdout without --json', () => {
    const run = power(['generate', '--model', models['hybrid-mtp.gguf'], '--prompt', 'hello', '--max-tokens', '5']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.stdout.trim().length > 0);
    assert.match(run.stderr, /\[5 tokens, stop: max-tokens/);
  });

  test('the summary line gives the acceptance, and a strategy that drafted nothing says it ran as the control', () => {
    const base = ['generate', '--model', models['target.gguf'], '--k', '3', '--prompt', 'hello', '--max-tokens', '12'];
    const drafting = power([...base, '--draft', models['draft-same.gguf'], '--strategy', 'draft-model']);
    assert.equal(drafting.code, 0, drafting.stderr);
    assert.match(drafting.stderr, /accepted \d+ of \d+ proposed in \d+ rounds, on cpu/);
    assert.doesNotMatch(drafting.stderr, /^note:/m);
    // ngram-simple drafts only after a repeated 12-token key: a 12-token reply to a short prompt never has one
    const silent = power([...base, '--strategy', 'ngram-simple']);
    assert.equal(silent.code, 0, silent.stderr);
    assert.match(
      silent.stderr,
      /^note: ngram-simple proposed nothing \(no earlier passage of the prompt or reply matched\): this reply ran as the autoregressive control$/m,
    );
  });

  test('speculative strategies emit the autoregressive tokens and fill the evidence', async () => {
    const base = ['--model', models['target.gguf'], '--prompt', 'the quick brown fox', '--max-tokens', '60'];
    const control = generate(base);
    const draft = generate([...base, '--strategy', 'draft-model', '--draft', models['draft-close.gguf'], '--k', '4', '--rounds']);
    assert.equal(draft.digest, control.digest);
    assert.equal(draft.strategy, 'draft-model');
    assert.equal(draft.k, 4);
    assert.equal(draft.s, null); // attention-only target: S does not apply
    const s = draft.stats;
    assert.ok(s.proposed > 0 && s.accepted > 0 && s.accepted <= s.proposed);
    assert.equal(s.acceptanceRate, s.accepted / s.proposed);
    assert.equal(s.meanAcceptanceLength, 1 + s.accepted / s.rounds);
    assert.equal(s.acceptancePerPosition.length, 4);
    assert.deepEqual([s.replays, s.clampedTo], [0, null]);
    const rounds = (draft as unknown as { rounds: { origins: string[]; proposeUs: number; verifyUs: number }[] }).rounds;
    assert.ok(rounds.some((r) => r.origins.includes('accepted')));
    assert.ok(rounds.some((r) => r.origins.includes('correction') || r.origins.includes('bonus')));
    assert.ok(rounds.slice(1).every((r) => r.verifyUs > 0));

    // a profile file sets the strategy and K/S; flags override it
    const dir = await mkdtemp(join(tmpdir(), 'power-profile-'));
    const profile = join(dir, 'guarded.toml');
    await writeFile(profile, 'spec_mode = "ngram"\nspec_draft_max = 7\nspec_mtp_recurrent_snapshots = 6\n');
    const hybrid = ['--model', models['hybrid-mtp.gguf'], '--prompt-tokens', '1,500,501,500,501', '--max-tokens', '60'];
    const guarded = generate([...hybrid, '--profile', profile]);
    assert.deepEqual([guarded.strategy, guarded.k, guarded.s], ['ngram', 7, 6]);
    assertDraftedSameAsControl(guarded, generate(hybrid), { label: 'the profile: hybrid-mtp ngram K7/S6' });
    assert.ok(guarded.stats.replays <= 1);
    const overridden = generate([...hybrid, '--profile', profile, '--k', '3', '--s', '3']);
    assert.deepEqual([overridden.k, overridden.s], [3, 3]);
    await rm(dir, { recursive: true, force: true });
  });

  test('the chat template wraps the prompt unless --raw', () => {
    const templated = generate(['--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '1']);
    const raw = generate(['--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '1', '--raw']);
    assert.ok(templated.stats.promptTokens > raw.stats.promptTokens + 2);
  });

  test('--grammar and --json-schema: the reply follows the file, the same under speculation', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'power-grammar-'));
    const grammar = join(dir, 'words.gbnf');
    const schema = join(dir, 'tags.json');
    await writeFile(grammar, 'root ::= [a-z ]+ "."\n');
    await writeFile(schema, JSON.stringify({ type: 'array', items: { type: 'string', maxLength: 5 }, maxItems: 3 }));
    const base = ['--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '40', '--raw'];
    const words = generate([...base, '--grammar', grammar]);
    assert.match(words.text, /^[a-z ]+\.?$/);
    assertDraftedSameAsControl(generate([...base, '--grammar', grammar, '--strategy', 'ngram', '--k', '4']), words, {
      label: 'ngram K4 under --grammar',
    });
    const tags = generate([...base, '--json-schema', schema]);
    assert.match(tags.text, /^\[/);
    if (tags.stopReason === 'eos') assert.ok(Array.isArray(JSON.parse(tags.text)));
    await rm(dir, { recursive: true, force: true });
  });
});
