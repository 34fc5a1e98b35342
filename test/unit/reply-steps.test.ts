// The steps a chat reply and a /v1 completion share (app/service/reply-steps.ts): the seed
// draw, the prompt-size refusal, the engine's sampling, and the engine status around a
// generation, crash included.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PowerError } from '../../app/contract/api/errors.js';
import { SAMPLING_DEFAULTS } from '../../app/contract/engine-types.js';
import { EngineCrashedError } from '../../app/engine/client.js';
import { checkPromptFits, crashDuringReply, drawSeed, engineSampling, whileGenerating } from '../../app/service/reply-steps.js';

type Supervisor = Parameters<typeof whileGenerating>[0];

/** The supervisor's status and crash bookkeeping, logged (crashed() is idempotent, as the real one). */
function fakeSupervisor(): { log: string[]; supervisor: Supervisor } {
  const log: string[] = [];
  let loaded = true;
  return {
    log,
    supervisor: {
      sessionFor: () => Promise.reject(new Error('not used')),
      setStatus: (s: string) => void log.push(s),
      loaded: () => loaded,
      crashed: (m: string) => {
        if (!loaded) return;
        loaded = false;
        log.push(`crashed: ${m}`, 'unloaded');
      },
    } as unknown as Supervisor,
  };
}

describe('reply steps', () => {
  test('the seed: the one asked for, a fresh draw when sampled, none for greedy', () => {
    assert.equal(drawSeed(7, 0.8), 7);
    assert.equal(drawSeed(0, 0), 0);
    assert.equal(drawSeed(undefined, 0), null);
    assert.equal(drawSeed(null, 0), null);
    const drawn = drawSeed(undefined, 0.8);
    assert.ok(drawn !== null && Number.isInteger(drawn) && drawn >= 0 && drawn < 0xffffffff);
  });

  test('a prompt that leaves no room for one token is refused with its size and the advice', () => {
    assert.doesNotThrow(() => checkPromptFits(2047, 2048, 'prompt'));
    assert.throws(
      () => checkPromptFits(2048, 2048, 'prompt'),
      (e: unknown) =>
        e instanceof PowerError && e.code === 'bad-input' && e.message === 'the prompt is 2048 tokens but the context holds 2048',
    );
    assert.throws(() => checkPromptFits(3000, 2048, 'conversation', 'start a new chat'), {
      message: 'the conversation is 3000 tokens but the context holds 2048: start a new chat',
    });
  });

  test("the engine's sampling: the request's settings over the defaults, undefined ones left at the default, greedy's seed 0", () => {
    assert.deepEqual(engineSampling({ temperature: 0.7, topP: undefined }, 42), { ...SAMPLING_DEFAULTS, temperature: 0.7, seed: 42 });
    assert.deepEqual(engineSampling({}, null), { ...SAMPLING_DEFAULTS, seed: 0 });
  });

  test("the status is 'generating' during the run and 'ready' after it, also after a failure", async () => {
    const { log, supervisor } = fakeSupervisor();
    assert.equal(await whileGenerating(supervisor, async () => 5), 5);
    await assert.rejects(
      whileGenerating(supervisor, () => Promise.reject(new Error('bad'))),
      /bad/,
    );
    assert.deepEqual(log, ['generating', 'ready', 'generating', 'ready']);
  });

  test("an engine crash marks the engine crashed and never says 'ready'; the error says how far the reply got", async () => {
    const { log, supervisor } = fakeSupervisor();
    const crash = new EngineCrashedError('the engine process stopped (signal SIGKILL)', { code: null, signal: 'SIGKILL' });
    await assert.rejects(
      whileGenerating(supervisor, () => Promise.reject(crash)),
      EngineCrashedError,
    );
    assert.deepEqual(log, ['generating', 'crashed: the engine process stopped (signal SIGKILL)', 'unloaded']);
    const kept = crashDuringReply(supervisor, crash, 12, true);
    assert.equal(kept.code, 'engine-crashed');
    assert.match(
      kept.message,
      /^the engine stopped during this reply; the 12 tokens before it are kept, and the model reloads on the next request \(the engine process stopped/,
    );
    assert.match(crashDuringReply(supervisor, crash, 3, false).message, /during this reply; after 3 tokens, and the model reloads/);
  });
});
