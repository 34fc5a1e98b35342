// A model split over three devices — this machine's CPU and two `power rpc` servers on loopback
// ports (llama.cpp's RPC backend, CPU devices) — emits exactly the tokens of the one-device run:
// greedy and seeded, autoregressive and speculative (draft-model, ngram; mtp on the hybrid). A
// server killed mid-reply ends the reply with an error that names it, the streamed tokens kept,
// nothing hangs, and the next load works without it. A split that does not fit is refused
// naming the device. `power devices --rpc` lists the remote devices with their memory.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { GenerationResult } from '../../app/contract/generation-result.js';
import type { SplitRequest } from '../../app/engine/split.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { generateArgs, jsonOf, power, powerChild } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';
import { startRpcServer, type RpcServer } from '../fixtures/rpc-servers.js';
import { startService } from '../fixtures/service.js';
import { runControlAndStrategy, type TargetRuns } from '../fixtures/target-runs.js';

const SEEDED: SamplingOptions = { ...SAMPLING_DEFAULTS, temperature: 0.9, seed: 1234 };
const PROMPTS = [
  [1, 300, 301, 302, 303],
  [1, 263, 400, 500, 600, 700, 263, 400],
];
const MAX_TOKENS = 48;

interface Case {
  model: 'target.gguf' | 'hybrid-mtp.gguf';
  strategy: Strategy;
  draft?: 'draft-close.gguf';
}

const CASES: Case[] = [
  { model: 'target.gguf', strategy: 'draft-model', draft: 'draft-close.gguf' },
  { model: 'target.gguf', strategy: 'ngram' },
  { model: 'hybrid-mtp.gguf', strategy: 'mtp' },
];

/** Every request of one case on one placement: the control and the strategy, greedy and seeded, each prompt. */
function runCase(models: ModelSet, c: Case, split: SplitRequest | undefined, gpuLayers: number): Promise<TargetRuns> {
  return runControlAndStrategy(
    {
      path: models[c.model],
      device: 'cpu',
      gpuLayers,
      strategy: c.strategy,
      ...(c.draft ? { draftPath: models[c.draft] } : {}),
      s: 3,
      contextSize: 512,
      ...(split ? { split } : {}),
    },
    { k: 3, seeded: SEEDED, prompts: PROMPTS, maxTokens: MAX_TOKENS },
  );
}

describe('a model split over this CPU and two power rpc servers', () => {
  let models: ModelSet;
  let a: RpcServer;
  let b: RpcServer;

  before(async () => {
    models = await syntheticModels();
    [a, b] = await Promise.all([startRpcServer(), startRpcServer()]);
  });
  after(async () => {
    await Promise.all([a, b].map((s) => s?.stop()));
  });

  /** `power generate` of `maxTokens` on the target, one thread of this CPU, from the prompt tokens 1,300,301,302; `more` adds flags. */
  const generateTarget = (maxTokens: number, ...more: string[]) =>
    generateArgs(models['target.gguf'], [1, 300, 301, 302], '--threads', '1', '--max-tokens', String(maxTokens), ...more);

  test("power devices --rpc lists each server's devices with their memory, named in --rpc order", () => {
    const run = power(['devices', '--json', '--rpc', `${a.endpoint},${b.endpoint}`]);
    assert.equal(run.code, 0, run.stderr);
    const report = jsonOf<{
      remote: {
        endpoint: string;
        devices: { name: string; backend: string; freeBytes: number; totalBytes: number }[];
        error: string | null;
      }[];
    }>(run);
    assert.deepEqual(
      report.remote.map((r) => [r.endpoint, r.error, r.devices.map((d) => d.name)]),
      [
        [a.endpoint, null, ['RPC0']],
        [b.endpoint, null, ['RPC1']],
      ],
    );
    for (const d of report.remote.flatMap((r) => r.devices)) {
      assert.equal(d.backend, 'RPC');
      assert.ok(d.totalBytes > 0 && d.freeBytes > 0 && d.freeBytes <= d.totalBytes, JSON.stringify(d));
    }
    const text = power(['devices', '--rpc', `${a.endpoint},${b.endpoint},127.0.0.1:1`]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`RPC0 +${a.endpoint.replace(/\./g, '\\.')} +\\d+\\.\\d of \\d+\\.\\d GiB free`));
    assert.match(text.stdout, /127\.0\.0\.1:1: cannot reach the RPC server at 127\.0\.0\.1:1: nothing listens there/);
  });

  for (const c of CASES) {
    test(`${c.model}, ${c.strategy}: the three-way split emits exactly the one-device tokens (control and speculative, greedy and seeded)`, async () => {
      const one = await runCase(models, c, undefined, -1);
      // --gpu-layers 4 with --tensor-split 1,1: the first block stays on this CPU, the rest is
      // shared by the two servers (llama.cpp's split points)
      const three = await runCase(models, c, { rpc: [a.endpoint, b.endpoint], tensorSplit: [1, 1] }, 4);
      const shares = three.target.memory?.shares?.map((s) => [s.device?.name ?? 'host', s.blocks.length, s.output] as const);
      assert.ok(shares, 'the split has a per-device estimate');
      assert.deepEqual(
        shares.map(([name]) => name),
        ['host', 'RPC0', 'RPC1'],
      );
      assert.ok(
        shares.every(([, blocks]) => blocks > 0),
        `every device holds blocks of the model: ${JSON.stringify(shares)}`,
      );
      for (const [key, { tokens }] of one.runs) {
        assert.equal(tokens.length, MAX_TOKENS, key);
        assert.deepEqual(three.runs.get(key)?.tokens, tokens, `${c.model} ${key}`);
      }
    });
  }

  test("power generate --rpc: the split's JSON equals the one-device run and says where it ran", () => {
    const common = generateTarget(40, '--json', '--draft', models['draft-close.gguf'], '--strategy', 'draft-model', '--k', '4');
    const one = GenerationResult.passthrough().parse(jsonOf(power(common)));
    const run = power([...common, '--rpc', `${a.endpoint},${b.endpoint}`, '--tensor-split', '1,1', '--gpu-layers', '4', '--verbose']);
    assert.equal(run.code, 0, run.stderr);
    // llama.cpp's own placement (its log) is the one the memory check estimated: block 0 here,
    // blocks 1-2 on RPC0, block 3 and the output head (layer 4) on RPC1
    const placed = [...run.stderr.matchAll(/load_tensors: layer +(\d+) assigned to device (\S+),/g)].map((m) => `${m[1]}:${m[2]}`);
    assert.deepEqual(placed.slice(0, 5), ['0:CPU', '1:RPC0', '2:RPC0', '3:RPC1', '4:RPC1']);
    // the draft loads after the target, whole, on this CPU: its small steps never wait on the network
    assert.deepEqual(placed.slice(5), ['0:CPU', '1:CPU', '2:CPU', '3:CPU', '4:CPU']);
    const split = GenerationResult.passthrough().parse(jsonOf(run));
    assert.deepEqual(split.tokens, one.tokens);
    assert.equal(split.digest, one.digest);
    assert.match(split.backend.device, new RegExp(`RPC0 \\(${a.endpoint}\\), RPC1 \\(${b.endpoint}\\)`));
    assert.equal(split.backend.gpuLayers, 4);
    // what a remote machine runs is not known here: not vouched for
    assert.equal(split.backend.batchInvariant, false);
  });

  test('a split whose share does not fit is refused before loading, naming the device and its share', () => {
    // the whole model on RPC1 with a 16M-token context (Flash Attention off: a batch's scores over it)
    const run = power(
      generateArgs(models['target.gguf'], 'hi', '--ctx', '16777216', '--rpc', `${a.endpoint},${b.endpoint}`, '--tensor-split', '0,1'),
    );
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `^error: not enough memory on RPC1 \\(${b.endpoint}\\): its share \\(blocks 0–3 and the output head\\) needs about [\\d.]+ GiB`,
      ),
    );
    assert.doesNotMatch(run.stderr, /RPC0/);
  });

  test('bad split flags are refused with what the split has', () => {
    const base = generateArgs(models['target.gguf'], 'hi');
    const tooMany = power([...base, '--rpc', a.endpoint, '--tensor-split', '1,1,1']);
    assert.equal(tooMany.code, 2);
    assert.match(tooMany.stderr, /^error: --tensor-split has 3 entries but the split has 1 device \(RPC0\)/);
    const noDevices = power([...base, '--tensor-split', '1,1']);
    assert.equal(noDevices.code, 2);
    assert.match(noDevices.stderr, /^error: --tensor-split needs devices to split over/);
    const badEndpoint = power([...base, '--rpc', 'localhost']);
    assert.equal(badEndpoint.code, 2);
    assert.match(badEndpoint.stderr, /^error: --rpc: 'localhost' is not host:port/);
    const nobody = power([...base, '--rpc', '127.0.0.1:1']);
    assert.equal(nobody.code, 2);
    assert.match(nobody.stderr, /^error: --rpc: cannot reach the RPC server at 127\.0\.0\.1:1: nothing listens there/);
  });

  test('the service loads with LoadOptions.rpc: its engine state names the remote devices; a bad endpoint is bad input', async () => {
    const f = await startService();
    try {
      const target = f.models['target.gguf']!;
      const state = await f.service.engine.load({
        modelId: target.id,
        device: 'cpu',
        threads: 1,
        contextSize: 512,
        rpc: [a.endpoint],
        gpuLayers: 3,
      });
      assert.equal(state.status, 'ready');
      assert.match(state.backend?.device ?? '', new RegExp(`^cpu \\(.+\\) \\+ RPC0 \\(${a.endpoint}\\)$`));
      assert.equal(state.backend?.gpuLayers, 3);
      await f.service.engine.unload({});
      await assert.rejects(
        f.service.engine.load({ modelId: target.id, device: 'cpu', rpc: ['no-port'] }),
        (e: { code: string; message: string }) => e.code === 'bad-input' && /^rpc: 'no-port' is not host:port/.test(e.message),
      );
    } finally {
      await f.dispose();
    }
  });

  // last: it kills server b
  test('a server killed mid-reply ends the reply with an error naming it, the streamed text kept; the next load works without it', async () => {
    const child = powerChild(
      generateTarget(1900, '--raw', '--ctx', '2048', '--rpc', `${a.endpoint},${b.endpoint}`, '--tensor-split', '1,1'),
    );
    let stdout = '';
    let stderr = '';
    let killed: Promise<void> | null = null;
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      // the reply is streaming: take server b away
      killed ??= b.kill();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    await killed;
    assert.equal(code, 1, stderr);
    assert.ok(stdout.trim().length > 0, 'the text streamed before the failure stays on stdout');
    assert.match(
      stderr,
      new RegExp(
        `^error: a remote machine went away during the request: RPC1 at ${b.endpoint} \\(nothing listens there\\) no longer answers; .*Load again without it \\(--rpc ${a.endpoint}\\)`,
        'm',
      ),
    );

    // the next load, without the dead server, works: the same tokens as on one device
    const common = generateTarget(32, '--json');
    const one = GenerationResult.passthrough().parse(jsonOf(power(common)));
    const again = power([...common, '--rpc', a.endpoint, '--gpu-layers', '3']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(GenerationResult.passthrough().parse(jsonOf(again)).tokens, one.tokens);
    // and the dead one is refused up front, without a crash
    const gone = power([...common, '--rpc', `${a.endpoint},${b.endpoint}`]);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, new RegExp(`^error: --rpc: cannot reach the RPC server at ${b.endpoint}: nothing listens there`));
  });
});

/** Waits until `check` holds (the other pipe of a child may be read a turn later); fails after a minute. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() - started > 60_000) assert.fail(`never happened: ${what}`);
  }
}

describe('power rpc', () => {
  test('listening beyond loopback warns on stderr that anyone who reaches the port can use it; loopback does not', async () => {
    const open = await startRpcServer(['--host', '0.0.0.0', '--device', 'cpu', '--threads', '1']);
    const loopback = await startRpcServer(['--device', 'cpu', '--threads', '1']);
    try {
      assert.match(open.endpoint, /^0\.0\.0\.0:\d+$/);
      await eventually(() => open.output().stderr.includes('\n'), 'the warning on stderr');
      assert.match(
        open.output().stderr,
        /warning: llama\.cpp's RPC protocol has no authentication and no encryption: anyone who can reach 0\.0\.0\.0:\d+ can use/,
      );
      assert.match(open.output().stderr, /ssh -L/);
      assert.match(loopback.endpoint, /^127\.0\.0\.1:\d+$/);
      assert.doesNotMatch(loopback.output().stderr, /warning/);
    } finally {
      assert.equal(await open.stop(), 0);
      assert.equal(await loopback.stop(), 0);
    }
  });

  test('a port in use and a host that is not an IPv4 address are refused with one error line', async () => {
    const first = await startRpcServer();
    try {
      const port = first.endpoint.split(':')[1]!;
      const busy = power(['rpc', '--port', port, '--device', 'cpu']);
      assert.equal(busy.code, 2, busy.stderr);
      assert.match(busy.stderr, new RegExp(`^error: port ${port} on 127\\.0\\.0\\.1 is in use`));
      const named = power(['rpc', '--host', 'localhost']);
      assert.equal(named.code, 2);
      assert.match(named.stderr, /^error: --host must be an IPv4 address/);
    } finally {
      await first.stop();
    }
  });
});
