// Churn: rapid send / stop / regenerate cycles over /ws against one server on the small synthetic
// target (chats made and deleted, connections opened and closed along the way). Afterwards the
// transports hold no event subscriptions, the process keeps the timers and handles it had after
// warm-up, the engine host has the threads, files and model mappings it had (no leaked session,
// context or job: each owns threads, each model maps its file), and the server's and the engine
// host's memory are within 10 % of their size after warm-up. The server is power serve's own
// assembly in this process (test/fixtures/serve-in-process.ts), so that its subscriptions and
// handles can be counted. POWER_CHURN_CYCLES (default 100; the campaign is 1,000) and
// POWER_CHURN_SEED run another or a longer one.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';

import fc from 'fast-check';
import { WebSocket } from 'ws';

import { powerApi } from '../../app/contract/api/index.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import { syntheticModels } from '../fixtures/models.js';
import { rssOf } from '../fixtures/serve.js';
import { startServeWithModels, type InProcessServe } from '../fixtures/serve-in-process.js';

const CYCLES = Number(process.env.POWER_CHURN_CYCLES ?? 100);
const SEED = Number(process.env.POWER_CHURN_SEED ?? 20261204);
const WARM_UP = Math.max(20, Math.floor(CYCLES / 10));
const CHAT_EVERY = 10;
const CONNECTION_EVERY = 50;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let serve: InProcessServe;

before(async () => {
  const set = await syntheticModels();
  serve = await startServeWithModels('power-churn-', { 'target.gguf': set['target.gguf'] });
});
after(() => serve?.close());

function connect() {
  return createApiClient(powerApi, new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth }) as never, {
    onProtocolError: (m) => assert.fail(m),
  });
}
type Client = ReturnType<typeof connect>;

interface Snapshot {
  rss: number;
  hostRss: number;
  hostThreads: number;
  hostFds: number;
  /** mappings of .gguf files in the host (each loaded model maps its file) */
  hostModelMaps: number;
  /** the process's handles and requests by type, but the test runner's own */
  resources: Record<string, number>;
}

function snapshot(hostPid: number): Snapshot {
  // the heap collected twice first (weak references, then what their finalizers let go)
  gc();
  gc();
  const status = readFileSync(`/proc/${hostPid}/status`, 'utf8');
  const resources: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) resources[r] = (resources[r] ?? 0) + 1;
  return {
    rss: rssOf(process.pid),
    hostRss: rssOf(hostPid),
    hostThreads: Number(/Threads:\s+(\d+)/.exec(status)![1]),
    hostFds: readdirSync(`/proc/${hostPid}/fd`).length,
    hostModelMaps: new Set(
      readFileSync(`/proc/${hostPid}/maps`, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('.gguf'))
        .map((l) => l.split(/\s+/).at(-1)),
    ).size,
    resources,
  };
}

/** What a leak would grow: the engine host's threads, files and model mappings, and this process's handles. */
const counts = ({ hostThreads, hostFds, hostModelMaps, resources }: Snapshot) => ({ hostThreads, hostFds, hostModelMaps, resources });

/** Handles of work still in flight here: a connection not yet torn down, a file operation (a chat being saved). */
const IN_FLIGHT = /^(TCPSocketWrap|TCPWRAP|FSReq|FileHandle|Shutdown|WriteWrap)/;

/**
 * Snapshots until `settled` holds for one, polled every 50 ms for at most 20 s; the last one
 * either way (a count that never settles fails the assertions on it, which show it).
 */
async function snapshotWhen(hostPid: number, settled: (s: Snapshot) => boolean): Promise<Snapshot> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const s = snapshot(hostPid);
    if (settled(s) || performance.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The baseline: nothing in flight in this process, and the engine host's counts the same twice in a row. */
async function quietSnapshot(hostPid: number): Promise<Snapshot> {
  let previous: Snapshot | null = null;
  const quiet = await snapshotWhen(hostPid, (s) => {
    const same = previous !== null && isDeepStrictEqual(counts(s), counts(previous));
    previous = s;
    return same && !Object.keys(s.resources).some((r) => IN_FLIGHT.test(r));
  });
  assert.ok(!Object.keys(quiet.resources).some((r) => IN_FLIGHT.test(r)), `work still in flight: ${JSON.stringify(quiet.resources)}`);
  return quiet;
}

/** Follows one reply to its end; `stopAfter` tokens (0: at once, null: never) it asks to stop. */
async function cycleReply(
  client: Client,
  chatId: string,
  start: () => Promise<{ assistantMessageId: string }>,
  stopAfter: number | null,
): Promise<string> {
  const { api } = client;
  let id = '';
  let tokens = 0;
  let stopping = false;
  let settle: (how: string) => void = () => {};
  const ended = new Promise<string>((resolve) => (settle = resolve));
  const early: { messageId: string; n: number }[] = [];
  const earlyEnds = new Map<string, string>();
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void api.chats.stop({ chatId });
  };
  const offs = [
    api.generation.onRounds((e) => {
      const n = e.rounds.reduce((sum, r) => sum + r.tokenIds.length, 0);
      if (!id) return void early.push({ messageId: e.messageId, n });
      if (e.messageId !== id) return;
      tokens += n;
      if (stopAfter !== null && tokens >= stopAfter) stop();
    }),
    api.generation.onDone((d) =>
      d.messageId === id ? settle(`done ${d.stopReason}`) : earlyEnds.set(d.messageId, `done ${d.stopReason}`),
    ),
    api.generation.onError((e) =>
      e.messageId === id ? settle(`error ${e.error.code}`) : earlyEnds.set(e.messageId, `error ${e.error.code}`),
    ),
  ];
  try {
    id = (await start()).assistantMessageId;
    tokens = early.filter((e) => e.messageId === id).reduce((sum, e) => sum + e.n, 0);
    if (stopAfter === 0 || (stopAfter !== null && tokens >= stopAfter)) stop();
    const known = earlyEnds.get(id);
    if (known) return known;
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<string>((resolve) => {
      timer = setTimeout(
        () => resolve(`no end in 30 s (message ${id}, ${tokens} tokens, stop ${stopping ? 'asked' : 'not asked'})`),
        30_000,
      );
    });
    try {
      return await Promise.race([ended, stuck]);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    offs.forEach((off) => off());
  }
}

test(`${CYCLES} send / stop / regenerate cycles over /ws (seed ${SEED}): no leaked subscription, handle, timer or native object; memory within 10 % of warm-up`, async () => {
  let client = connect();
  const { entries } = await client.api.models.list({});
  const target = entries.find((e) => e.name === 'target')!;
  await client.api.engine.load({ modelId: target.id, device: 'cpu', threads: 1, contextSize: 2048, draftMethod: { strategy: 'ngram' } });
  const hostPid = serve.service.enginePid()!;
  assert.ok(hostPid);

  const plan = fc.sample(
    fc.record({
      // tokens before each stop: 0 is a stop at once, null lets the reply finish (it is short then)
      sendStop: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 }), fc.constant(null)),
      regenerateStop: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 }), fc.constant(null)),
    }),
    { seed: SEED, numRuns: CYCLES },
  );
  const endings = new Map<string, number>();
  let chatId = '';
  let before: Snapshot | null = null;
  let subscriptionsPerClient: Record<string, number> | null = null;
  const started = performance.now();
  for (const [i, step] of plan.entries()) {
    if (i === WARM_UP) {
      // after warm-up, with no client connected: the baseline
      client.close();
      await client.closed;
      before = await quietSnapshot(hostPid);
      assert.deepEqual(serve.subscriptions(), {}, 'a closed connection leaves no subscription behind');
      client = connect();
    } else if (i > 0 && i % CONNECTION_EVERY === 0) {
      client.close();
      await client.closed;
      client = connect();
    }
    if (i % CHAT_EVERY === 0) {
      if (chatId) await client.api.chats.delete({ chatId });
      chatId = (await client.api.chats.create({ title: `churn ${i}` })).id;
    }
    const id = chatId;
    const send = await cycleReply(
      client,
      id,
      () => client.api.chats.send({ chatId: id, content: `cycle ${i}`, sampling: { maxTokens: step.sendStop === null ? 6 : 48 } }),
      step.sendStop,
    );
    const regen = await cycleReply(
      client,
      id,
      () => client.api.chats.regenerate({ chatId: id, sampling: { maxTokens: step.regenerateStop === null ? 6 : 48 } }),
      step.regenerateStop,
    );
    for (const end of [send, regen]) {
      assert.match(end, /^done (cancelled|max-tokens|eos)$/, `cycle ${i}: ${end}`);
      endings.set(end, (endings.get(end) ?? 0) + 1);
    }
    if (process.env.POWER_CHURN_PROGRESS && i % 50 === 49)
      console.log(`churn: ${i + 1} cycles, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    if (i === 0) subscriptionsPerClient = serve.subscriptions();
    // while a client is connected, what it holds does not grow with the cycles
    else assert.deepEqual(serve.subscriptions(), subscriptionsPerClient, `cycle ${i}: subscriptions of one client`);
  }
  const ms = performance.now() - started;
  assert.equal(await client.api.generation.active({}), null, 'no reply is left running');
  await client.api.chats.delete({ chatId });
  assert.deepEqual((await client.api.chats.list({})).chats, [], 'every churned chat is gone');
  client.close();
  await client.closed;
  // what the last replies left in flight settles back to the warm-up's counts, or the assertions below show what did not
  const baseline = counts(before!);
  const end = await snapshotWhen(hostPid, (s) => isDeepStrictEqual(counts(s), baseline));

  assert.equal(serve.service.enginePid(), hostPid, 'the engine host never crashed');
  assert.deepEqual(serve.subscriptions(), {}, 'no subscription is left once the clients are gone');
  assert.equal(
    end.hostThreads,
    before!.hostThreads,
    'the engine host runs the threads it ran after warm-up (no leaked session, context or job)',
  );
  assert.equal(end.hostModelMaps, before!.hostModelMaps, 'the engine host maps the model files it mapped (no leaked model)');
  assert.equal(end.hostFds, before!.hostFds, 'the engine host holds the files it held');
  assert.deepEqual(end.resources, before!.resources, 'the server keeps the timers and handles it kept after warm-up');
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  const summary = [...endings.entries()].map(([k, n]) => `${k}: ${n}`).join(', ');
  console.log(
    `churn: ${CYCLES} cycles (${2 * CYCLES} replies: ${summary}) in ${(ms / 1000).toFixed(1)} s; after warm-up → after: ` +
      `server rss ${mb(before!.rss)} → ${mb(end.rss)} MB, engine host rss ${mb(before!.hostRss)} → ${mb(end.hostRss)} MB, ` +
      `host threads ${before!.hostThreads} → ${end.hostThreads}, host fds ${before!.hostFds} → ${end.hostFds}, model maps ${before!.hostModelMaps} → ${end.hostModelMaps}, ` +
      `handles ${JSON.stringify(end.resources)}`,
  );
  assert.ok(end.rss <= before!.rss * 1.1, `the server's memory stays within 10 % (${mb(before!.rss)} → ${mb(end.rss)} MB)`);
  assert.ok(
    end.hostRss <= before!.hostRss * 1.1,
    `the engine host's memory stays within 10 % (${mb(before!.hostRss)} → ${mb(end.hostRss)} MB)`,
  );
});
