// Splitting a model over several devices, without a model or a device: llama.cpp's split points
// (which block goes where), each device's share of the memory, the refusal that names the
// device, the device list a request gives llama.cpp, and the --rpc endpoints.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { DeviceInfo } from '../../app/contract/engine-types.js';
import {
  checkSplitFit,
  estimateSplit,
  expertOnHost,
  GIB,
  hasExpertTensors,
  layerDevices,
  type SplitDevice,
} from '../../app/engine/memory-estimate.js';
import { parseEndpoint, parseEndpointList, RpcEndpointError } from '../../app/engine/rpc.js';
import { parseTensorSplit, planDevices, SplitError, type RemoteDevice } from '../../app/engine/split.js';
import { makeQwen3MoeSpec, MOE_MODELS } from '../../tools/models/synthetic-moe.js';
import { makeLlamaModelSpec, SYNTHETIC_MODELS } from '../../tools/models/synthetic.js';
import { infoOfSpec, TARGET_INFO, targetPlan } from '../fixtures/gguf-info.js';

const target = TARGET_INFO;
const plan = targetPlan;
const dev = (name: string, freeBytes = 8 * GIB, over: Partial<SplitDevice> = {}): SplitDevice => ({
  name,
  description: `${name} desc`,
  freeBytes,
  remote: false,
  cuda: true,
  ...over,
});

describe('split points (llama.cpp load_tensors)', () => {
  test('every layer offloaded, split 1:1 over two devices: blocks 0-1 on the first, 2-3 and the head on the second', () => {
    // 4 blocks + the output head = 5 layers; points 0.5, 1: x = 0, .2, .4 -> 0; .6, .8 -> 1
    assert.deepEqual(layerDevices(4, -1, [dev('A'), dev('B')], { tensorSplit: [1, 1] }), [0, 0, 0, 1, 1]);
  });

  test('N layers: the first blocks stay on the host (-1), the rest split; without a tensor split, by free memory', () => {
    assert.deepEqual(layerDevices(4, 4, [dev('A'), dev('B')], { tensorSplit: [1, 1] }), [-1, 0, 0, 1, 1]);
    assert.deepEqual(layerDevices(4, -1, [dev('A', 1 * GIB), dev('B', 3 * GIB)], {}), [0, 0, 1, 1, 1]);
    assert.deepEqual(layerDevices(4, -1, [dev('A'), dev('B')], { tensorSplit: [0, 1] }), [1, 1, 1, 1, 1]);
    assert.deepEqual(layerDevices(4, 0, [dev('A')], {}), [-1, -1, -1, -1, -1]);
    assert.deepEqual(layerDevices(4, -1, [], {}), [-1, -1, -1, -1, -1]);
  });
});

describe("each device's share", () => {
  test('weights, KV and the head go with their blocks; the token embedding stays on the host', () => {
    const shares = estimateSplit(plan({ gpuLayers: 4 }), [dev('A'), dev('B')], { tensorSplit: [1, 1] });
    assert.deepEqual(
      shares.map((s) => [s.device?.name ?? 'host', s.blocks, s.output]),
      [
        ['host', [0], false],
        ['A', [1, 2], false],
        ['B', [3], true],
      ],
    );
    const perBlockKv = 2048 * 2 * 64 * 2;
    assert.deepEqual(
      shares.map((s) => s.kv),
      [perBlockKv, 2 * perBlockKv, perBlockKv],
    );
    const bytes = (pred: (n: string) => boolean) => target.tensors.filter((t) => pred(t.name)).reduce((a, t) => a + t.byteSize, 0);
    assert.equal(
      shares[1]!.weights,
      bytes((n) => n.startsWith('blk.1.') || n.startsWith('blk.2.')),
    );
    assert.equal(
      shares[2]!.weights,
      bytes((n) => n.startsWith('blk.3.') || n.startsWith('output')),
    );
    assert.equal(
      shares[0]!.weights,
      bytes((n) => n.startsWith('blk.0.') || n === 'token_embd.weight'),
    );
    // the host's weights are memory-mapped: not in its total
    assert.equal(shares[0]!.total, shares[0]!.kv + shares[0]!.compute);
  });

  test('split mode none uses the main device only; the draft goes where it is told', () => {
    const draft = infoOfSpec(makeLlamaModelSpec(SYNTHETIC_MODELS['draft-far.gguf'].params));
    const shares = estimateSplit(plan({ draft }), [dev('A'), dev('B')], { splitMode: 'none', mainGpu: 1, draftDevice: 0 });
    assert.deepEqual(
      shares.map((s) => s.device?.name ?? 'host'),
      ['host', 'B'],
    );
    assert.ok(shares[1]!.draft > 0);
    assert.equal(shares[1]!.blocks.length, 4);
  });

  test('a row split spreads each offloaded matrix over the CUDA devices by the proportions', () => {
    const rows = estimateSplit(plan(), [dev('A'), dev('B')], { splitMode: 'row', tensorSplit: [3, 1] });
    const layer = estimateSplit(plan(), [dev('A')], {});
    const matrices = layer[1]!.weights;
    assert.ok(Math.abs(rows[1]!.weights + rows[2]!.weights - matrices) < 1);
    assert.ok(rows[1]!.weights > 2.5 * rows[2]!.weights);
  });

  test('--cpu-moe / --n-cpu-moe: the expert tensors of those blocks stay on the host', () => {
    assert.equal(expertOnHost(3, 'ffn_up_exps.weight', { cpuMoe: true }), true);
    assert.equal(expertOnHost(3, 'ffn_gate_up_exps.weight', { cpuMoe: true }), true);
    assert.equal(expertOnHost(3, 'ffn_up.weight', { cpuMoe: true }), false);
    assert.equal(expertOnHost(1, 'ffn_down_exps.weight', { nCpuMoe: 2 }), true);
    assert.equal(expertOnHost(2, 'ffn_down_exps.weight', { nCpuMoe: 2 }), false);
    assert.equal(expertOnHost(0, 'ffn_down_exps.weight', {}), false);
  });

  test('a Mixture-of-Experts model is told by its expert tensors; a dense one has none', () => {
    assert.equal(hasExpertTensors(infoOfSpec(makeQwen3MoeSpec(MOE_MODELS['moe-target.gguf'].params))), true);
    assert.equal(hasExpertTensors(infoOfSpec(makeLlamaModelSpec(SYNTHETIC_MODELS['target.gguf'].params))), false);
  });

  test('a share that does not fit is refused naming the device, its blocks and the numbers; the others are not named', () => {
    const shares = estimateSplit(
      plan({ contextSize: 1 << 20 }),
      [
        dev('RPC0', 64 * GIB, { remote: true, cuda: false, description: '10.0.0.2:50052' }),
        dev('RPC1', GIB / 4, { remote: true, cuda: false, description: '10.0.0.3:50052' }),
      ],
      { tensorSplit: [1, 1] },
    );
    const refusal = checkSplitFit(shares, plan({ contextSize: 1 << 20 }), 64 * GIB);
    assert.match(
      refusal ?? '',
      /^not enough memory on RPC1 \(10\.0\.0\.3:50052\): its share \(block 3 and the output head\) needs about [\d.]+ (GiB|MiB) \(weights .*KV 256\.0 MiB at 1048576 ctx.*\) but 256\.0 MiB is free; lower --ctx/,
    );
    assert.doesNotMatch(refusal!, /RPC0|the CPU/);
    assert.equal(checkSplitFit(estimateSplit(plan(), [dev('RPC0')], {}), plan(), 64 * GIB), null);
    const host = checkSplitFit(
      estimateSplit(plan({ contextSize: 1 << 20, gpuLayers: 0 }), [dev('RPC0')], {}),
      plan({ contextSize: 1 << 20 }),
      GIB / 8,
    );
    assert.match(host ?? '', /^not enough memory on the CPU \(this machine\): its share \(blocks 0–3 and the output head\)/);
  });
});

describe('the devices a load gives llama.cpp', () => {
  const info = (name: string, backend: string, over: Partial<DeviceInfo> = {}): DeviceInfo => ({
    name,
    description: name,
    type: backend === 'CPU' ? 'cpu' : 'gpu',
    backend,
    freeBytes: GIB,
    totalBytes: GIB,
    ...over,
  });
  const cpu = info('CPU', 'CPU');
  const gpus = [info('CUDA0', 'CUDA'), info('CUDA1', 'CUDA')];
  const remote: RemoteDevice[] = [{ ...info('RPC0', 'RPC'), endpoint: '10.0.0.2:50052' }];

  test('without split flags: the chosen GPU only, or nothing (the CPU); remote devices first', () => {
    assert.deepEqual(
      planDevices('cuda', gpus[1]!, [cpu, ...gpus], []).devices.map((d) => d.name),
      ['CUDA1'],
    );
    assert.deepEqual(planDevices('cpu', cpu, [cpu], []).devices, []);
    const withRemote = planDevices('cuda', gpus[0]!, [cpu, ...gpus], remote);
    assert.deepEqual(
      withRemote.devices.map((d) => d.name),
      ['RPC0', 'CUDA0'],
    );
    // the draft stays on the local GPU, never on the network
    assert.deepEqual(withRemote.draftDevices, ['CUDA0']);
    assert.deepEqual(planDevices('cpu', cpu, [cpu], remote).draftDevices, []);
  });

  test('--split-mode layer|row or --tensor-split: every local GPU; none with --main-gpu: llama.cpp picks it', () => {
    assert.deepEqual(
      planDevices('cuda', gpus[0]!, [cpu, ...gpus], [], { splitMode: 'layer' }).devices.map((d) => d.name),
      ['CUDA0', 'CUDA1'],
    );
    assert.deepEqual(planDevices('cuda', gpus[0]!, [cpu, ...gpus], [], { tensorSplit: [3, 1] }).params, { tensorSplit: [3, 1] });
    const none = planDevices('cuda', gpus[0]!, [cpu, ...gpus], [], { splitMode: 'none', mainGpu: 1 });
    assert.deepEqual(
      none.devices.map((d) => d.name),
      ['CUDA0', 'CUDA1'],
    );
    assert.deepEqual(none.params, { splitMode: 'none', mainGpu: 1 });
    assert.deepEqual(none.draftDevices, ['CUDA1']);
  });

  test('Vulkan: a split takes the real Vulkan GPUs, never a CPU-type one (lavapipe) unless it is the device chosen', () => {
    const lavapipe = info('Vulkan0', 'Vulkan', { onCpu: true });
    const vk = [info('Vulkan1', 'Vulkan'), info('Vulkan2', 'Vulkan')];
    const local = [cpu, lavapipe, ...vk, ...gpus];
    assert.deepEqual(
      planDevices('vulkan', vk[0]!, local, [], { splitMode: 'layer' }).devices.map((d) => d.name),
      ['Vulkan1', 'Vulkan2'],
    );
    assert.deepEqual(
      planDevices('vulkan', lavapipe, [cpu, lavapipe], []).devices.map((d) => d.name),
      ['Vulkan0'],
    );
    assert.deepEqual(planDevices('vulkan', vk[1]!, local, []).draftDevices, ['Vulkan2']);
  });

  test('a split the devices cannot honour is refused with what the split has', () => {
    const refuse = (f: () => unknown, message: RegExp) =>
      assert.throws(f, (e: unknown) => e instanceof SplitError && message.test(e.message));
    refuse(() => planDevices('cpu', cpu, [cpu], [], { tensorSplit: [1] }), /needs devices to split over/);
    refuse(() => planDevices('cpu', cpu, [cpu], remote, { tensorSplit: [1, 1] }), /2 entries but the split has 1 device \(RPC0\)/);
    refuse(() => planDevices('cpu', cpu, [cpu], remote, { mainGpu: 1 }), /--main-gpu 1: the split has 1 device \(RPC0\)/);
    refuse(() => planDevices('cpu', cpu, [cpu], remote, { splitMode: 'row' }), /row splits matrices over CUDA devices/);
    refuse(() => planDevices('cpu', cpu, [cpu], remote, { tensorSplit: [0] }), /at least one proportion above 0/);
  });

  test('--tensor-split reads llama.cpp\'s "3,1" and "1/1/2"', () => {
    assert.deepEqual(parseTensorSplit('3,1'), [3, 1]);
    assert.deepEqual(parseTensorSplit('1/1/2'), [1, 1, 2]);
    assert.throws(() => parseTensorSplit('1,-1'), SplitError);
    assert.throws(() => parseTensorSplit('a'), SplitError);
  });
});

describe('--rpc endpoints', () => {
  test('host:port with an IPv4 address or a host name; distinct; at most 16', () => {
    assert.deepEqual(parseEndpoint(' 10.0.0.2:50052 '), { host: '10.0.0.2', port: 50052, endpoint: '10.0.0.2:50052' });
    assert.equal(parseEndpoint('gpu-box.lan:1').endpoint, 'gpu-box.lan:1');
    assert.deepEqual(parseEndpointList('a:1,b:2,a:1'), ['a:1', 'b:2']);
    for (const bad of ['10.0.0.2', '[::1]:50052', '::1:5', 'a:0', 'a:65536', 'a b:1', ':1']) {
      assert.throws(() => parseEndpoint(bad), RpcEndpointError, bad);
    }
    assert.throws(() => parseEndpointList(Array.from({ length: 17 }, (_, i) => `h${i}:1`).join(',')), /at most 16/);
  });
});
