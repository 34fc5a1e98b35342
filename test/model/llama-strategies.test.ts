// llama.cpp's own proposers (eagle3, dflash, dspark on their artifacts; llama.cpp's n-gram
// families) behind our proposer interface. Exactness over the K grid is the contract suite's;
// here: our rounds are llama.cpp's own (common_speculative driven by llama.cpp's code, the
// reference tool in test/tools/spec-reference.cpp: the same proposals accepted and the same
// tokens emitted, round by round); a cancel and a failure inside a round bring the proposer back
// to the last commit (the rounds that follow are the rounds a fresh session has on the same
// tokens); every wrong artifact is refused with its reason, by the engine and by `power generate`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import type { RoundRecord } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { EngineClient } from '../../app/engine/client.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { power, type CliRun } from '../fixtures/cli.js';
import { GREEDY, cancelledInFlight, generateStreamed as generate } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';
import { runSpecReference, specReferenceTool } from '../fixtures/spec-reference.js';

const PROMPT = [1, 300, 301, 302, 303];

/** What a round's proposer did: how many it proposed and how many the target kept. */
const shape = (rounds: RoundRecord[]) => rounds.map((r) => `${r.proposed}/${r.accepted}`);

describe("llama.cpp's proposers round by round against common_speculative itself", () => {
  let models: ModelSet;
  let engine: EngineClient;
  const tool = specReferenceTool('cpu');
  // the tool builds wherever npm ci built the cpu flavour from llama.cpp's source: CI fails without it
  const noReferenceTool = requirePrerequisite('missing' in tool && tool.missing);

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start();
  });
  after(() => engine.close());

  const N = 48;
  const cases = [
    ['eagle3', 'draft-eagle3', 'eagle3-close.gguf', 3],
    ['eagle3', 'draft-eagle3', 'eagle3-close.gguf', 7],
    ['dflash', 'draft-dflash', 'dflash-close.gguf', 3],
    ['dspark', 'draft-dspark', 'dspark-close.gguf', 7],
  ] as const;
  for (const [strategy, specType, draft, k] of cases) {
    test(
      `${strategy} (${draft}) K${k}: the same proposals accepted and tokens emitted in every round`,
      { skip: noReferenceTool },
      async () => {
        const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
        const { modelId: draftId } = await engine.call('loadModel', { path: models[draft], gpuLayers: 0 });
        const { sessionId } = await engine.call('createSession', {
          modelId,
          contextSize: 1024,
          threads: 1,
          strategy,
          k,
          s: k,
          draftModelId: draftId,
        });
        const ours = await generate(engine, sessionId, PROMPT, N);
        await engine.call('disposeSession', { sessionId });
        await engine.call('disposeModel', { modelId: draftId });
        await engine.call('disposeModel', { modelId });
        // our first token is an autoregressive step from the prompt's last row; llama.cpp's loop
        // verifies the prompt's last token instead. Given that first token as the prompt's last,
        // its rounds start where ours do: the same committed prompt, the same anchor
        const [first, ...rounds] = ours.rounds;
        assert.equal(first!.proposed, 0);
        const reference = runSpecReference({
          target: models['target.gguf'],
          draft: models[draft],
          specType,
          k,
          prompt: [...PROMPT, first!.tokens[0]!.id],
          tokens: N - 1,
          flavour: 'cpu',
        });
        // the last round is the budget's: ours asks for no proposal when one token is left, while
        // llama.cpp's dflash/dspark draft a whole block whatever the per-call limit (dp.n_max = 0
        // means "no limit" to common_speculative_draft); every round before it must be the same
        assert.deepEqual(
          rounds.slice(0, -1).map((r) => ({ proposed: r.proposed, accepted: r.accepted, emitted: r.tokens.map((t) => t.id) })),
          reference.rounds
            .slice(0, rounds.length - 1)
            .map((r) => ({ proposed: r.proposed.length, accepted: r.accepted, emitted: r.emitted })),
        );
        assert.deepEqual(ours.tokens.slice(1), reference.summary.tokens.slice(0, N - 1), 'the same tokens');
        assert.ok(reference.summary.accepted > 0, 'the close artifact is accepted somewhere');
      },
    );
  }
});

describe("llama.cpp's proposers: cancel and failure inside a round", () => {
  let models: ModelSet;
  let engine: EngineClient;
  const ids = new Map<string, string>();

  const load = async (name: keyof ModelSet) => {
    if (!ids.has(name)) ids.set(name, (await engine.call('loadModel', { path: models[name], gpuLayers: 0 })).modelId);
    return ids.get(name)!;
  };
  const newSession = async (
    strategy: Strategy,
    draft: keyof ModelSet | undefined,
    k: number,
    target: keyof ModelSet = 'target.gguf',
    s = k,
  ): Promise<string> =>
    (
      await engine.call('createSession', {
        modelId: await load(target),
        contextSize: 1024,
        threads: 1,
        strategy,
        k,
        s,
        ...(draft ? { draftModelId: await load(draft) } : {}),
      })
    ).sessionId;

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start({ testHooks: true });
  });
  after(async () => {
    for (const id of ids.values()) await engine.call('disposeModel', { modelId: id });
    const live = await engine.call('liveHandles', {});
    await engine.close();
    assert.deepEqual({ models: live.models, contexts: live.contexts }, { models: 0, contexts: 0 });
  });

  // on the hybrid (recurrent state, S = K - 1: replays), EAGLE-3's deferred boundary state is
  // saved every round and put back by a failure
  const configs = [
    { strategy: 'eagle3', draft: 'eagle3-close.gguf', k: 3, target: 'target.gguf', s: 3 },
    { strategy: 'dflash', draft: 'dflash-close.gguf', k: 3, target: 'target.gguf', s: 3 },
    { strategy: 'dspark', draft: 'dspark-close.gguf', k: 7, target: 'target.gguf', s: 7 },
    { strategy: 'eagle3', draft: 'eagle3-close.gguf', k: 3, target: 'hybrid-mtp.gguf', s: 2 },
  ] as const;

  for (const c of configs) {
    test(`${c.strategy} (${c.draft}) K${c.k}/S${c.s} on ${c.target}: after an injected verify failure and after a cancel, the rounds are a fresh session's`, async () => {
      const session = (strategy: Strategy, draft: keyof ModelSet, k: number) => newSession(strategy, draft, k, c.target, c.s);
      const sessionId = await session(c.strategy, c.draft, c.k);
      const whole = await generate(engine, sessionId, PROMPT, 80);
      assert.ok(
        whole.rounds.some((r) => r.proposed > 0),
        'the proposer proposes',
      );

      // the verify of round 6 fails after its rows were evaluated (and seen by the proposer's
      // draft context); the request fails with the last commit restored
      await engine.call('injectFailure', { sessionId, round: 6 });
      const failed: number[] = [];
      const requestId = randomUUID();
      const stop = engine.onRound(requestId, (r) => failed.push(...r.tokens.map((t) => t.id)));
      await assert.rejects(
        engine.call('generate', { sessionId, requestId, prompt: Int32Array.from(PROMPT), maxTokens: 80, sampling: GREEDY }),
        /verify decode failed \(code -99\); restored the last commit/,
      );
      stop();
      assert.deepEqual(failed, whole.tokens.slice(0, failed.length));
      const resumed = await generate(engine, sessionId, [...PROMPT, ...failed], 40);
      const fresh = await session(c.strategy, c.draft, c.k);
      const reference = await generate(engine, fresh, [...PROMPT, ...failed], 40);
      assert.deepEqual(resumed.tokens, reference.tokens, 'the continuation is exact');
      assert.deepEqual(shape(resumed.rounds), shape(reference.rounds), 'the proposer came back to the last commit');

      // a cancel between rounds: the same
      const cancelled = await cancelledInFlight(engine, sessionId, PROMPT, 1500, 8);
      assert.equal(cancelled.stopReason, 'cancelled');
      const after = await generate(engine, sessionId, [...PROMPT, ...cancelled.tokens], 40);
      const reference2 = await generate(engine, fresh, [...PROMPT, ...cancelled.tokens], 40);
      assert.deepEqual(after.tokens, reference2.tokens);
      assert.deepEqual(shape(after.rounds), shape(reference2.rounds));

      await engine.call('disposeSession', { sessionId });
      await engine.call('disposeSession', { sessionId: fresh });
    });
  }

  test('the engine refuses a wrong artifact, and K past a DFlash block, with the reason', async () => {
    const refused = async (strategy: Strategy, draft: keyof ModelSet | undefined, k: number, reason: RegExp) =>
      assert.rejects(newSession(strategy, draft, k), reason);
    await refused(
      'eagle3',
      'eagle3-wrong-hidden.gguf',
      3,
      /strategy 'eagle3' cannot run: the artifact was made for a target hidden size of 96, this target's is 128/,
    );
    await refused('eagle3', 'eagle3-wrong-vocab.gguf', 3, /does not share the target's vocabulary: its vocabulary has \d+ tokens/);
    await refused('eagle3', 'draft-close.gguf', 3, /the draft is a 'llama' model, not an eagle3 artifact/);
    await refused('dflash', 'eagle3-close.gguf', 3, /the draft is a 'eagle3' model, not a dflash artifact/);
    await refused('dflash', 'dflash-close.gguf', 8, /K = 8 is more than this dflash artifact drafts per block \(7/);
    await refused('eagle3', undefined, 3, /needs a draft Model/);
    await refused('ngram-mod', 'draft-close.gguf', 3, /takes no draft model/);
  });
});

describe('power generate with the artifact strategies', () => {
  let models: ModelSet;
  before(async () => {
    models = await syntheticModels();
  });

  const generate = (strategy: string, draft: keyof ModelSet, ...more: string[]): CliRun =>
    power([
      'generate',
      '--model',
      models['target.gguf'],
      '--prompt-tokens',
      PROMPT.join(','),
      '--max-tokens',
      '24',
      '--strategy',
      strategy,
      '--draft',
      models[draft],
      ...more,
    ]);
  const refusal = (run: CliRun, reason: RegExp) => {
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^error: /);
    assert.match(run.stderr, reason);
  };

  test('a wrong artifact is refused with the reason', () => {
    refusal(generate('eagle3', 'eagle3-wrong-vocab.gguf'), /vocabulary/);
    refusal(generate('eagle3', 'eagle3-wrong-hidden.gguf'), /hidden size/);
    refusal(generate('eagle3', 'draft-close.gguf'), /the draft is a plain 'llama' model, not an eagle3 artifact/);
    refusal(generate('dflash', 'dspark-close.gguf'), /the draft is a dspark artifact, not a dflash artifact/);
    refusal(
      generate('dflash', 'dflash-close.gguf', '--k', '9'),
      /K = 9 exceeds what this dflash artifact drafts in one round \(block size 8: at most 7\)/,
    );
    refusal(generate('ngram-mod', 'draft-close.gguf'), /takes no draft/);
  });
});
