// The default engine's CPU backend, as built here: what the compiler targeted for it (asked of
// the compiler with the build's own compile commands), that no AMX gets in even on a Xeon that
// has it (its AMX weight buffer crashed there and is a second kernel family for quantized
// matrices, docs/exactness.md), and that the loaded backend reports the same through `power
// devices`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { readBuildInfo } from '../../app/engine/build-info.js';
import { ROOT } from '../../app/paths.js';
import { llamaCmakeDefs } from '../../scripts/native/llama-from-source.mjs';
import { cpuBackendFeatures, putsWeightsInAmx, splitCommand, type CpuBackend } from '../../scripts/native/cpu-features.mjs';
import { jsonOf, power } from '../fixtures/cli.js';

interface CpuBuildInfo {
  llamaLibDir: string;
  cpuBackends?: CpuBackend[] | null;
  llamaCmakeOptions?: Record<string, string>;
}

interface DevicesJson {
  flavours: { flavour: string; devices: { type: string; features?: string[]; extraBufferTypes?: string[] }[] }[];
}

const x86Linux = process.platform === 'linux' && process.arch === 'x64';

describe('the cpu flavour keeps AMX out', { skip: x86Linux ? false : 'the compiler check reads gcc/clang x86 builds' }, () => {
  let info: CpuBuildInfo;
  let buildDir: string;
  let scratch: string;
  before(() => {
    info = readBuildInfo('cpu') as unknown as CpuBuildInfo;
    buildDir = dirname(info.llamaLibDir);
    scratch = mkdtempSync(join(tmpdir(), 'power-cpu-features-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  test('build-info.json names what each CPU backend was compiled for, as the compiler says now', () => {
    assert.equal(info.llamaCmakeOptions?.GGML_CPU_AMX, 'OFF');
    assert.ok(info.cpuBackends && info.cpuBackends.length >= 1, 'cpuBackends is recorded');
    assert.deepEqual(cpuBackendFeatures(buildDir), info.cpuBackends);
    for (const b of info.cpuBackends)
      assert.ok(b.compiledFor.includes('SSE42') || b.name === 'ggml-cpu-x64', `${b.name}: ${b.compiledFor.join(' ')}`);
  });

  test('no CPU backend of the build would put weights in an AMX buffer, here or on an AMX Xeon', () => {
    for (const b of cpuBackendFeatures(buildDir)!) {
      assert.ok(!b.compiledFor.some((f) => f.startsWith('AMX')), `${b.name} here: ${b.compiledFor.join(' ')}`);
      assert.ok(!b.onAmxXeon.some((f) => f.startsWith('AMX')), `${b.name} on an AMX Xeon: ${b.onAmxXeon.join(' ')}`);
      assert.equal(putsWeightsInAmx(b.onAmxXeon), false);
    }
  });

  test('the same check finds AMX in a compile command that allows it: without the patch flags, or with AMX flags (it can fail)', () => {
    const entries = JSON.parse(readFileSync(join(buildDir, 'compile_commands.json'), 'utf8')) as {
      file: string;
      command?: string;
      arguments?: string[];
      directory: string;
    }[];
    const native = entries
      .filter((e) => /ggml-cpu[\\/]ggml-cpu\.c$/.test(e.file))
      .map((e) => ({ ...e, arguments: e.arguments ?? splitCommand(e.command!) }));
    const nativeOnes = native.filter((e) => e.arguments.includes('-march=native'));
    let unpatched: typeof native;
    if (nativeOnes.length > 0) {
      unpatched = nativeOnes.map(({ command: _command, ...e }) => ({
        ...e,
        arguments: e.arguments.filter((a) => !a.startsWith('-mno-amx')),
      }));
    } else {
      // an all-variants build: no -march=native for the patch flags to qualify, each variant
      // names its level and none has AMX (checked above); the check still finds AMX in the
      // zen4 level's command given the AMX flags of the sapphirerapids level it leaves out
      const zen4 = native.find((e) => e.arguments.some((a) => /CMakeFiles[\\/]ggml-cpu-zen4\.dir/.test(a)));
      assert.ok(zen4, `neither -march=native nor the zen4 level in ${native.length} ggml-cpu.c commands`);
      const { command: _command, ...e } = zen4;
      unpatched = [{ ...e, arguments: [...e.arguments, '-mamx-tile', '-mamx-int8'] }];
    }
    writeFileSync(join(scratch, 'compile_commands.json'), JSON.stringify(unpatched));
    const [backend] = cpuBackendFeatures(scratch)!;
    assert.ok(
      backend && putsWeightsInAmx(backend.onAmxXeon),
      `with AMX allowed in the command, an AMX Xeon gets AMX: ${backend?.onAmxXeon.join(' ')}`,
    );
  });

  test('the all-variants build (for packages) has no AMX level: an AMX Xeon loads zen4', () => {
    // configuring is enough: the compile commands hold each variant's flags
    const dir = join(scratch, 'all-variants');
    const defs = llamaCmakeDefs({ cuda: false, cudaArchs: undefined, cpuVariants: 'all' });
    execFileSync('cmake', ['-S', join(ROOT, 'build', 'llama.cpp'), '-B', dir, ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)], {
      stdio: 'pipe',
    });
    const variants = cpuBackendFeatures(dir)!;
    assert.ok(variants.length >= 10, variants.map((v) => v.name).join(' '));
    for (const v of variants) assert.equal(putsWeightsInAmx(v.onAmxXeon), false, `${v.name}: ${v.onAmxXeon.join(' ')}`);
    assert.ok(!variants.some((v) => v.name === 'ggml-cpu-sapphirerapids'));
    assert.deepEqual(variants.find((v) => v.name === 'ggml-cpu-zen4')?.compiledFor, [
      'SSE42',
      'AVX',
      'F16C',
      'FMA',
      'AVX2',
      'BMI2',
      'AVX512',
      'AVX512_VBMI',
      'AVX512_VNNI',
      'AVX512_BF16',
    ]);
  });

  test('power devices: the loaded CPU backend offers no weight buffer but the repacked one and was compiled without AMX', () => {
    const report = jsonOf<DevicesJson>(power(['devices', '--json'], { env: { POWER_FLAVOUR: 'cpu' } }));
    const cpu = report.flavours.find((f) => f.flavour === 'cpu')?.devices.find((d) => d.type === 'cpu');
    assert.ok(cpu?.features && cpu.extraBufferTypes, JSON.stringify(report));
    // the repacked layout is batch-invariant with our patch (docs/exactness.md); AMX's is not there
    assert.ok(
      cpu.extraBufferTypes.every((b) => b === 'CPU_REPACK'),
      cpu.extraBufferTypes.join(', '),
    );
    assert.ok(!cpu.features.includes('AMX_INT8'), cpu.features.join(' '));
    // what the backend reports is what the compiler targeted (in the names both know)
    const compiled = new Set(info.cpuBackends!.flatMap((b) => b.compiledFor));
    for (const f of ['AVX', 'AVX2', 'F16C', 'FMA', 'BMI2', 'AVX512', 'AVX512_VNNI']) {
      if (info.cpuBackends!.length === 1) assert.equal(cpu.features.includes(f), compiled.has(f), `${f}: ${cpu.features.join(' ')}`);
    }
    const text = power(['devices'], { env: { POWER_FLAVOUR: 'cpu' } });
    assert.match(text.stdout, /^ {10}compiled for: .*AVX/m);
    assert.match(text.stdout, /^ {10}weight buffers: (plain|CPU_REPACK \()/m);
  });
});
