// EngineClient over an in-memory engine host: the real client and the real channel server on
// engineApi, with a stand-in implementation instead of the native addon. Params are checked
// (and completed) before they leave, results and events when they come back, error codes
// survive the hop, and a host that dies or breaks the protocol fails every pending call with
// EngineCrashedError.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { PowerError } from '../../app/contract/api/errors.js';
import { K_MAX } from '../../app/contract/profile.js';
import { serveChannel, type ImplementationOf } from '../../app/contract/channel/serve.js';
import { engineApi, ENGINE_CHECKS, type EngineApi } from '../../app/engine/protocol.js';
import { crashAdvice, describeExit, EngineCallError, EngineClient, EngineCrashedError, faultOf } from '../../app/engine/client.js';
import type { EngineHostProcess, EngineLauncher } from '../../app/engine/launcher.js';
import { twoRounds } from '../fixtures/round-batch.js';

type Host = ImplementationOf<EngineApi>['engine'];

/** An engine host in this process: messages cloned and delivered on a later turn, as over IPC. */
function inMemoryHost(host: Partial<Host>) {
  const toHost: ((m: unknown) => void)[] = [];
  const toClient: ((m: unknown) => void)[] = [];
  const exits: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  const sent: unknown[] = [];
  let alive = true;
  const deliver = (listeners: ((m: unknown) => void)[], message: unknown) => {
    const copy = structuredClone(message);
    setImmediate(() => alive && listeners.forEach((l) => l(copy)));
  };
  const exit = (code: number | null, signal: NodeJS.Signals | null) => {
    if (!alive) return;
    alive = false;
    setImmediate(() => exits.forEach((l) => l(code, signal)));
  };
  const rounds = new Set<(p: unknown) => void>();
  const impl = {
    ...host,
    onRounds: (listener: (p: unknown) => void) => {
      rounds.add(listener);
      return () => void rounds.delete(listener);
    },
    onProgress: () => () => {},
  } as unknown as Host;
  serveChannel(
    engineApi,
    { engine: impl },
    { send: (m) => deliver(toClient, m), onMessage: (l) => void toHost.push(l), onClose: () => {} },
    { checks: ENGINE_CHECKS },
  );
  const child: EngineHostProcess = {
    pid: 4242,
    send: (message) => {
      sent.push(message);
      if (alive) deliver(toHost, message);
    },
    onMessage: (listener) => void toClient.push(listener),
    onExit: (listener) => void exits.push(listener),
    stderr: null,
    disconnect: () => exit(0, null),
    kill: () => exit(null, 'SIGKILL'),
  };
  const launcher: EngineLauncher = () => child;
  return {
    launcher,
    sent,
    emitRounds: (payload: unknown) => rounds.forEach((l) => l(payload)),
    /** a message no channel server would send */
    injectToClient: (message: unknown) => deliver(toClient, message),
    die: (signal: NodeJS.Signals = 'SIGKILL') => exit(null, signal),
    /** ends with an exit code and no signal, as every process does on Windows */
    exitWith: (code: number) => exit(code, null),
  };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};
const calls = (sent: unknown[]) => sent.filter((m) => (m as { method?: string }).method);

describe('EngineClient over the channel', () => {
  test('params are checked and completed with their defaults before they leave; the host gets them as sent', async () => {
    const got: unknown[] = [];
    const host = inMemoryHost({
      createSession: (p) => {
        got.push(p);
        return { sessionId: 's1', contextSize: p.contextSize, threads: 1, k: p.k ?? 0, s: p.s ?? 0, recurrent: false, flashAttn: 'off' };
      },
    });
    const engine = EngineClient.start({ launcher: host.launcher });
    const made = await engine.call('createSession', { modelId: 'm1', contextSize: 64 });
    assert.equal(made.sessionId, 's1');
    assert.deepEqual(got, [
      {
        modelId: 'm1',
        contextSize: 64,
        strategy: 'none',
        fallbacks: [],
        pMin: 0,
        adaptiveK: false,
        k: 0,
        s: 0,
        batchSize: 512,
        threads: 0,
        flashAttn: 'auto',
        proposerSampling: 'auto',
      },
    ]);
    await assert.rejects(
      engine.call('createSession', { modelId: 'm1', contextSize: 64, k: K_MAX + 1 }),
      (e: unknown) =>
        e instanceof EngineCallError &&
        e instanceof PowerError &&
        e.code === 'bad-input' &&
        e.method === 'createSession' &&
        /k: /.test(e.message),
    );
    assert.equal(calls(host.sent).length, 1, 'a refused call never reached the host');
    await engine.close();
  });

  test('an error keeps its code across the hop: EngineCallError is a PowerError with the code the host threw', async () => {
    const host = inMemoryHost({
      loadModel: () => {
        throw new PowerError('unsupported', 'not a model this engine serves');
      },
      tokenize: () => {
        throw Object.assign(new Error('no such device'), { code: 'device' });
      },
      detokenize: () => {
        throw new Error("the model's vocabulary cannot detokenize these tokens");
      },
    });
    const engine = EngineClient.start({ launcher: host.launcher });
    await assert.rejects(
      engine.call('loadModel', { path: '/m.gguf' }),
      (e: unknown) =>
        e instanceof EngineCallError &&
        e.code === 'unsupported' &&
        e.method === 'loadModel' &&
        e.message === 'not a model this engine serves',
    );
    await assert.rejects(
      engine.call('tokenize', { modelId: 'm1', text: 'x', addSpecial: false, parseSpecial: false }),
      (e: unknown) => e instanceof EngineCallError && e.code === 'device',
    );
    await assert.rejects(
      engine.call('detokenize', { modelId: 'm1', tokens: Int32Array.from([1]), renderSpecial: false }),
      (e: unknown) => e instanceof EngineCallError && e.code === 'internal' && /cannot detokenize/.test(e.message),
    );
    assert.equal(engine.crash, null, 'the host is fine');
    await engine.close();
  });

  test('results are checked against engineApi; typed arrays arrive as typed arrays', async () => {
    const host = inMemoryHost({
      tokenize: () => Int32Array.from([1, 2, 3]),
      detokenize: () => 42 as unknown as string,
    });
    const engine = EngineClient.start({ launcher: host.launcher });
    const tokens = await engine.call('tokenize', { modelId: 'm1', text: 'abc', addSpecial: false, parseSpecial: false });
    assert.ok(tokens instanceof Int32Array);
    assert.deepEqual([...tokens], [1, 2, 3]);
    await assert.rejects(
      engine.call('detokenize', { modelId: 'm1', tokens, renderSpecial: false }),
      (e: unknown) =>
        e instanceof EngineCallError &&
        e.code === 'internal' &&
        /engine\.detokenize answered with a result that does not match/.test(e.message),
    );
    await engine.close();
  });

  test('rounds reach the listener of their request id, expanded into round records', async () => {
    const host = inMemoryHost({});
    const engine = EngineClient.start({ launcher: host.launcher });
    const mine: number[][] = [];
    const stop = engine.onRound('r1', (round) => mine.push(round.tokens.map((t) => t.id)));
    await settle();
    host.emitRounds({ requestId: 'r1', batch: twoRounds() });
    host.emitRounds({ requestId: 'someone-else', batch: twoRounds() });
    await settle();
    stop();
    host.emitRounds({ requestId: 'r1', batch: twoRounds() });
    await settle();
    assert.deepEqual(mine, [[7], [8, 9, 10]]);
    await engine.close();
  });

  test('a host that dies fails every pending call, and every later one, with EngineCrashedError', async () => {
    const host = inMemoryHost({ generate: () => new Promise(() => {}) });
    const engine = EngineClient.start({ launcher: host.launcher });
    const exited = new Promise<EngineCrashedError>((resolve) => engine.onHostExit(resolve));
    const pending = engine.call('generate', { sessionId: 's1', requestId: 'r1', prompt: Int32Array.from([1]), maxTokens: 4, sampling: {} });
    await settle();
    host.die();
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof EngineCrashedError && /the engine process stopped \(signal SIGKILL\)/.test(e.message),
    );
    assert.ok((await exited) instanceof EngineCrashedError);
    assert.ok(engine.crash instanceof EngineCrashedError);
    await assert.rejects(engine.call('liveHandles', {}), EngineCrashedError);
  });

  test('a host that dies of SIGILL while loading says which flavour died and what to try', async () => {
    const host = inMemoryHost({ loadModel: () => new Promise(() => {}) });
    const engine = EngineClient.start({ launcher: host.launcher, flavour: 'cpu' });
    const pending = engine.call('loadModel', { path: '/models/m.gguf', gpuLayers: 0 });
    await settle();
    host.die('SIGILL');
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(e instanceof EngineCrashedError);
      assert.match(
        e.message,
        /signal SIGILL\): the cpu flavour's llama\.cpp ran an instruction this CPU does not execute \(loading a model\)/,
      );
      assert.match(e.message, /POWER_FLAVOUR=cpu-prebuilt/);
      assert.match(e.message, /npm run build:native/);
      return true;
    });
  });

  test('a SIGSEGV at the first decode gets the advice, one after a finished generation does not', async () => {
    const first = inMemoryHost({ generate: () => new Promise(() => {}) });
    const fresh = EngineClient.start({ launcher: first.launcher, flavour: 'cpu-prebuilt' });
    const pending = fresh.call('generate', { sessionId: 's1', requestId: 'r1', prompt: Int32Array.from([1]), maxTokens: 4, sampling: {} });
    await settle();
    first.die('SIGSEGV');
    await assert.rejects(
      pending,
      /the cpu-prebuilt flavour's llama\.cpp crashed at its first decode; .*try POWER_FLAVOUR=cpu \(llama\.cpp built here\)/,
    );

    let calls = 0;
    const done = {
      stopReason: 'max-tokens' as const,
      replays: 0,
      clampedTo: null,
      promptTokens: 1,
      reusedTokens: 0,
      prefillUs: 1,
      totalUs: 2,
      generated: 4,
      grammarCut: 0,
      sampling: { path: 'cpu' as const, reason: null },
    };
    const later = inMemoryHost({ generate: () => (++calls === 1 ? Promise.resolve(done) : new Promise(() => {})) });
    const used = EngineClient.start({ launcher: later.launcher, flavour: 'cpu' });
    const request = { sessionId: 's1', requestId: 'r1', prompt: Int32Array.from([1]), maxTokens: 4, sampling: {} };
    await used.call('generate', request);
    const second = used.call('generate', { ...request, requestId: 'r2' });
    await settle();
    later.die('SIGSEGV');
    await assert.rejects(
      second,
      (e: unknown) => e instanceof EngineCrashedError && /signal SIGSEGV/.test(e.message) && !/POWER_FLAVOUR/.test(e.message),
    );
  });

  test('crashAdvice: SIGILL always, SIGSEGV and SIGBUS only while loading or at the first decode, nothing for a kill', () => {
    assert.match(crashAdvice('cpu', 'SIGILL', null)!, /^the cpu flavour's llama\.cpp ran an instruction this CPU does not execute; /);
    assert.match(crashAdvice('cuda', 'SIGBUS', 'loading a model')!, /crashed while loading a model; .*POWER_FLAVOUR=cpu-prebuilt/);
    assert.equal(crashAdvice('cpu', 'SIGSEGV', null), null);
    assert.equal(crashAdvice('cpu', 'SIGKILL', 'loading a model'), null);
    assert.equal(crashAdvice('cpu', null, 'at its first decode'), null);
  });

  test('on Windows a host killed by an illegal instruction (exit code 0xC000001D) gets the SIGILL advice, with the status named', async () => {
    const host = inMemoryHost({ loadModel: () => new Promise(() => {}) });
    const engine = EngineClient.start({ launcher: host.launcher, flavour: 'cpu' });
    const pending = engine.call('loadModel', { path: 'C:\\models\\m.gguf', gpuLayers: 0 });
    await settle();
    host.exitWith(0xc000001d);
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(e instanceof EngineCrashedError);
      assert.match(
        e.message,
        /\(exit code 0xC000001D, STATUS_ILLEGAL_INSTRUCTION\): the cpu flavour's llama\.cpp ran an instruction this CPU does not execute \(loading a model\); .*POWER_FLAVOUR=cpu-prebuilt/,
      );
      return true;
    });
  });

  test('Windows exception codes read as the signals they mean; other exit codes read as themselves', () => {
    assert.equal(faultOf(0xc000001d, null), 'SIGILL');
    assert.equal(faultOf(0xc0000005, null), 'SIGSEGV');
    assert.equal(faultOf(0xc0000006, null), 'SIGBUS');
    // the same code as a signed 32-bit number
    assert.equal(faultOf(0xc0000005 | 0, null), 'SIGSEGV');
    assert.equal(faultOf(1, null), null);
    assert.equal(faultOf(null, 'SIGKILL'), 'SIGKILL');
    assert.equal(describeExit(0xc0000005, null), 'exit code 0xC0000005, STATUS_ACCESS_VIOLATION');
    assert.equal(describeExit(3, null), 'exit code 3');
    assert.equal(describeExit(null, 'SIGILL'), 'signal SIGILL');
  });

  test('a message that breaks the protocol or a payload that breaks engineApi counts as a crash', async () => {
    for (const bad of [
      { kind: 'response', id: 1, ok: true },
      { event: 'engine.onRounds', payload: { requestId: 'r1', batch: { ...twoRounds(), rounds: 3 } } },
    ]) {
      const host = inMemoryHost({ generate: () => new Promise(() => {}) });
      const engine = EngineClient.start({ launcher: host.launcher });
      engine.onRound('r1', () => assert.fail('a bad batch reached a listener'));
      const exited = new Promise<EngineCrashedError>((resolve) => engine.onHostExit(resolve));
      const pending = engine.call('generate', {
        sessionId: 's1',
        requestId: 'r1',
        prompt: Int32Array.from([1]),
        maxTokens: 4,
        sampling: {},
      });
      await settle();
      host.injectToClient(bad);
      await assert.rejects(pending, (e: unknown) => e instanceof EngineCrashedError && /engine sent a malformed message/.test(e.message));
      const crash = await exited;
      assert.match(crash.message, /signal SIGKILL.*engine sent a malformed message/, 'the host was stopped for it');
      await assert.rejects(engine.call('liveHandles', {}), EngineCrashedError);
    }
  });
});
