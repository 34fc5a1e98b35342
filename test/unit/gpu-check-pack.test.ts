// The borrowed-machine GPU check's pack (scripts/pack-gpu-check.mjs, docs/testing.md "The
// borrowed-machine GPU check"): it must stay under what the device tool takes with the working
// tree (64 MiB), hold every file native/checker's CMake reads, carry our patches, and its CUDA
// stubs must stand in for exactly the template instances it drops (checked with g++: the stubs'
// symbols are the ones the instances' explicit instantiations define). Also configures
// native/checker with cmake against the pack (CPU; about a second).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';

interface Manifest {
  release: string;
  commit: string;
  patches: string[];
  files: number;
  bytes: number;
  cudaInstances: { families: { family: string; kept: number; stubbed: number }[] } | 'all';
}
const packer = (await import(join(ROOT, 'scripts', 'pack-gpu-check.mjs'))) as {
  DEVICE_LIMIT_BYTES: number;
  pack: (o: { out: string }) => Manifest;
  workingTreeBytes: () => number;
  instanceCases: (text: string) => { macro: string; args: string[] }[];
  keepPath: (rel: string) => boolean;
};

const INSTANCES = 'ggml/src/ggml-cuda/template-instances';
let dir = '';
let llama = '';
let manifest: Manifest;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'power-gpu-pack-'));
  manifest = packer.pack({ out: join(dir, 'gpu-check') });
  llama = join(dir, 'gpu-check', 'llama.cpp');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const has = (rel: string) => existsSync(join(llama, rel));
const hasCommand = (cmd: string) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
// CI's machine has cmake (it builds llama.cpp): there a missing one fails
const noCmake = requirePrerequisite(!hasCommand('cmake') && 'cmake is not installed');

describe('the borrowed-machine GPU check pack', () => {
  test('with the working tree it stays well under the device limit', () => {
    const tree = packer.workingTreeBytes();
    assert.ok(manifest.bytes < 32 * 2 ** 20, `pack ${(manifest.bytes / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(manifest.bytes + tree < packer.DEVICE_LIMIT_BYTES, `pack + tree ${((manifest.bytes + tree) / 2 ** 20).toFixed(1)} MiB`);
  });

  test('keeps what the build reads and drops the rest', () => {
    for (const rel of [
      'CMakeLists.txt',
      'include/llama.h',
      'src/CMakeLists.txt',
      'src/llama-ext.h',
      'common/build-info.cpp.in',
      'ggml/CMakeLists.txt',
      'ggml/src/CMakeLists.txt',
      'ggml/src/ggml-cpu/CMakeLists.txt',
      'ggml/src/ggml-cuda/CMakeLists.txt',
      'vendor/CMakeLists.txt',
    ]) {
      assert.ok(has(rel), rel);
    }
    // every sources list the CMake files name
    const checker = readFileSync(join(ROOT, 'native', 'checker', 'CMakeLists.txt'), 'utf8');
    const common = [...checker.matchAll(/\$\{power_common_dir\}\/([\w.-]+)/g)].map((m) => `common/${m[1]}`);
    assert.ok(common.length >= 10);
    for (const rel of common) assert.ok(has(rel), rel);
    const engine = [...checker.matchAll(/\$\{power_src\}\/([\w.-]+\.cpp)/g)].map((m) => m[1]!);
    for (const f of engine) assert.ok(existsSync(join(ROOT, 'native', 'src', f)), `native/src/${f}`);
    const src = readFileSync(join(llama, 'src', 'CMakeLists.txt'), 'utf8');
    const listed = [
      ...src
        .slice(src.indexOf('add_library(llama'), src.indexOf(')', src.indexOf('add_library(llama')))
        .matchAll(/^\s+([\w./-]+\.(?:cpp|h))$/gm),
    ].map((m) => m[1]!);
    assert.ok(listed.length > 20);
    for (const f of listed) assert.ok(has(join('src', f)), `src/${f}`);
    const vendor = readFileSync(join(llama, 'vendor', 'CMakeLists.txt'), 'utf8');
    for (const m of vendor.matchAll(/^add_subdirectory\((\w[\w-]*)\)/gm)) assert.ok(has(`vendor/${m[1]}/CMakeLists.txt`), m[1]);
    for (const f of ['f16-f16', 'q4_0-q4_0', 'q8_0-q8_0', 'bf16-bf16']) assert.ok(has(`${INSTANCES}/fattn-vec-instance-${f}.cu`), f);
    for (const gone of [
      'models',
      'tools',
      'tests',
      'docs',
      'ggml/src/ggml-vulkan',
      'ggml/src/ggml-metal',
      'examples/simple',
      'examples/speculative',
    ]) {
      assert.ok(!has(gone), gone);
    }
    assert.equal(packer.keepPath('models/ggml-vocab-llama-spm.gguf'), false);
  });

  test('carries every patch of scripts/native/patches (in the files it packs: not the Vulkan backend, which needs glslc to build)', () => {
    const patchDir = join(ROOT, 'scripts', 'native', 'patches');
    const patches = readdirSync(patchDir).filter((f) => f.endsWith('.patch'));
    assert.deepEqual(manifest.patches, patches.sort());
    let checked = 0;
    for (const p of patches) {
      let file: string | null = null;
      for (const line of readFileSync(join(patchDir, p), 'utf8').split('\n')) {
        if (line.startsWith('+++ b/')) {
          const rel = line.slice(6);
          file = packer.keepPath(rel) ? readFileSync(join(llama, rel), 'utf8') : null;
          if (!rel.startsWith('ggml/src/ggml-vulkan/')) assert.ok(file !== null, `${p}: the pack keeps ${rel}`);
        } else if (file !== null && line.startsWith('+') && !line.startsWith('+++') && line.trim().length > 1) {
          assert.ok(file.includes(line.slice(1)), `${p}: ${line}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 0);
  });

  test('the CUDA stubs stand in for exactly the instances dropped', (t) => {
    const all = join(dir, 'gpu-check', 'cuda-instances-all');
    const compiled = (f: string) =>
      !f.startsWith('fattn-vec-') || ['f16-f16', 'q4_0-q4_0', 'q8_0-q8_0', 'bf16-bf16'].some((x) => f === `fattn-vec-instance-${x}.cu`);
    const key = (macro: string, args: string[]) => `${macro.replace(/^DECL_/, '')}<${args.join(',')}>`;
    const release = new Set<string>();
    for (const f of readdirSync(all).filter((f) => f.endsWith('.cu') && compiled(f))) {
      for (const c of packer.instanceCases(readFileSync(join(all, f), 'utf8'))) release.add(key(c.macro, c.args));
    }
    const fnMacro: Record<string, string> = {
      ggml_cuda_flash_attn_ext_mma_f16_case: 'DECL_FATTN_MMA_F16_CASE',
      ggml_cuda_flash_attn_ext_tile_case: 'DECL_FATTN_TILE_CASE',
      ggml_cuda_flash_attn_ext_vec_case: 'DECL_FATTN_VEC_CASE',
      mul_mat_q_case: 'DECL_MMQ_CASE',
    };
    const packed = new Map<string, number>();
    const add = (k: string) => packed.set(k, (packed.get(k) ?? 0) + 1);
    const stubFiles: string[] = [];
    const kept: { macro: string; args: string[] }[] = [];
    for (const f of readdirSync(join(llama, INSTANCES)).filter((f) => f.endsWith('.cu') && compiled(f))) {
      const text = readFileSync(join(llama, INSTANCES, f), 'utf8');
      for (const c of packer.instanceCases(text)) {
        add(key(c.macro, c.args));
        kept.push(c);
      }
      const stubs = [...text.matchAll(/^template <> void (\w+)<([^>]*)>\(/gm)];
      if (stubs.length) stubFiles.push(join(llama, INSTANCES, f));
      for (const m of stubs)
        add(
          key(
            fnMacro[m[1]!]!,
            m[2]!.split(',').map((s) => s.trim()),
          ),
        );
    }
    assert.deepEqual([...packed.keys()].sort(), [...release].sort());
    assert.ok(
      [...packed.values()].every((n) => n === 1),
      'each case defined once',
    );
    // kept: what the check's models reach (head sizes 64 and 128, F16 caches, the MMQ types of its
    // Q8_0, Q6_K and Q4_K_M models; every MMF)
    for (const c of kept) {
      if (c.macro === 'DECL_MMF_CASE') continue;
      if (c.macro === 'DECL_MMQ_CASE') {
        assert.ok(['GGML_TYPE_Q4_K', 'GGML_TYPE_Q5_K', 'GGML_TYPE_Q6_K', 'GGML_TYPE_Q8_0'].includes(c.args[0]!), key(c.macro, c.args));
        continue;
      }
      assert.ok(['64', '128'].includes(c.args[0]!), key(c.macro, c.args));
      if (c.macro === 'DECL_FATTN_VEC_CASE') assert.deepEqual(c.args.slice(1), ['GGML_TYPE_F16', 'GGML_TYPE_F16']);
    }
    assert.ok(kept.some((c) => c.macro === 'DECL_FATTN_MMA_F16_CASE' && c.args[0] === '128'));
    const families = manifest.cudaInstances === 'all' ? [] : manifest.cudaInstances.families;
    assert.equal(families.find((f) => f.family === 'DECL_MMQ_CASE')?.kept, 4);
    assert.equal(families.find((f) => f.family === 'DECL_FATTN_TILE_CASE')?.kept, 2);

    const noCompiler = requirePrerequisite(!hasCommand('g++') && 'g++ is not installed: the stubs were not compiled and linked');
    if (noCompiler) return t.skip(noCompiler);
    // the stubs compile as C++ (nvcc's host side), and a call through the release's explicit
    // instantiation declaration links to them: the specialization has the instantiation's symbol
    const inc = ['-I', join(llama, 'ggml', 'include')];
    const objs: string[] = [];
    for (const [i, f] of stubFiles.entries()) {
      const o = join(dir, `stub${i}.o`);
      const r = spawnSync('g++', ['-std=c++17', '-x', 'c++', '-c', f, '-o', o, ...inc], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${f}: ${r.stderr}`);
      objs.push(o);
    }
    const caller = join(dir, 'caller.cpp');
    writeFileSync(
      caller,
      [
        '#include "ggml.h"',
        'typedef struct CUstream_st * cudaStream_t;',
        'struct ggml_backend_cuda_context {};',
        'struct mmq_args {};',
        'template <int DKQ, int DV> void ggml_cuda_flash_attn_ext_tile_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'template <int DKQ, int DV, int ncols1, int ncols2> void ggml_cuda_flash_attn_ext_mma_f16_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'template <int D, ggml_type type_K, ggml_type type_V> void ggml_cuda_flash_attn_ext_vec_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'template <ggml_type type> void mul_mat_q_case(ggml_backend_cuda_context & ctx, const mmq_args & args, cudaStream_t stream);',
        'extern template void ggml_cuda_flash_attn_ext_tile_case<576, 512>(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'extern template void ggml_cuda_flash_attn_ext_mma_f16_case<576, 512, 1, 16>(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'extern template void ggml_cuda_flash_attn_ext_vec_case<256, GGML_TYPE_F16, GGML_TYPE_F16>(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
        'extern template void mul_mat_q_case<GGML_TYPE_Q4_0>(ggml_backend_cuda_context & ctx, const mmq_args & args, cudaStream_t stream);',
        'extern "C" void ggml_abort(const char *, int, const char *, ...) {}',
        'int main() {',
        '  void * p[] = {(void *) &ggml_cuda_flash_attn_ext_tile_case<576, 512>, (void *) &ggml_cuda_flash_attn_ext_mma_f16_case<576, 512, 1, 16>,',
        '                (void *) &ggml_cuda_flash_attn_ext_vec_case<256, GGML_TYPE_F16, GGML_TYPE_F16>, (void *) &mul_mat_q_case<GGML_TYPE_Q4_0>};',
        '  return p[0] && p[1] && p[2] && p[3] ? 0 : 1;',
        '}',
        '',
      ].join('\n'),
    );
    const exe = join(dir, 'caller');
    const link = spawnSync('g++', ['-std=c++17', caller, ...objs, '-o', exe, ...inc], { encoding: 'utf8' });
    assert.equal(link.status, 0, link.stderr);
    assert.equal(spawnSync(exe).status, 0);
  });

  test('native/checker configures against the pack', { skip: noCmake }, () => {
    const build = join(dir, 'build');
    // as test/gpu/native-check.sh configures it: the layer-input targets come with the pack
    const archs = readFileSync(join(dirname(llama), 'layer-input-archs.txt'), 'utf8');
    assert.match(archs, /^(?:[\w.-]+,)*llama(?:,[\w.-]+)*$/);
    const r = spawnSync(
      'cmake',
      [
        '-S',
        join(ROOT, 'native', 'checker'),
        '-B',
        build,
        `-DLLAMA_SRC_DIR=${llama}`,
        `-DPOWER_LAYER_INPUT_ARCHS=${archs}`,
        ...(hasCommand('ninja') ? ['-G', 'Ninja'] : []),
      ],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });
});
