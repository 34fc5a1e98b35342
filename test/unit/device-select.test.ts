// Which flavour and device a --device request gets (the rules; the engine run is in test/model).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { DeviceInfo } from '../../app/contract/engine-types.js';
import { defaultFlashAttn, describeDevice, flavourPlan, pickCudaDevice, pickVulkanDevice } from '../../app/engine/device-select.js';

const cpu = { flavour: 'cpu', gpu: null };
const cuda = { flavour: 'cuda', gpu: 'cuda' as const };
const cudaSrc = { flavour: 'cuda-src', gpu: 'cuda' as const };
const cpuPrebuilt = { flavour: 'cpu-prebuilt', gpu: null };
const vulkan = { flavour: 'vulkan', gpu: 'vulkan' as const };

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
    assert.deepEqual(flavourPlan([cpu, cuda]), { cuda: 'cuda', vulkan: null, cpu: 'cpu' });
    assert.deepEqual(flavourPlan([cpu, cpuPrebuilt, cuda, cudaSrc, vulkan]), { cuda: 'cuda-src', vulkan: 'vulkan', cpu: 'cpu' });
    assert.deepEqual(flavourPlan([cpuPrebuilt]), { cuda: null, vulkan: null, cpu: 'cpu-prebuilt' });
    // only a CUDA flavour: its CPU backend serves --device cpu
    assert.deepEqual(flavourPlan([cuda]), { cuda: 'cuda', vulkan: null, cpu: 'cuda' });
    assert.deepEqual(flavourPlan([]), { cuda: null, vulkan: null, cpu: null });
  });

  test('the CUDA device with the most free memory; none without a CUDA backend device', () => {
    const devices = [dev('CPU', 'CPU', 9e12), dev('CUDA0', 'CUDA', 10), dev('CUDA1', 'CUDA', 20)];
    assert.equal(pickCudaDevice(devices)!.name, 'CUDA1');
    assert.equal(pickCudaDevice([dev('CPU', 'CPU', 1), dev('Vulkan0', 'Vulkan', 99)]), null);
  });

  test('Vulkan: the real GPU with the most free memory; a CPU-type device (lavapipe) only when asked for and alone', () => {
    const lavapipe = { ...dev('Vulkan0', 'Vulkan', 9e12), onCpu: true };
    const radeon = dev('Vulkan1', 'Vulkan', 10);
    const arc = dev('Vulkan2', 'Vulkan', 20);
    assert.equal(pickVulkanDevice([dev('CPU', 'CPU', 9e12), lavapipe, radeon, arc], true)!.name, 'Vulkan2');
    assert.equal(pickVulkanDevice([lavapipe, radeon], false)!.name, 'Vulkan1');
    assert.equal(pickVulkanDevice([dev('CPU', 'CPU', 1), lavapipe], false), null);
    assert.equal(pickVulkanDevice([dev('CPU', 'CPU', 1), lavapipe], true)!.name, 'Vulkan0');
    assert.equal(pickVulkanDevice([dev('CUDA0', 'CUDA', 1)], true), null);
    assert.match(describeDevice(lavapipe), /^Vulkan0 \(Vulkan0 card, runs on the CPU, /);
  });

  test('Flash Attention by default: on for CUDA, off on Vulkan, off on the CPU unless the model has long heads and sliding windows', () => {
    assert.deepEqual([defaultFlashAttn('cuda'), defaultFlashAttn('cpu'), defaultFlashAttn('vulkan')], ['on', 'off', 'off']);
    const gemma3 = { headSize: 256, slidingWindow: true };
    assert.equal(defaultFlashAttn('cpu', gemma3), 'on');
    assert.equal(defaultFlashAttn('cpu', { headSize: 128, slidingWindow: true }), 'on');
    // measured slower with it on: heads of 64, and full attention over long contexts
    assert.equal(defaultFlashAttn('cpu', { headSize: 64, slidingWindow: true }), 'off');
    assert.equal(defaultFlashAttn('cpu', { headSize: 128, slidingWindow: false }), 'off');
    assert.equal(defaultFlashAttn('cpu', { headSize: 256, slidingWindow: false }), 'off');
    assert.equal(defaultFlashAttn('vulkan', gemma3), 'off');
    assert.equal(defaultFlashAttn('cuda', { headSize: 64, slidingWindow: false }), 'on');
  });

  test('device descriptions', () => {
    assert.equal(describeDevice(dev('CPU', 'CPU', 1)), 'cpu (CPU card)');
    assert.equal(describeDevice({ ...dev('CUDA0', 'CUDA', 2 ** 39), totalBytes: 2 ** 40 }), 'CUDA0 (CUDA0 card, 512.0 of 1024.0 GiB free)');
  });
});
