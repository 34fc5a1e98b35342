// strategy 'mtp': the target's own NextN head proposes, the target decides. Greedy output is
// token for token the autoregressive output over the K/S grid; the guarded replay happens
// exactly when a rejected suffix is deeper than the S recurrent snapshots, at most once per
// request, and clamps the rest of the request to S. The grid runs through one engine (the
// model loads once); the CLI runs check the same through `power generate --json`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { RoundRecord } from '../../app/contract/engine-types.js';
import { GenerationResult } from '../../app/contract/generation-result.js';
import { EngineCallError, EngineClient } from '../../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertUsageError, jsonOf, power, type CliRun } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';
import { GREEDY } from '../fixtures/engine-generate.js';

// [1, 300, 301, 302] falls into a two-token loop the head predicts well; the others wander
const PROMPTS = [
  [1, 300, 301, 302],
  [1, 263, 400, 500, 600, 700],
  [1, 42],
  [1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [1, 100, 200, 300, 250, 150],
];
const N = 120;
const GRID = [
  [1, 1],
  [1, 0],
  [3, 3],
  [3, 2],
  [7, 7],
  [7, 6],
] as const;

/**
 * Round-level evidence of one request with proposal width k and s recurrent snapshots: the
 * rows a round discards (verify rows minus kept rows) must replay exactly when they exceed s,
 * once at most, and every later round is clamped to s proposals.
 */
function checkRounds(outcome: GenerationOutcome, k: number, s: number, label: string): boolean {
  const rounds: RoundRecord[] = outcome.rounds;
  let replayed = false;
  rounds.forEach((r, i) => {
    const at = `${label} round ${i}`;
    assert.ok(r.accepted >= 0 && r.accepted <= r.proposed, `${at}: accepted ${r.accepted} of ${r.proposed}`);
    assert.ok(r.proposed <= (replayed ? s : k), `${at}: ${r.proposed} proposals`);
    if (r.proposed === 0) return; // the first token, or a round the budget left no room for proposals
    const last = i === rounds.length - 1;
    // kept rows: the anchor and every emitted token but the new anchor (all of them at eos)
    const kept = r.tokens.length + (last && outcome.stopReason === 'eos' ? 1 : 0);
    const discarded = r.proposed + 1 - kept;
    assert.equal(r.replay, !replayed && discarded > s, `${at}: discarded ${discarded} rows with S=${s}, replay ${r.replay}`);
    if (r.replay) replayed = true;
    assert.equal(r.clampedTo, replayed ? s : null, `${at}: clamp`);
  });
  const replays = rounds.filter((r) => r.replay).length;
  assert.ok(replays <= 1, `${label}: ${replays} replays`);
  assert.equal(outcome.stats.replays, replays, `${label}: replays counted`);
  assert.equal(outcome.stats.clampedTo, replays === 1 ? s : null, `${label}: clampedTo only after a replay`);
  assert.ok(outcome.stats.accepted <= outcome.stats.proposed);
  return replays === 1;
}

describe('strategy mtp (hybrid-mtp.gguf)', () => {
  let models: ModelSet;
  let engine: EngineClient;
  let controlModel: string;
  let mtpModel: string;
  const control: GenerationOutcome[] = [];

  const openSession = async (modelId: string, strategy: 'none' | 'mtp', k = 0, s = 0) =>
    (await engine.call('createSession', { modelId, contextSize: 1024, threads: 1, strategy, k, s })).sessionId;
  // onRounds: called with the number of rounds streamed so far, at each batch
  const generate = (sessionId: string, prompt: number[], maxTokens: number, onRounds?: (n: number) => void) => {
    let n = 0;
    return runRequest(
      engine,
      { sessionId, prompt: Int32Array.from(prompt), maxTokens, sampling: GREEDY },
      { sink: (batch) => onRounds?.((n += batch.rounds.length)) },
    );
  };

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start({ testHooks: true });
    // the control loads the target as `power generate --strategy none` does: without NextN weights
    controlModel = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0 })).modelId;
    mtpModel = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0, loadMtp: true })).modelId;
    const sessionId = await openSession(controlModel, 'none');
    for (const prompt of PROMPTS) control.push(await generate(sessionId, prompt, N));
    await engine.call('disposeSession', { sessionId });
  });
  after(() => engine.close());

  for (const [k, s] of GRID) {
    test(`K=${k} S=${s}: greedy ids equal --strategy none; replay and clamp as the snapshots dictate`, async () => {
      const sessionId = await openSession(mtpModel, 'mtp', k, s);
      let replayedSomewhere = false;
      // one session for every prompt: each request also starts from the previous one's state
      for (const [i, prompt] of PROMPTS.entries()) {
        const label = `K=${k} S=${s} prompt ${prompt.join(',')}`;
        const run = await generate(sessionId, prompt, N);
        assert.equal(run.tokens.length, N, label);
        assert.equal(run.digest, control[i]!.digest, `${label}: digest`);
        assert.deepEqual(run.tokens, control[i]!.tokens, label);
        assert.ok(run.stats.proposed > 0, `${label}: the head proposed`);
        replayedSomewhere = checkRounds(run, k, s, label) || replayedSomewhere;
      }
      if (s < k) assert.ok(replayedSomewhere, `K=${k} S=${s}: some prompt rejects a first proposal and replays`);
      await engine.call('disposeSession', { sessionId });
    });
  }

  test('the head does propose what the target then emits', async () => {
    const sessionId = await openSession(mtpModel, 'mtp', 3, 3);
    let proposed = 0;
    let accepted = 0;
    for (const prompt of PROMPTS.slice(1)) {
      const run = await generate(sessionId, prompt, N);
      proposed += run.stats.proposed;
      accepted += run.stats.accepted;
    }
    // a random head agrees with the target now and then; zero would mean it reads the wrong rows
    assert.ok(accepted / proposed > 0.03, `acceptance ${accepted}/${proposed}`);
    await engine.call('disposeSession', { sessionId });
  });

  test('a conversation continues exactly after a cancel and after a failed verify', async () => {
    const sessionId = await openSession(mtpModel, 'mtp', 3, 2);
    const prompt = PROMPTS[2]!;
    const whole = control[2]!.tokens;

    // held after 7 verify rounds (8 streamed with the prompt's token): the cancel lands in flight
    let cancelSent = false;
    await engine.call('holdReplies', { afterRound: 7 });
    const cancelled = await generate(sessionId, prompt, N, (n) => {
      if (n >= 8 && !cancelSent) {
        cancelSent = true;
        void engine.call('cancel', { sessionId });
      }
    }).finally(() => engine.call('holdReplies', { afterRound: null }));
    assert.equal(cancelled.stopReason, 'cancelled');
    assert.ok(cancelled.tokens.length < N);
    assert.deepEqual(cancelled.tokens, whole.slice(0, cancelled.tokens.length));
    let sofar = [...cancelled.tokens];

    // the 4th verify of the next request fails after evaluating its rows: the session goes
    // back to its last commit, and the rounds streamed before the failure stay valid
    await engine.call('injectFailure', { sessionId, round: 4 });
    const streamed: number[] = [];
    const requestId = 'failing';
    const stop = engine.onRound(requestId, (r) => streamed.push(...r.tokens.map((t) => t.id)));
    await assert.rejects(
      engine.call('generate', {
        sessionId,
        requestId,
        prompt: Int32Array.from([...prompt, ...sofar]),
        maxTokens: N - sofar.length,
        sampling: GREEDY,
      }),
      (e: unknown) => e instanceof EngineCallError && /verify decode failed .*restored the last commit/.test(e.message),
    );
    stop();
    assert.ok(streamed.length > 0);
    sofar = [...sofar, ...streamed];
    assert.deepEqual(sofar, whole.slice(0, sofar.length));

    const rest = await generate(sessionId, [...prompt, ...sofar], N - sofar.length);
    assert.deepEqual([...sofar, ...rest.tokens], whole);
    await engine.call('disposeSession', { sessionId });
  });

  // The recurrent snapshots of a decode reach back at most to the state after its first row
  // (llama.cpp's seq_rm accepts deeper cuts within S and hands back a stale state): a failed
  // verify of fewer than S + 1 rows, and a next prompt that diverges at or before the last
  // decode's first row, must still come out exactly.
  test('short rounds: a failed verify and an edited reply within S positions stay exact', async () => {
    const none = await openSession(controlModel, 'none');
    for (const [k, s] of [
      [3, 3],
      [3, 2],
    ] as const) {
      for (const [i, prompt] of PROMPTS.slice(1, 4).entries()) {
        const whole = control[i + 1]!.tokens.slice(0, 30);
        for (const maxTokens of [2, 3]) {
          const label = `K=${k} S=${s} prompt ${prompt.join(',')} max ${maxTokens}`;
          // round 1 verifies maxTokens - 1 rows (the budget), fewer than S + 1, and fails
          const sessionId = await openSession(mtpModel, 'mtp', k, s);
          await engine.call('injectFailure', { sessionId, round: 1 });
          const streamed: number[] = [];
          const stop = engine.onRound(label, (r) => streamed.push(...r.tokens.map((t) => t.id)));
          await assert.rejects(
            engine.call('generate', {
              sessionId,
              requestId: label,
              prompt: Int32Array.from(prompt),
              maxTokens,
              sampling: GREEDY,
            }),
            /verify decode failed/,
          );
          stop();
          const rest = await generate(sessionId, [...prompt, ...streamed], whole.length - streamed.length);
          assert.deepEqual([...streamed, ...rest.tokens], whole, `${label}: after the failed verify`);

          // a short reply, then the user replaces its last evaluated token: the cut reaches
          // back to (or past) the first row of the last decode
          const short = await generate(sessionId, prompt, maxTokens);
          const edited = [...prompt, ...short.tokens.slice(0, -2), 777];
          const again = await generate(sessionId, edited, 20);
          const expected = await generate(none, edited, 20);
          assert.deepEqual(again.tokens, expected.tokens, `${label}: after the edited reply`);
          await engine.call('disposeSession', { sessionId });
        }
      }
    }
    await engine.call('disposeSession', { sessionId: none });
  });

  test('createSession refuses mtp without NextN weights, naming the reason', async () => {
    await assert.rejects(
      engine.call('createSession', { modelId: controlModel, contextSize: 256, threads: 1, strategy: 'mtp', k: 3, s: 3 }),
      /strategy 'mtp' needs the model loaded with loadMtp: true/,
    );
    const target = (await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0, loadMtp: true })).modelId;
    await assert.rejects(
      engine.call('createSession', { modelId: target, contextSize: 256, threads: 1, strategy: 'mtp', k: 3, s: 3 }),
      /strategy 'mtp' needs a model with NextN\/MTP layers; this one has none/,
    );
    await engine.call('disposeModel', { modelId: target });
  });

  test('nothing native is left alive once everything is disposed', async () => {
    await engine.call('disposeModel', { modelId: controlModel });
    await engine.call('disposeModel', { modelId: mtpModel });
    let live = await engine.call('liveHandles', {});
    for (let i = 0; i < 50 && live.jobs > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      live = await engine.call('liveHandles', {});
    }
    assert.deepEqual(live, { models: 0, contexts: 0, jobs: 0, projectors: 0 });
  });
});

describe('power generate --strategy mtp', () => {
  let models: ModelSet;
  before(async () => {
    models = await syntheticModels();
  });

  const generate = (...args: string[]): CliRun =>
    power([
      'generate',
      '--json',
      '--threads',
      '1',
      '--model',
      models['hybrid-mtp.gguf'],
      '--prompt-tokens',
      '1,42',
      '--max-tokens',
      '100',
      ...args,
    ]);
  const resultOf = (run: CliRun): GenerationResult => {
    assert.equal(run.code, 0, run.stderr);
    return GenerationResult.parse(jsonOf(run));
  };

  test('matches --strategy none by digest, with the guarded replay when S < K', () => {
    const none = resultOf(generate('--strategy', 'none'));
    const guarded = resultOf(generate('--strategy', 'mtp', '--k', '3', '--s', '2'));
    assert.equal(guarded.digest, none.digest);
    assert.deepEqual([guarded.strategy, guarded.k, guarded.s], ['mtp', 3, 2]);
    assert.ok(guarded.stats.proposed > 0 && guarded.stats.accepted <= guarded.stats.proposed);
    // on this prompt the head's first proposal is rejected in some round: 3 rows > S = 2
    assert.equal(guarded.stats.replays, 1);
    assert.equal(guarded.stats.clampedTo, 2);

    const balanced = resultOf(generate('--strategy', 'mtp', '--k', '7', '--s', '7'));
    assert.equal(balanced.digest, none.digest);
    assert.equal(balanced.stats.replays, 0);
    assert.equal(balanced.stats.clampedTo, null);
  });

  test('is refused on a model without NextN layers: one error line, exit 2', () => {
    const run = power(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--strategy', 'mtp']);
    assertUsageError(run, /^error: strategy 'mtp' is not available for .*target\.gguf: the model has no NextN\/MTP layers/);
  });
});
