// The engine host and the native objects behind it: streaming order, cancel and continue,
// dispose during a request, a crashed host, and no native handle left behind.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { after, before, describe, test } from 'node:test';

import { EngineClient, EngineCrashedError } from '../../app/engine/client.js';
import type { EngineHostProcess } from '../../app/engine/launcher.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { GREEDY, cancelledInFlight, generateStreamed as generate } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

async function settledHandles(engine: EngineClient) {
  // a finished job releases its thread-safe function one event-loop turn after it settles
  for (let i = 0; i < 50; i++) {
    const live = await engine.call('liveHandles', {});
    if (live.jobs === 0) return live;
    await new Promise((r) => setTimeout(r, 10));
  }
  return engine.call('liveHandles', {});
}

describe('engine host', () => {
  let models: ModelSet;
  let engine: EngineClient;

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start({ testHooks: true });
  });
  after(() => engine.close());

  for (const name of ['target.gguf', 'hybrid-mtp.gguf'] as const) {
    test(`a cancelled request on ${name} keeps its tokens and the session continues exactly`, async () => {
      const { modelId } = await engine.call('loadModel', { path: models[name], gpuLayers: 0 });
      const { sessionId } = await engine.call('createSession', { modelId, contextSize: 2048, threads: 1 });
      const prompt = [1, 300, 301, 302, 303];
      const N = 1500;

      const whole = await generate(engine, sessionId, prompt, N);
      assert.equal(whole.stopReason, 'max-tokens');
      assert.equal(whole.tokens.length, N);

      // a fresh conversation, cancelled from the stream after 10 rounds
      const cancelled = await cancelledInFlight(engine, sessionId, prompt, N, 10);
      assert.equal(cancelled.stopReason, 'cancelled');
      assert.ok(cancelled.tokens.length >= 10 && cancelled.tokens.length < N, `${cancelled.tokens.length} tokens`);
      assert.deepEqual(cancelled.tokens, whole.tokens.slice(0, cancelled.tokens.length));

      const rest = await generate(engine, sessionId, [...prompt, ...cancelled.tokens], N - cancelled.tokens.length);
      assert.deepEqual([...cancelled.tokens, ...rest.tokens], whole.tokens);

      await engine.call('disposeSession', { sessionId });
      await engine.call('disposeModel', { modelId });
    });
  }

  test('a load reports progress up to 1', async () => {
    const seen: number[] = [];
    const stop = engine.onProgress('load-progress', (p) => seen.push(p));
    const { modelId } = await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0, requestId: 'load-progress' });
    stop();
    assert.ok(seen.length >= 2, `${seen.length} progress events`);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      seen,
      'progress never goes back',
    );
    assert.equal(seen.at(-1), 1);
    await engine.call('disposeModel', { modelId });
  });

  test('rounds stream in order with increasing times', async () => {
    const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId } = await engine.call('createSession', { modelId, contextSize: 256, threads: 1 });
    const run = await generate(engine, sessionId, [1, 400, 401], 30);
    assert.equal(run.rounds.length, 30);
    for (let i = 1; i < run.rounds.length; i++) {
      assert.ok(run.rounds[i]!.endUs >= run.rounds[i - 1]!.endUs);
      assert.equal(run.rounds[i]!.tokens[0]!.origin, 'target');
    }
    await engine.call('disposeSession', { sessionId });
    await engine.call('disposeModel', { modelId });
  });

  test('rounds cross in coalesced batches: the first token alone at once, then every round in order', async () => {
    const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId, threads } = await engine.call('createSession', { modelId, contextSize: 256 });
    // the default: physical cores, never more than the logical CPUs (docs/cli.md "Threads")
    const cpus = availableParallelism();
    assert.ok(threads >= 1 && threads <= cpus, `default threads ${threads} on ${cpus} CPUs`);
    // the IPC messages themselves (the client expands each batch into round records)
    const child = (engine as unknown as { child: EngineHostProcess }).child;
    const batches: number[] = [];
    let counting = true; // the launcher's process has no off(): stop counting instead
    child.onMessage((message) => {
      const m = message as { event?: string; payload?: { batch: { rounds: number } } };
      if (counting && m.event === 'engine.onRounds') batches.push(m.payload!.batch.rounds);
    });
    try {
      const run = await generate(engine, sessionId, [1, 400, 401], 60);
      assert.equal(run.rounds.length, 60);
      assert.equal(batches[0], 1, 'the first token is handed over alone, without waiting for later rounds');
      assert.equal(
        batches.reduce((a, b) => a + b, 0),
        60,
        'every round crossed exactly once',
      );
      assert.ok(batches.length <= 60);
    } finally {
      counting = false;
    }
    await engine.call('disposeSession', { sessionId });
    await engine.call('disposeModel', { modelId });
  });

  test('a context that fills up stops with context-full', async () => {
    const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId, contextSize } = await engine.call('createSession', { modelId, contextSize: 32, threads: 1 });
    assert.ok(contextSize >= 32); // llama.cpp may round the context up
    const run = await generate(engine, sessionId, [1, 400, 401], 100_000);
    assert.equal(run.stopReason, 'context-full');
    // every position of the context holds a token; the last emitted one is not evaluated
    assert.equal(run.tokens.length, contextSize - 3 + 1);
    await engine.call('disposeSession', { sessionId });
    await engine.call('disposeModel', { modelId });
  });

  test('disposing a session during a request cancels it and frees the context', async () => {
    const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId } = await engine.call('createSession', { modelId, contextSize: 2048, threads: 1 });
    const run = await cancelledInFlight(engine, sessionId, [1, 300], 2000, 5, () => engine.call('disposeSession', { sessionId }));
    await run.cancelled;
    assert.equal(run.stopReason, 'cancelled');
    await assert.rejects(
      engine.call('generate', {
        sessionId,
        requestId: 'x',
        prompt: Int32Array.of(1),
        maxTokens: 1,
        sampling: GREEDY,
      }),
      /no session/,
    );
    await engine.call('disposeModel', { modelId });
  });

  test('bad calls are errors, not crashes', async () => {
    const { modelId } = await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId, contextSize } = await engine.call('createSession', { modelId, contextSize: 64, threads: 1 });
    const call = (prompt: number[], maxTokens = 4) =>
      engine.call('generate', { sessionId, requestId: 'bad', prompt: Int32Array.from(prompt), maxTokens, sampling: GREEDY });
    await assert.rejects(call([1, 99999]), /outside the vocabulary/);
    await assert.rejects(call([]), /the prompt is empty/);
    const long = contextSize + 5;
    await assert.rejects(call(new Array(long).fill(300)), new RegExp(`the prompt is ${long} tokens but the context holds ${contextSize}`));
    assert.equal((await call([1, 300])).generated, 4); // the session is still usable
    await engine.call('disposeSession', { sessionId });
    await engine.call('disposeModel', { modelId });
  });

  test('nothing native is left alive once everything is disposed', async () => {
    assert.deepEqual(await settledHandles(engine), { models: 0, contexts: 0, jobs: 0, projectors: 0 });
  });

  test('a crashed engine host fails pending calls with EngineCrashedError', async () => {
    const doomed = EngineClient.start();
    const { modelId } = await doomed.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId } = await doomed.call('createSession', { modelId, contextSize: 2048, threads: 1 });
    const pending = generate(doomed, sessionId, [1, 300], 2000, (_r, rounds) => {
      if (rounds.length === 3) (doomed as unknown as { child: { kill(s: string): void } }).child.kill('SIGKILL');
    });
    await assert.rejects(pending, (e: unknown) => e instanceof EngineCrashedError && /signal SIGKILL/.test(e.message));
    assert.ok(doomed.crash instanceof EngineCrashedError);
    await assert.rejects(doomed.call('liveHandles', {}), EngineCrashedError);
  });

  test('a host that executes an illegal instruction (the trap hook) dies of SIGILL and names the flavour and what to try', async () => {
    const doomed = EngineClient.start({ flavour: 'cpu', testHooks: true });
    await assert.rejects(doomed.call('trap', {}), (e: unknown) => {
      assert.ok(e instanceof EngineCrashedError);
      assert.match(
        e.message,
        /signal SIGILL\): the cpu flavour's llama\.cpp ran an instruction this CPU does not execute; .*POWER_FLAVOUR=cpu-prebuilt/,
      );
      return true;
    });
  });

  test('a host that dies of SIGILL at its first decode names the flavour and what to try', async () => {
    const doomed = EngineClient.start({ flavour: 'cpu' });
    const { modelId } = await doomed.call('loadModel', { path: models['target-q8_0.gguf'], gpuLayers: 0 });
    const { sessionId } = await doomed.call('createSession', { modelId, contextSize: 2048, threads: 1 });
    const pending = generate(doomed, sessionId, [1, 300], 2000, (_r, rounds) => {
      if (rounds.length === 1) process.kill(doomed.pid!, 'SIGILL');
    });
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(e instanceof EngineCrashedError);
      assert.match(
        e.message,
        /signal SIGILL\): the cpu flavour's llama\.cpp ran an instruction this CPU does not execute \(at its first decode\); .*POWER_FLAVOUR=cpu-prebuilt.*npm run build:native/,
      );
      return true;
    });
  });
});

describe('speculative requests: cancel and failure inside a round', () => {
  let models: ModelSet;
  let engine: EngineClient;

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start({ testHooks: true });
  });
  after(() => engine.close());

  const configs = [
    { name: 'draft-model K4 on the llama target', target: 'target.gguf', strategy: 'draft-model', draft: 'draft-close.gguf', k: 4, s: 4 },
    { name: 'ngram K3/S2 on the hybrid target', target: 'hybrid-mtp.gguf', strategy: 'ngram', k: 3, s: 2 },
    { name: 'ngram K3/S3 on the hybrid target', target: 'hybrid-mtp.gguf', strategy: 'ngram', k: 3, s: 3 },
  ] as const;

  for (const c of configs) {
    test(`${c.name}: an injected verify failure restores the last commit and the session continues exactly`, async () => {
      const { modelId } = await engine.call('loadModel', { path: models[c.target], gpuLayers: 0 });
      const draft = 'draft' in c ? await engine.call('loadModel', { path: models[c.draft], gpuLayers: 0 }) : undefined;
      const { sessionId } = await engine.call('createSession', {
        modelId,
        contextSize: 2048,
        threads: 1,
        strategy: c.strategy,
        k: c.k,
        s: c.s,
        ...(draft ? { draftModelId: draft.modelId } : {}),
      });
      const prompt = [1, 500, 501, 500, 501];
      const whole = await generate(engine, sessionId, prompt, 120);

      await engine.call('injectFailure', { sessionId, round: 6 });
      const requestId = randomUUID();
      const before: number[] = [];
      const stop = engine.onRound(requestId, (r) => before.push(...r.tokens.map((t) => t.id)));
      await assert.rejects(
        engine.call('generate', { sessionId, requestId, prompt: Int32Array.from(prompt), maxTokens: 120, sampling: GREEDY }),
        /verify decode failed \(code -99\); restored the last commit/,
      );
      stop();
      assert.ok(before.length > 0 && before.length < 120);
      assert.deepEqual(before, whole.tokens.slice(0, before.length), 'what streamed before the failure was committed output');
      const rest = await generate(engine, sessionId, [...prompt, ...before], 120 - before.length);
      assert.deepEqual([...before, ...rest.tokens], whole.tokens);

      // a cancel in the middle of speculative rounds: same continuation
      const cancelled = await cancelledInFlight(engine, sessionId, prompt, 1500, 8);
      assert.equal(cancelled.stopReason, 'cancelled');
      const full = await generate(engine, sessionId, prompt, cancelled.tokens.length + 40);
      const resumed = await generate(engine, sessionId, [...prompt, ...cancelled.tokens], 40);
      assert.deepEqual([...cancelled.tokens, ...resumed.tokens], full.tokens);

      await engine.call('disposeSession', { sessionId });
      await engine.call('disposeModel', { modelId });
      if (draft) await engine.call('disposeModel', { modelId: draft.modelId });
    });
  }

  test('the failure hook is off unless the engine was started for tests', async () => {
    const plain = EngineClient.start();
    const { modelId } = await plain.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 });
    const { sessionId } = await plain.call('createSession', { modelId, contextSize: 64, threads: 1 });
    await assert.rejects(plain.call('injectFailure', { sessionId, round: 1 }), /test hooks are off/);
    await plain.close();
  });

  test('nothing native is left alive', async () => {
    assert.deepEqual(await settledHandles(engine), { models: 0, contexts: 0, jobs: 0, projectors: 0 });
  });
});
