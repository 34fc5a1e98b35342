// The other two boundaries under fire, seeded and reproducible like the /ws corpus
// (serve-fuzz.test.ts): messages into the Electron IPC dispatcher in front of a real service
// (from the app's own page and from frames the policy refuses), and messages into a real engine
// host over its process channel. Every message that carries an id is answered under that id,
// the receiver stays up and answers a well-formed call afterwards, nothing is left subscribed,
// and memory stays bounded. POWER_FUZZ_SEED and POWER_FUZZ_CASES run another or a longer campaign.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import fc from 'fast-check';

import { powerApi } from '../../app/contract/api/index.js';
import { engineApi } from '../../app/engine/protocol.js';
import { createIpcDispatcher, type SenderInfo } from '../../main/ipc/dispatcher.js';
import { isTrustedSender } from '../../main/policy/sender.js';
import { forkLauncher, type EngineHostProcess } from '../../app/engine/launcher.js';
import { ROOT } from '../../app/paths.js';
import { createPowerService, type PowerService } from '../../app/service/index.js';

const SEED = Number(process.env.POWER_FUZZ_SEED ?? 20261201);
const CASES = Number(process.env.POWER_FUZZ_CASES ?? 2000);

interface Message {
  message: unknown;
  /** the id the receiver must answer under (null: none it could tell) */
  id: number | null;
}

/** Envelopes for one description (real and unknown methods and events, inputs of any shape), and junk. */
function corpus(
  description: Record<string, { methods: Record<string, unknown>; events: Record<string, unknown> }>,
  skip: (concern: string, method: string) => boolean,
  seed: number,
): Message[] {
  const methods = Object.entries(description).flatMap(([concern, c]) =>
    Object.keys(c.methods)
      .filter((method) => !skip(concern, method))
      .map((method) => ({ concern, method })),
  );
  const events = Object.entries(description).flatMap(([concern, c]) => Object.keys(c.events).map((e) => `${concern}.${e}`));
  const id = fc.integer({ min: 1, max: 50 });
  const withId = (m: Record<string, unknown>): Message => ({
    message: m,
    id: typeof m.id === 'number' && Number.isInteger(m.id) ? m.id : null,
  });
  const message = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .record({ id, m: fc.constantFrom(...methods), input: fc.anything() })
        .map(({ id, m, input }) => withId({ id, ...m, input })),
    },
    {
      weight: 3,
      arbitrary: fc
        .record({
          id,
          m: fc.constantFrom(...methods),
          input: fc.dictionary(
            fc.string(),
            fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.int32Array(), fc.float32Array()),
          ),
        })
        .map(({ id, m, input }) => withId({ id, ...m, input })),
    },
    { weight: 1, arbitrary: fc.record({ id, concern: fc.string(), method: fc.string(), input: fc.anything() }).map(withId) },
    { weight: 1, arbitrary: fc.record({ id, subscribe: fc.oneof(fc.constantFrom(...events), fc.string()) }).map(withId) },
    { weight: 1, arbitrary: fc.record({ id, unsubscribe: fc.oneof(fc.constantFrom(...events), fc.string()) }).map(withId) },
    { weight: 1, arbitrary: fc.anything().map((message) => ({ message, id: null })) },
  );
  return fc.sample(message, { seed, numRuns: CASES });
}

const answeredId = (answer: unknown): unknown =>
  typeof answer === 'object' && answer !== null ? (answer as { id?: unknown }).id : undefined;
const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

describe('Electron IPC dispatcher fuzzing against a real service', () => {
  let dir = '';
  let service: PowerService;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'power-ipc-fuzz-'));
    service = await createPowerService({ dataDir: join(dir, 'data') });
  });
  after(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test(`${CASES} seeded messages (seed ${SEED}) from the page and from refused frames: each answered under its id, the service stays usable, no subscription outlives the page`, async () => {
    const logs: string[] = [];
    const dispatcher = createIpcDispatcher(powerApi, service.implementation, { isTrustedSender, log: (l) => logs.push(l) });
    const page: SenderInfo = { id: 1, url: 'app://power/index.html', isMainFrame: true };
    const strangers: SenderInfo[] = [
      { id: 2, url: 'https://example.com/', isMainFrame: true },
      { id: 1, url: 'app://power/index.html', isMainFrame: false },
      { id: 3, url: null, isMainFrame: true },
    ];
    // a download would reach the network, and adding a path scans the disk
    const messages = corpus(powerApi, (c, m) => (c === 'downloads' && m === 'start') || (c === 'models' && m === 'add'), SEED);
    const heapBefore = process.memoryUsage().heapUsed;
    let answered = 0;
    let refused = 0;
    for (const [i, { message, id }] of messages.entries()) {
      const sender = i % 7 === 3 ? strangers[i % strangers.length]! : page;
      const answers: unknown[] = [];
      const got = new Promise<void>((resolve) =>
        dispatcher.receive(sender, structuredClone(message), (answer) => {
          answers.push(answer);
          if (answeredId(answer) === id || id === null) resolve();
        }),
      );
      const outcome = await Promise.race([got.then(() => 'answered' as const), timeout(10_000)]);
      assert.equal(outcome, 'answered', `case ${i}: no answer to ${JSON.stringify(message)?.slice(0, 200)}`);
      if (sender !== page) {
        refused++;
        assert.match(JSON.stringify(answers[0]), /this frame may not use PowerApi/, `case ${i}: a refused frame reaches nothing`);
      } else answered++;
    }
    assert.ok(answered > CASES / 2 && refused > CASES / 10, `${answered} answered, ${refused} refused`);

    // the page still gets a well-formed call answered, and its subscriptions end with it
    const list = await new Promise<unknown>((resolve) =>
      dispatcher.receive(page, { id: 99, concern: 'models', method: 'list', input: {} }, resolve),
    );
    assert.deepEqual(list, { id: 99, result: { entries: [] } });
    dispatcher.dropSender(page.id);
    assert.equal(dispatcher.subscriptionCount(), 0);
    global.gc?.();
    const grown = process.memoryUsage().heapUsed - heapBefore;
    assert.ok(grown < 64 * 1024 * 1024, `heap grew by ${(grown / 1048576).toFixed(1)} MiB`);
  });
});

describe('engine host fuzzing over its process channel', () => {
  let host: EngineHostProcess;
  const answers = new Map<number, (answer: unknown) => void>();
  let exited: { code: number | null; signal: string | null } | null = null;
  let stderr = '';

  before(() => {
    host = forkLauncher({
      hostFile: join(ROOT, 'app', 'engine-host', 'host.ts'),
      env: { ...process.env, POWER_ADDON_FLAVOUR: 'cpu', POWER_TEST_HOOKS: '0' },
    });
    host.onMessage((answer) => {
      const id = answeredId(answer);
      if (typeof id === 'number') answers.get(id)?.(answer);
    });
    host.onExit((code, signal) => (exited = { code, signal }));
    host.stderr?.setEncoding('utf8');
    host.stderr?.on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  });
  after(() => host?.kill());

  test(`${CASES} seeded messages (seed ${SEED}): each answered under its id, the host stays up and answers hello afterwards`, async () => {
    // loading a model or opening a session would read files at random paths, quantizing would
    // write them: those methods get envelopes only as unknown-shaped inputs through the other
    // arms, never a real path
    const messages = corpus(engineApi, (_c, m) => m === 'loadModel' || m === 'quantize', SEED + 1);
    for (const [i, { message, id }] of messages.entries()) {
      if (id === null) {
        // child_process cannot send `undefined`: that is the parent's API, not the host's input
        if (message !== undefined) host.send(message);
        continue;
      }
      const got = new Promise<unknown>((resolve) => answers.set(id, resolve));
      host.send(message);
      const outcome = await Promise.race([got, timeout(10_000)]);
      answers.delete(id);
      assert.notEqual(
        outcome,
        'timeout',
        `case ${i}: no answer to ${JSON.stringify(message)?.slice(0, 200)} (host ${exited ? `exited ${JSON.stringify(exited)}` : 'alive'}; ${stderr.slice(-500)})`,
      );
      assert.equal(exited, null, `case ${i}: the host exited (${stderr.slice(-500)})`);
    }
    const hello = await Promise.race([
      new Promise<unknown>((resolve) => {
        answers.set(9999, resolve);
        host.send({ id: 9999, concern: 'engine', method: 'hello', input: {} });
      }),
      timeout(10_000),
    ]);
    assert.equal(
      (hello as { result?: { flavour?: string } }).result?.flavour,
      'cpu',
      `hello after the corpus: ${JSON.stringify(hello)?.slice(0, 300)}`,
    );
    assert.equal(exited, null);
  });
});
