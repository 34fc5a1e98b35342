// Device selection on the real addon: `power devices` reports what loads and why CUDA does not;
// --device cuda without a usable CUDA device exits 2 with the reason and never runs on the CPU;
// --device auto says what it chose and the JSON backend says what ran. On a machine with a
// GPU the same tests check the other side (CUDA chosen, reported as CUDA).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { GenerationResult } from '../../app/contract/generation-result.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { ROOT } from '../../app/paths.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';

interface DevicesJson {
  flavours: {
    flavour: string;
    gpu: string | null;
    devices: { name: string; description: string; type: string; backend: string; freeBytes: number; totalBytes: number; onCpu?: boolean }[];
    cuda: { devices: number; reason: string | null; libraries: { name: string; role: string; error: string | null }[] } | null;
  }[];
  auto: string;
  cuda: { usable: boolean; use: string | null; reason: string | null };
  vulkan: { usable: boolean; use: string | null; reason: string | null };
}

describe('devices', () => {
  let models: ModelSet;
  let devices: DevicesJson;
  before(async () => {
    models = await syntheticModels();
    const run = power(['devices', '--json']);
    assert.equal(run.code, 0, run.stderr);
    devices = jsonOf<DevicesJson>(run);
  });

  test('power devices --json lists every flavour the selection uses, with a CPU device each', () => {
    assert.ok(devices.flavours.length >= 1);
    for (const f of devices.flavours) {
      const cpu = f.devices.find((d) => d.type === 'cpu');
      assert.ok(cpu, `${f.flavour} has a CPU device`);
      assert.equal(cpu.backend, 'CPU');
      assert.ok(cpu.totalBytes > 0 && cpu.freeBytes > 0);
      if (f.gpu === 'cuda') {
        assert.ok(f.cuda, 'a CUDA flavour reports its CUDA status');
        assert.equal(f.cuda.libraries.length, 4);
        // a reason exactly when no CUDA device registered
        assert.equal(f.cuda.reason === null, f.cuda.devices > 0, JSON.stringify(f.cuda));
      } else {
        assert.equal(f.cuda, null);
      }
    }
    assert.equal(devices.cuda.usable, devices.cuda.reason === null);
  });

  test('the text report names each flavour and what --device auto / cuda do', () => {
    const run = power(['devices']);
    assert.equal(run.code, 0, run.stderr);
    for (const f of devices.flavours) assert.match(run.stdout, new RegExp(`^flavour ${f.flavour} \\(`, 'm'));
    assert.match(run.stdout, /^--device auto -> /m);
    assert.match(run.stdout, /^--device cuda -> /m);
    assert.match(run.stdout, /^--device vulkan -> /m);
  });

  test('--device vulkan runs every layer on the Vulkan device (here lavapipe, marked as running on the CPU), Flash Attention off, sampled on the CPU; without one it fails closed', () => {
    const args = ['generate', '--json', '--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '8', '--device', 'vulkan'];
    const run = power(args);
    if (!devices.vulkan.usable) {
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr, `error: --device vulkan: ${devices.vulkan.reason}\n`);
      return;
    }
    assert.equal(run.code, 0, run.stderr);
    const result = GenerationResult.parse(jsonOf(run));
    assert.equal(result.backend.kind, 'vulkan');
    assert.equal(result.backend.flavour, 'vulkan');
    assert.match(result.backend.device, new RegExp(`^${devices.vulkan.use} \\(`));
    assert.equal(result.backend.gpuLayers, 'all');
    assert.equal(result.backend.flashAttn, 'off');
    assert.equal(result.backend.sampling, 'cpu');
    const vulkan = devices.flavours.find((f) => f.flavour === 'vulkan')!;
    const used = vulkan.devices.find((d) => d.name === devices.vulkan.use)!;
    assert.equal(used.backend, 'Vulkan');
    // a CPU-type device is never what auto picks
    if (used.onCpu) assert.match(devices.auto, new RegExp(`^cpu \\(.*no Vulkan GPU \\(${used.name} runs on the CPU\\)`));
    // the explicit backend path is refused on Vulkan, with the way around it
    const backend = power([...args, '--sampling', 'backend']);
    assert.equal(backend.code, 2, backend.stderr);
    assert.match(backend.stderr, /backend sampling is not available here: .*--sampling cpu/);
  });

  test('--device cuda fails closed with the reason when no CUDA device loads', (t) => {
    if (devices.cuda.usable) return t.skip('this machine has a usable CUDA device');
    for (const run of [
      power(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--max-tokens', '4', '--device', 'cuda', '--json']),
      power(['info', models['target.gguf'], '--device', 'cuda']),
    ]) {
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '', 'nothing ran');
      const lines = run.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, run.stderr);
      assert.equal(lines[0], `error: --device cuda: ${devices.cuda.reason}`);
    }
    // the reason names the cause: no CUDA flavour, no driver, missing runtime, or no device
    assert.match(devices.cuda.reason!, /no CUDA flavour|no NVIDIA driver|CUDA \d+ libraries|cannot be loaded|no CUDA device/);
  });

  test('--device auto says what it chose and the JSON says what ran', () => {
    const args = ['generate', '--json', '--threads', '1', '--model', models['target.gguf'], '--prompt', 'hello', '--max-tokens', '8'];
    const auto = GenerationResult.parse(jsonOf(power(args)));
    const cpu = GenerationResult.parse(jsonOf(power([...args, '--device', 'cpu'])));
    assert.equal(cpu.backend.kind, 'cpu');
    assert.equal(cpu.backend.choice, null);
    assert.equal(cpu.backend.gpuLayers, null);
    assert.equal(cpu.backend.sampling, 'cpu');
    assert.match(cpu.backend.device, /^cpu \(/);
    if (devices.cuda.usable) {
      assert.equal(auto.backend.kind, 'cuda');
      assert.match(auto.backend.choice!, /^auto: chose CUDA\d/);
      assert.equal(auto.backend.gpuLayers, 'all');
      assert.ok(auto.backend.memoryEstimateBytes! > 0);
    } else {
      assert.equal(auto.backend.kind, 'cpu');
      const vulkan = devices.flavours.find((f) => f.flavour === 'vulkan');
      const lavapipe = vulkan?.devices.find((d) => d.onCpu);
      const vulkanWhy = !vulkan
        ? ''
        : lavapipe
          ? `; no Vulkan GPU (${lavapipe.name} runs on the CPU: --device vulkan uses it)`
          : '; no Vulkan device';
      assert.equal(auto.backend.choice, `auto: no CUDA device (${devices.cuda.reason})${vulkanWhy}; using the CPU`);
      // same device, same flavour: the same tokens
      assert.equal(auto.digest, cpu.digest);
    }
    const text = power(args.filter((a) => a !== '--json'));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stderr, devices.cuda.usable ? /^\[auto: chose CUDA/ : /^\[auto: no CUDA device/);
    assert.match(text.stderr, /on (cpu|CUDA\d) \(/);
  });

  test('--device takes only auto, cuda, vulkan or cpu', () => {
    const run = power(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--device', 'gpu']);
    assert.equal(run.code, 2);
    assert.equal(run.stderr, "error: --device must be one of auto, cuda, vulkan, cpu (got 'gpu')\n");
  });

  test('the link check passes on this machine (driver and CUDA runtime only reported)', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'check-cuda-link.ts'), '--json'], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    if (process.platform !== 'linux') return;
    const report = JSON.parse(r.stdout) as { ok: boolean; report: { flavour: string; files: { problems: string[] }[] }[] };
    assert.equal(report.ok, true);
    for (const f of report.report) for (const file of f.files) assert.deepEqual(file.problems, []);
  });
});
