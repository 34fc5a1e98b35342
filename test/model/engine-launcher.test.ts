// The engine-host entry under the launcher abstraction: the same host file started by
// child_process.fork (power serve, the CLI) and by a supplied launcher that presents the host
// with an Electron utility process's parentPort (what the shell passes), each loading a real
// synthetic model, streaming rounds, and exiting on close without being killed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { EngineClient } from '../../app/engine/client.js';
import {
  forkLauncher,
  getDefaultEngineLauncher,
  setDefaultEngineLauncher,
  type EngineHostSpec,
  type EngineLauncher,
} from '../../app/engine/launcher.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { emulatedUtilityLauncher } from '../fixtures/launchers.js';
import { syntheticModels } from '../fixtures/models.js';
import { GREEDY } from '../fixtures/engine-generate.js';

/** Wraps a launcher to see how its host exited. */
function watched(launch: EngineLauncher, exits: (number | null)[]): EngineLauncher {
  return (spec) => {
    const child = launch(spec);
    child.onExit((code) => exits.push(code));
    return child;
  };
}

async function tenTokens(engine: EngineClient, path: string): Promise<number[]> {
  const { modelId } = await engine.call('loadModel', { path, gpuLayers: 0 });
  const { sessionId } = await engine.call('createSession', { modelId, contextSize: 256, threads: 1 });
  const requestId = randomUUID();
  const tokens: number[] = [];
  const stop = engine.onRound(requestId, (round) => tokens.push(...round.tokens.map((t) => t.id)));
  const result = await engine.call('generate', {
    sessionId,
    requestId,
    prompt: Int32Array.from([1, 400, 401]),
    maxTokens: 10,
    sampling: GREEDY,
  });
  stop();
  assert.equal(result.generated, 10);
  await engine.call('disposeSession', { sessionId });
  await engine.call('disposeModel', { modelId });
  return tokens;
}

describe('engine host under each launcher', () => {
  let models: ModelSet;
  const reference: number[] = [];
  before(async () => {
    models = await syntheticModels();
  });

  const launchers: [string, () => EngineLauncher][] = [
    ['child_process.fork', () => forkLauncher],
    ['a supplied utility-process launcher (parentPort)', () => emulatedUtilityLauncher()],
  ];
  for (const [name, make] of launchers) {
    test(`${name}: the host answers, streams a reply and exits 0 on close`, async () => {
      const exits: (number | null)[] = [];
      const engine = EngineClient.start({ launcher: watched(make(), exits) });
      const hello = await engine.call('hello', {});
      assert.equal(hello.flavour, 'cpu');
      assert.ok(engine.pid && engine.pid > 0);
      const tokens = await tenTokens(engine, models['target.gguf']);
      if (reference.length === 0) reference.push(...tokens);
      else assert.deepEqual(tokens, reference, 'both launchers run the same engine');
      await engine.close();
      assert.deepEqual(exits, [0], 'the host left on its own (not killed)');
    });
  }

  test('a host that dies is reported as a crash under the supplied launcher too', async () => {
    const engine = EngineClient.start({ launcher: emulatedUtilityLauncher() });
    await engine.call('hello', {});
    const crashed = new Promise<string>((resolve) => engine.onHostExit((e) => resolve(e.message)));
    process.kill(engine.pid!, 'SIGKILL');
    assert.match(await crashed, /the engine process stopped/);
    await assert.rejects(engine.call('hello', {}), /the engine process stopped/);
  });

  describe('the default launcher', () => {
    const original = getDefaultEngineLauncher();
    after(() => setDefaultEngineLauncher(original));

    test('is fork until a front door sets another; EngineClient.start then uses it', async () => {
      assert.equal(original, forkLauncher);
      const started: EngineHostSpec[] = [];
      setDefaultEngineLauncher(emulatedUtilityLauncher(started));
      const engine = EngineClient.start({ flavour: 'cpu' });
      await engine.call('hello', {});
      await engine.close();
      assert.equal(started.length, 1);
      assert.match(started[0]!.hostFile, /host\.(ts|js)$/);
      assert.equal(started[0]!.env.POWER_ADDON_FLAVOUR, 'cpu');
    });
  });
});
