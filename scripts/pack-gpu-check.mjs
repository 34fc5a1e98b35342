#!/usr/bin/env node
// Packs what the borrowed-machine GPU check (test/gpu/native-check.sh, docs/testing.md "The
// borrowed-machine GPU check") builds from: a trimmed copy of the llama.cpp release source with
// our patches applied (scripts/native/patches, exactly as the from-source flavours apply them),
// into gpu-check/llama.cpp, plus gpu-check/MANIFEST.json. The checker's own sources
// (native/src, native/checker) travel with the working tree and are not copied.
//
//   node scripts/pack-gpu-check.mjs [--out DIR] [--all-cuda-kernels]
//
// Kept: the CMake files, include/, src/, common/ (the checker compiles the few sources that
// common_speculative needs; llama-speculative-simple, the user-size speed step's llama.cpp arm,
// links all of libllama-common, jinja/ and cpp-httplib included), examples/speculative-simple,
// the vendor/ folders the top-level CMake adds, and ggml with only its CPU and CUDA backends.
// Dropped: .git, models (75 MB of vocabularies), docs, tools, tests, the other examples, the
// Python converters, every other ggml backend. CUDA template instances the check cannot reach
// (quantized matmul kernels of types its models do not use: they are F16, Q8_0, Q6_K and
// Q4_K_M, whose mix adds Q5_K; Flash Attention kernels for head sizes other than 64 and 128: its
// models' heads) are replaced by stubs that abort with their name, so nvcc compiles only the
// kernels the check runs
// (--all-cuda-kernels keeps them all; the untrimmed originals are kept in
// gpu-check/cuda-instances-all/ either way, for `native-check.sh --all-cuda-kernels`).
//
// gpu-check/ is git-ignored: it is generated, never committed. The device tool copies the
// working tree's tracked and untracked-not-ignored files; gpu-check/ goes with them through the
// tool's `carry` option (carry: ["gpu-check"]), within the 64 MiB the tool takes in all.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { packageDir } from './native/flavours.mjs';
import { sourcePatches } from './native/llama-from-source.mjs';
import { layerInputArchitectures } from './native/llama-source-facts.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What the device tool takes with the working tree, in all (tree + carried paths). */
export const DEVICE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Head sizes of the check's models (native/checker/models.cpp): Flash Attention kernels kept. */
export const KEPT_HEAD_SIZES = [64, 128];

/** Weight types of the check's quantized models (Q8_0, Q6_K, Q4_K_M's Q4_K, Q5_K and Q6_K): MMQ kernels kept. */
export const KEPT_MMQ_TYPES = ['GGML_TYPE_Q4_K', 'GGML_TYPE_Q5_K', 'GGML_TYPE_Q6_K', 'GGML_TYPE_Q8_0'];

// --------------------------------------------------------------------------- what is kept

// top-level files of the llama.cpp tree that its CMake reads
const TOP_FILES = new Set(['CMakeLists.txt', 'LICENSE']);
// folders kept whole (relative, '/'-separated)
const WHOLE_DIRS = ['cmake', 'include', 'src', 'licenses', 'ggml/cmake', 'ggml/include', 'ggml/src/ggml-cpu', 'ggml/src/ggml-cuda'];
// vendor/: the top-level CMake adds these subfolders whatever is built (cpp-httplib only with
// LLAMA_BUILD_COMMON, which the checker turns off); miniaudio.h (4 MB) is for mtmd only
// (cpp-httplib: libllama-common, which llama-speculative-simple links, needs it)
const VENDOR_DIRS = ['vendor/hash', 'vendor/nlohmann', 'vendor/sheredom', 'vendor/stb', 'vendor/miniaudio', 'vendor/cpp-httplib'];
// llama.cpp's own speculative loop, built next to the checker for the user-size speed step
const EXAMPLE_DIRS = ['examples/speculative-simple'];
const DROPPED_FILES = new Set(['vendor/miniaudio/miniaudio.h']);

/** Whether the file at `rel` (relative to the llama.cpp root, '/'-separated) is packed. */
export function keepPath(rel) {
  if (DROPPED_FILES.has(rel)) return false;
  if (!rel.includes('/')) return TOP_FILES.has(rel);
  const under = (dir) => rel.startsWith(`${dir}/`);
  if (WHOLE_DIRS.some(under) || VENDOR_DIRS.some(under) || EXAMPLE_DIRS.some(under)) return true;
  if (rel === 'vendor/CMakeLists.txt') return true;
  // ggml: its CMake files and the core sources in ggml/src itself (no other backend folder)
  if (rel === 'ggml/CMakeLists.txt') return true;
  if (under('ggml/src')) return !rel.slice('ggml/src/'.length).includes('/');
  // common/: its CMake, sources and headers, with jinja/'s (libllama-common compiles them)
  if (rel === 'common/CMakeLists.txt') return true;
  if (under('common/jinja')) return /\.(cpp|h)$/.test(rel);
  if (under('common')) return !rel.slice('common/'.length).includes('/') && /\.(cpp|h|hpp|in)$/.test(rel);
  return false;
}

// --------------------------------------------------------------------------- CUDA instances

const INSTANCE_DIR = 'ggml/src/ggml-cuda/template-instances';

// each instance family: the file prefix, the DECL macro, the template it instantiates (for the
// stubs' declarations) and whether a case is one the check can reach
const FAMILIES = [
  {
    prefix: 'fattn-mma-f16-instance-',
    macro: 'DECL_FATTN_MMA_F16_CASE',
    template:
      'template <int DKQ, int DV, int ncols1, int ncols2>\nvoid ggml_cuda_flash_attn_ext_mma_f16_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
    fn: 'ggml_cuda_flash_attn_ext_mma_f16_case',
    params: 'ggml_backend_cuda_context &, ggml_tensor *',
    keep: (a) => KEPT_HEAD_SIZES.includes(Number(a[0])) && a[0] === a[1],
    stubFile: 'fattn-mma-f16-instance-power-stubs.cu',
  },
  {
    prefix: 'fattn-tile-instance-',
    macro: 'DECL_FATTN_TILE_CASE',
    template: 'template <int DKQ, int DV>\nvoid ggml_cuda_flash_attn_ext_tile_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
    fn: 'ggml_cuda_flash_attn_ext_tile_case',
    params: 'ggml_backend_cuda_context &, ggml_tensor *',
    keep: (a) => KEPT_HEAD_SIZES.includes(Number(a[0])) && a[0] === a[1],
    stubFile: 'fattn-tile-instance-power-stubs.cu',
  },
  {
    // ggml's CMake compiles only these four vec files unless GGML_CUDA_FA_ALL_QUANTS is on: the
    // stubs go into one of them (q4_0-q4_0), the other two unneeded ones are emptied
    prefix: 'fattn-vec-instance-',
    macro: 'DECL_FATTN_VEC_CASE',
    template:
      'template <int D, ggml_type type_K, ggml_type type_V>\nvoid ggml_cuda_flash_attn_ext_vec_case(ggml_backend_cuda_context & ctx, ggml_tensor * dst);',
    fn: 'ggml_cuda_flash_attn_ext_vec_case',
    params: 'ggml_backend_cuda_context &, ggml_tensor *',
    keep: (a) => KEPT_HEAD_SIZES.includes(Number(a[0])) && a[1] === 'GGML_TYPE_F16' && a[2] === 'GGML_TYPE_F16',
    only: [
      'fattn-vec-instance-f16-f16.cu',
      'fattn-vec-instance-q4_0-q4_0.cu',
      'fattn-vec-instance-q8_0-q8_0.cu',
      'fattn-vec-instance-bf16-bf16.cu',
    ],
    stubFile: 'fattn-vec-instance-q4_0-q4_0.cu',
  },
  {
    // quantized matmuls: only the types of the check's quantized models
    prefix: 'mmq-instance-',
    macro: 'DECL_MMQ_CASE',
    template:
      'struct mmq_args;\ntemplate <ggml_type type>\nvoid mul_mat_q_case(ggml_backend_cuda_context & ctx, const mmq_args & args, cudaStream_t stream);',
    fn: 'mul_mat_q_case',
    params: 'ggml_backend_cuda_context &, const mmq_args &, cudaStream_t',
    keep: (a) => KEPT_MMQ_TYPES.includes(a[0]),
    stubFile: 'mmq-instance-power-stubs.cu',
  },
];

/** The DECL_… cases of one instance file's text: [{ macro, args: [...] }]. */
export function instanceCases(text) {
  return [...text.matchAll(/^\s*(DECL_[A-Z0-9_]+)\(([^)]*)\);/gm)].map((m) => ({
    macro: m[1],
    args: m[2].split(',').map((s) => s.trim()),
  }));
}

function stubText(family, cases) {
  const lines = [
    '// Generated by scripts/pack-gpu-check.mjs for the borrowed-machine GPU check: kernels the',
    "// check's models cannot reach, replaced by stubs that abort with their name (the originals:",
    '// gpu-check/cuda-instances-all/; `test/gpu/native-check.sh --all-cuda-kernels` builds them).',
    '#include "ggml.h"',
    '',
    '#ifndef __CUDACC__',
    'typedef struct CUstream_st * cudaStream_t;',
    '#endif',
    'struct ggml_backend_cuda_context;',
    family.template,
    '',
  ];
  for (const c of cases) {
    const targs = c.args.join(', ');
    lines.push(
      `template <> void ${family.fn}<${targs}>(${family.params}) {`,
      `    GGML_ABORT("power gpu-check: CUDA kernel ${family.fn}<${targs}> is not built in this trimmed tree (test/gpu/native-check.sh --all-cuda-kernels builds every kernel)");`,
      '}',
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * Replaces the unreachable CUDA template instances in `dir` (a packed llama.cpp tree) by stubs.
 * Returns per family the cases kept and stubbed (their union is every case of the release).
 */
export function trimCudaInstances(dir) {
  const instDir = join(dir, INSTANCE_DIR);
  const files = readdirSync(instDir)
    .filter((f) => f.endsWith('.cu'))
    .sort();
  const report = [];
  for (const family of FAMILIES) {
    // files of the family that ggml's CMake never compiles (the other fattn-vec combinations)
    for (const f of files.filter((f) => f.startsWith(family.prefix) && family.only && !family.only.includes(f))) rmSync(join(instDir, f));
    const mine = files.filter((f) => f.startsWith(family.prefix) && (!family.only || family.only.includes(f)));
    const kept = [];
    const stubbed = [];
    const rewrites = new Map(); // file -> new text (null: delete)
    for (const f of mine) {
      const text = readFileSync(join(instDir, f), 'utf8');
      const cases = instanceCases(text).filter((c) => c.macro === family.macro);
      const keep = cases.filter((c) => family.keep(c.args));
      const drop = cases.filter((c) => !family.keep(c.args));
      kept.push(...keep.map((c) => `${f}: ${c.args.join(', ')}`));
      stubbed.push(...drop);
      if (drop.length === 0) continue;
      if (keep.length === 0) {
        rewrites.set(f, null);
      } else {
        // the file keeps only its reachable cases; the others go to the family's stub file
        const lines = text.split('\n').filter((l) => {
          const c = instanceCases(l)[0];
          return !c || c.macro !== family.macro || family.keep(c.args);
        });
        rewrites.set(f, lines.join('\n'));
      }
    }
    for (const [f, text] of rewrites) {
      if (text === null) {
        if (family.only)
          writeFileSync(join(instDir, f), '// emptied by scripts/pack-gpu-check.mjs: no case of this file is reachable by the check\n');
        else rmSync(join(instDir, f));
      } else {
        writeFileSync(join(instDir, f), text);
      }
    }
    if (stubbed.length > 0) writeFileSync(join(instDir, family.stubFile), stubText(family, stubbed));
    report.push({ family: family.macro, kept: kept.length, stubbed: stubbed.map((c) => c.args.join(', ')) });
  }
  return report;
}

// --------------------------------------------------------------------------- the source

/**
 * The patched release source: build/llama.cpp when its stamp says it is this release with these
 * patches (scripts/build-native.mjs writes it), else a fresh clone of node-llama-cpp's bundle
 * into a temporary folder with the patches applied the same way (git apply, name order).
 */
export function patchedSource() {
  const pkgDir = packageDir(root, 'node-llama-cpp');
  if (!pkgDir) throw new Error('node-llama-cpp is not installed (run npm ci): its gitRelease.bundle is the llama.cpp source');
  const info = JSON.parse(readFileSync(join(pkgDir, 'llama', 'llama.cpp.info.json'), 'utf8'));
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  const patches = sourcePatches();
  const want = `${info.tag} ${version} patches ${patches.hash}`;
  const built = join(root, 'build', 'llama.cpp');
  const stamp = join(built, '.power-release');
  const meta = { tag: info.tag, nodeLlamaCpp: version, patches: patches.names, patchesHash: patches.hash };
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) {
    const commit = execFileSync('git', ['-C', built, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    return { dir: built, commit, cleanup: () => {}, from: 'build/llama.cpp', ...meta };
  }
  const tmp = mkdtempSync(join(tmpdir(), 'power-pack-'));
  const dir = join(tmp, 'llama.cpp');
  execFileSync('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', join(pkgDir, 'llama', 'gitRelease.bundle'), dir], {
    stdio: 'inherit',
  });
  for (const patch of patches.paths) execFileSync('git', ['-C', dir, 'apply', '--whitespace=nowarn', patch], { stdio: 'inherit' });
  const commit = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  return { dir, commit, cleanup: () => rmSync(tmp, { recursive: true, force: true }), from: 'gitRelease.bundle', ...meta };
}

function walk(dir, base = dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === '.git') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, base, out);
    else if (e.isFile()) out.push(relative(base, p).split(sep).join('/'));
  }
  return out;
}

export function dirBytes(dir) {
  if (!existsSync(dir)) return 0;
  return walk(dir).reduce((n, rel) => n + statSync(join(dir, rel)).size, 0);
}

/** Bytes of the files git tracks plus the untracked ones it does not ignore: what the device tool copies. */
export function workingTreeBytes(repo = root) {
  const out = execFileSync('git', ['-C', repo, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  let n = 0;
  for (const rel of out.split('\0').filter(Boolean)) {
    try {
      n += statSync(join(repo, rel)).size;
    } catch {
      // deleted in the working tree
    }
  }
  return n;
}

/**
 * Packs into `out` (default gpu-check/ at the repository root; replaced). Returns the manifest.
 */
export function pack({ out = join(root, 'gpu-check'), allCudaKernels = false, source = null } = {}) {
  const src = source ?? patchedSource();
  try {
    rmSync(out, { recursive: true, force: true });
    const llamaOut = join(out, 'llama.cpp');
    const files = walk(src.dir).filter(keepPath).sort();
    for (const rel of files) {
      const to = join(llamaOut, rel);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(join(src.dir, rel), to);
    }
    // the untrimmed instances, for a build of every kernel
    const allDir = join(out, 'cuda-instances-all');
    mkdirSync(allDir, { recursive: true });
    for (const f of readdirSync(join(llamaOut, INSTANCE_DIR))) copyFileSync(join(llamaOut, INSTANCE_DIR, f), join(allDir, f));
    const cuda = allCudaKernels ? [] : trimCudaInstances(llamaOut);
    const manifest = {
      what: 'llama.cpp source for the borrowed-machine GPU check (test/gpu/native-check.sh), generated by scripts/pack-gpu-check.mjs',
      release: src.tag,
      nodeLlamaCpp: src.nodeLlamaCpp,
      commit: src.commit,
      from: src.from,
      patches: src.patches,
      patchesHash: src.patchesHash,
      files: files.length,
      cudaInstances: allCudaKernels
        ? 'all'
        : {
            keptHeadSizes: KEPT_HEAD_SIZES,
            keptMmqTypes: KEPT_MMQ_TYPES,
            families: cuda.map((f) => ({ family: f.family, kept: f.kept, stubbed: f.stubbed.length })),
          },
    };
    writeFileSync(join(out, 'MANIFEST.json'), JSON.stringify(manifest, null, 2) + '\n');
    // the checker compiles the engine's artifact check with the list the addon gets (native-check.sh)
    writeFileSync(join(out, 'layer-input-archs.txt'), layerInputArchitectures(src.dir).join(','));
    return { ...manifest, bytes: dirBytes(out) };
  } finally {
    if (!source) src.cleanup();
  }
}

const mib = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--out');
  const out = at >= 0 ? resolve(args[at + 1]) : join(root, 'gpu-check');
  const started = Date.now();
  const m = pack({ out, allCudaKernels: args.includes('--all-cuda-kernels') });
  const tree = workingTreeBytes();
  const total = tree + m.bytes;
  console.log(`power: packed llama.cpp ${m.release} (${m.commit.slice(0, 12)}, patches ${m.patches.join(', ') || 'none'}) from ${m.from}`);
  console.log(
    `power: ${out}: ${m.files} files, ${mib(m.bytes)}; the working tree the device tool copies: ${mib(tree)}; together ${mib(total)} of ${mib(DEVICE_LIMIT_BYTES)} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  if (typeof m.cudaInstances === 'object') {
    for (const f of m.cudaInstances.families) console.log(`power:   CUDA ${f.family}: ${f.kept} cases kept, ${f.stubbed} stubbed`);
  }
  if (total > DEVICE_LIMIT_BYTES) {
    console.error(`error: the pack and the working tree come to ${mib(total)}, over the ${mib(DEVICE_LIMIT_BYTES)} the device tool takes`);
    process.exit(1);
  }
}
