// Which flavour and device a --device request gets (the rules; the engine run is in test/model).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { DeviceInfo } from '../../contract/engine-types.js';
import { describeDevice, flavourPlan, pickCudaDevice } from '../../node/engine/device-select.js';

const cpu = { flavour: 'cpu', gpu: null };
const cuda = { flavour: 'cuda', gpu: 'cuda' as const };
const cudaSrc = { flavour: 'cuda-src', gpu: 'cuda' as const };
const cpuPrebuilt = { flavour: 'cpu-prebuilt', gpu: null };

const dev = (name: string, backend: string, free: number): DeviceInfo => ({
  name,
  description: `${name} card`,
  type: backend === 'CPU' ? 'cpu' : 'gpu',
  backend,
  freeBytes: free,
  totalBytes: 2 ** 40,
});

describe('device selection', () => {
  test('flavours: a CPU-only build serves the CPU, a from-source CUDA build wins over the prebuilt', () => {
    assert.deepEqual(flavourPlan([cpu, cuda]), { cuda: 'cuda', cpu: 'cpu' });
    assert.deepEqual(flavourPlan([cpu, cpuPrebuilt, cuda, cudaSrc]), { cuda: 'cuda-src', cpu: 'cpu' });
    assert.deepEqual(flavourPlan([cpuPrebuilt]), { cuda: null, cpu: 'cpu-prebuilt' });
    // only a CUDA flavour: its CPU backend serves --device cpu
    assert.deepEqual(flavourPlan([cuda]), { cuda: 'cuda', cpu: 'cuda' });
    assert.deepEqual(flavourPlan([]), { cuda: null, cpu: null });
  });

  test('the CUDA device with the most free memory; none without a CUDA backend device', () => {
    const devices = [dev('CPU', 'CPU', 9e12), dev('CUDA0', 'CUDA', 10), dev('CUDA1', 'CUDA', 20)];
    assert.equal(pickCudaDevice(devices)!.name, 'CUDA1');
    assert.equal(pickCudaDevice([dev('CPU', 'CPU', 1), dev('Vulkan0', 'Vulkan', 99)]), null);
  });

  test('device descriptions', () => {
    assert.equal(describeDevice(dev('CPU', 'CPU', 1)), 'cpu (CPU card)');
    assert.equal(describeDevice({ ...dev('CUDA0', 'CUDA', 2 ** 39), totalBytes: 2 ** 40 }), 'CUDA0 (CUDA0 card, 512.0 of 1024.0 GiB free)');
  });
});
