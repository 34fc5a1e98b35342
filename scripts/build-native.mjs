#!/usr/bin/env node
// Builds the native addon (native/) with cmake-js against the llama.cpp release that
// node-llama-cpp@3.21.1 bundles: headers from its git bundle, libraries built here from the same
// source (flavours cpu, cuda-src) or from the prebuilt @node-llama-cpp/<platform>[-cuda] package
// (cpu-prebuilt, cuda). Output: build/addon-<flavour>/ (power.node, the reference tool, the
// llama/ggml libraries and build-info.json). Incremental: a second run only recompiles what
// changed, and a llama.cpp build is reused from the cache while its inputs are unchanged.
//
//   node scripts/build-native.mjs [--force] [--flavour cpu|cpu-prebuilt|cuda|vulkan] [--cpu-variants native|all]
//       no --flavour (npm install): cpu (llama.cpp from source, batch-invariant: the default),
//       cpu-prebuilt, cuda when @node-llama-cpp/<platform>-cuda is installed, and vulkan
//       (from source) when glslc and the Vulkan headers are
//   node scripts/build-native.mjs --from-source [--cuda [--cuda-arch "89;90"] | --vulkan] [--force]
//       without --cuda: the cpu flavour (as above); with it: cuda-src; with --vulkan: vulkan
//   node scripts/build-native.mjs --target win-x64 [--force]
//       the cpu flavour for Windows x64, cross-compiled with mingw-w64 into build/win-x64/addon-cpu
//       (docs/windows.md)
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { FLAVOURS, fail, packageDir, platformKey, prebuiltLibDir } from './native/flavours.mjs';
import { buildLlamaFromSource, missingVulkanPieces, sourcePatches } from './native/llama-from-source.mjs';
import { knownArchitectures, layerInputArchitectures } from './native/llama-source-facts.mjs';
import { MINGW_TOOLCHAIN, WIN_TARGET, mingwRuntimeDlls, nodeImportLibrary } from './native/windows-cross.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const args = process.argv.slice(2);

function option(name) {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) fail(`${name} needs a value`);
  return value;
}

const KNOWN = ['--force', '--flavour', '--from-source', '--cuda', '--vulkan', '--cuda-arch', '--cpu-variants', '--target'];
for (const [i, a] of args.entries()) {
  const isValue = i > 0 && ['--flavour', '--cuda-arch', '--cpu-variants', '--target'].includes(args[i - 1]);
  if (!isValue && !KNOWN.includes(a)) fail(`unknown argument '${a}' (known: ${KNOWN.join(', ')})`);
}
const force = args.includes('--force');
const fromSource = args.includes('--from-source');
const cuda = args.includes('--cuda');
const vulkan = args.includes('--vulkan');
const cudaArchs = option('--cuda-arch');
const flavourArg = option('--flavour');
// native: compiled for this machine's CPU (fast here); all: every x86 level, for packages
const cpuVariants = option('--cpu-variants') ?? 'native';
if (!['native', 'all'].includes(cpuVariants)) fail(`--cpu-variants must be native or all (got '${cpuVariants}')`);
if (cuda && !fromSource) fail('--cuda goes with --from-source (npm install builds the prebuilt CUDA flavour by itself)');
if (vulkan && !fromSource) fail('--vulkan goes with --from-source (or --flavour vulkan)');
if (vulkan && cuda) fail('give either --cuda or --vulkan');
if (cudaArchs !== undefined && !cuda) fail('--cuda-arch goes with --from-source --cuda');
if (cudaArchs !== undefined && !/^(native|all|all-major|\d+(-real|-virtual)?(;\d+(-real|-virtual)?)*)$/.test(cudaArchs)) {
  fail(`--cuda-arch must be a ';'-separated list such as "89;90" (got '${cudaArchs}')`);
}
if (fromSource && flavourArg) fail('give either --from-source or --flavour');
if (flavourArg && !FLAVOURS[flavourArg]) fail(`unknown flavour '${flavourArg}' (known: ${Object.keys(FLAVOURS).join(', ')})`);
const target = option('--target') ?? null;
if (target !== null && target !== WIN_TARGET) fail(`--target must be ${WIN_TARGET} (got '${target}')`);
if (target && (cuda || vulkan || (flavourArg && flavourArg !== 'cpu'))) fail(`--target ${target} builds the cpu flavour only`);
if (target && process.platform !== 'linux') fail(`--target ${target} cross-compiles on Linux (on Windows, build natively)`);

const key = target ?? platformKey();
// a cross-build's folders sit apart, so that this machine's own build stays where the engine looks
const buildRoot = target ? join(root, 'build', target) : join(root, 'build');

/** Clones the llama.cpp source bundle once per release into build/llama.cpp. */
function llamaSource() {
  const pkgDir = packageDir(root, 'node-llama-cpp');
  if (!pkgDir) fail('node-llama-cpp@3.21.1 is not installed (run npm install)');
  const info = JSON.parse(readFileSync(join(pkgDir, 'llama', 'llama.cpp.info.json'), 'utf8'));
  const bundle = join(pkgDir, 'llama', 'gitRelease.bundle');
  const dir = join(root, 'build', 'llama.cpp');
  const stamp = join(dir, '.power-release');
  const patches = sourcePatches();
  const want = `${info.tag} ${readFileSync(join(pkgDir, 'package.json'), 'utf8').match(/"version":\s*"([^"]+)"/)[1]} patches ${patches.hash}`;
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dirname(dir), { recursive: true });
    execFileSync('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', bundle, dir], { stdio: 'inherit' });
    for (const patch of patches.paths) {
      try {
        execFileSync('git', ['-C', dir, 'apply', '--whitespace=nowarn', patch], { stdio: 'inherit' });
      } catch {
        fail(`the patch ${patch} does not apply to llama.cpp ${info.tag} (git apply output above)`);
      }
    }
    writeFileSync(stamp, want);
  }
  const commit = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  return { dir, tag: info.tag, commit, patches: patches.names };
}

/**
 * Puts the CUDA backend library into the addon folder as a hard link to the package's file:
 * no second 150 MB on disk, yet the folder stays self-contained (it survives `rm -rf
 * node_modules`, a packager sees a plain file). A symlink or an rpath into node_modules would
 * not. Where a link is impossible (another file system) it is copied.
 */
function placeCudaBackend(libDir, outDir) {
  const names = readdirSync(libDir).filter((f) => /^(lib)?ggml-cuda\.(so|dll)$/.test(f));
  let how = null;
  for (const name of names) {
    const from = join(libDir, name);
    const to = join(outDir, name);
    if (existsSync(to) && statSync(to).ino === statSync(from).ino) {
      how = 'hardlink';
      continue;
    }
    rmSync(to, { force: true });
    try {
      linkSync(from, to);
      how = 'hardlink';
    } catch {
      copyFileSync(from, to);
      how = 'copy';
    }
  }
  return how;
}

function buildAddon(flavour, libDir, src, extraInfo) {
  const f = FLAVOURS[flavour];
  const buildDir = join(buildRoot, `native-${flavour}`);
  const outDir = join(buildRoot, `addon-${flavour}`);
  // the folder must hold exactly one set of llama.cpp libraries: a leftover backend from another
  // set (e.g. a prebuilt libggml-cpu-haswell.so next to a from-source build) would be loaded too
  const previous = existsSync(join(outDir, 'build-info.json'))
    ? JSON.parse(readFileSync(join(outDir, 'build-info.json'), 'utf8')).llamaLibDir
    : undefined;
  if (force || previous !== libDir) {
    rmSync(buildDir, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  }
  // cmake-js reuses a configured folder as it is: one configured before a definition changed
  // (POWER_LLAMA_PATCHED) is configured afresh
  const patched = f.route === 'source' ? 'ON' : 'OFF';
  const cache = join(buildDir, 'CMakeCache.txt');
  if (existsSync(cache) && !readFileSync(cache, 'utf8').includes(`POWER_LLAMA_PATCHED:BOOL=${patched}`)) {
    rmSync(buildDir, { recursive: true, force: true });
  }

  // Build against the headers of the Node that runs us when they are installed (no download:
  // build machines may be offline); npm's own nodedir setting wins when present.
  const env = { ...process.env };
  const nodePrefix = resolve(dirname(process.execPath), '..');
  if (!env.npm_config_nodedir && existsSync(join(nodePrefix, 'include', 'node', 'node_api.h'))) {
    env.npm_config_nodedir = nodePrefix;
  }
  const cmakeJs = join(packageDir(root, 'cmake-js'), 'bin', 'cmake-js');
  const addonApi = require('node-addon-api').include_dir.replace(/^"|"$/g, '');
  // for Windows: the mingw toolchain, node.exe's N-API through an import library, and the
  // compile and link flags of its llama.cpp (glibc's float functions: windows-cross.mjs)
  const llamaFlags = Object.entries(extraInfo.llamaCmakeOptions ?? {}).filter(([k]) =>
    /^CMAKE_(C|CXX|SHARED_LINKER|MODULE_LINKER|EXE_LINKER)_FLAGS$/.test(k),
  );
  const cross = target
    ? [
        `--CDCMAKE_TOOLCHAIN_FILE=${MINGW_TOOLCHAIN}`,
        `--CDPOWER_NODE_IMPLIB=${nodeImportLibrary(root, buildDir)}`,
        ...llamaFlags.map(([k, v]) => `--CD${k}=${v}`),
      ]
    : [];
  execFileSync(
    process.execPath,
    [
      cmakeJs,
      'compile',
      '--directory',
      join(root, 'native'),
      '--out',
      buildDir,
      '--config',
      'Release',
      '--parallel',
      String(Math.max(1, cpus().length)),
      `--CDLLAMA_SRC_DIR=${src.dir}`,
      `--CDLLAMA_LIB_DIR=${libDir}`,
      `--CDLLAMA_LIB_SUFFIX=${f.libSuffix}`,
      `--CDPOWER_OUT_DIR=${outDir}`,
      `--CDPOWER_LAYER_INPUT_ARCHS=${layerInputArchitectures(src.dir).join(',')}`,
      // the libraries built here carry scripts/native/patches (llama_set_mtp_fr_vocab); the released ones do not
      `--CDPOWER_LLAMA_PATCHED=${patched}`,
      `--CDNODE_ADDON_API_DIR=${resolve(root, addonApi)}`,
      ...cross,
    ],
    { stdio: 'inherit', cwd: root, env },
  );
  // the compiler's runtime, which the addon and llama.cpp's DLLs load, beside them
  if (target) for (const dll of mingwRuntimeDlls()) copyFileSync(dll, join(outDir, basename(dll)));
  const cudaBackend = f.gpu === 'cuda' ? placeCudaBackend(libDir, outDir) : null;
  if (f.gpu === 'cuda' && !cudaBackend) fail(`no ggml-cuda library in ${libDir}`);
  const info = {
    flavour,
    route: f.route,
    platform: key,
    llamaCppRelease: src.tag,
    nodeLlamaCpp: '3.21.1',
    gpu: f.gpu,
    batchInvariant: f.batchInvariant,
    flashAttnBatchInvariant: f.flashAttnBatchInvariant,
    expertsBatchInvariant: f.expertsBatchInvariant,
    ...(f.invariantVerifyRows !== undefined ? { invariantVerifyRows: f.invariantVerifyRows } : {}),
    ...(f.variantEnv !== undefined ? { variantEnv: f.variantEnv } : {}),
    ...(f.route === 'source' ? { llamaPatches: src.patches } : {}),
    llamaLibDir: libDir,
    cudaMajor: f.cudaMajor ?? null,
    ...(cudaBackend ? { cudaBackend } : {}),
    ...extraInfo,
    architectures: knownArchitectures(src.dir),
    // the targets a draft artifact can read (also compiled into the addon)
    layerInputArchitectures: layerInputArchitectures(src.dir),
  };
  writeFileSync(join(outDir, 'build-info.json'), JSON.stringify(info, null, 2) + '\n');
  console.log(`power: native addon (${flavour}) ready in ${outDir}${cudaBackend ? ` (ggml-cuda: ${cudaBackend})` : ''}`);
}

const src = llamaSource();

/** A flavour whose llama.cpp is built here from the bundle (cached by its inputs). */
function buildFromSource(flavour) {
  const gpu = FLAVOURS[flavour].gpu;
  const onGpu = gpu === 'cuda';
  const built = buildLlamaFromSource({
    srcDir: src.dir,
    srcCommit: src.commit,
    cuda: onGpu,
    vulkan: gpu === 'vulkan',
    cudaArchs,
    cpuVariants,
    target,
  });
  buildAddon(flavour, built.libDir, src, {
    cudaMajor: built.cudaMajor,
    ...(onGpu
      ? { cudaVersion: built.cudaVersion, cudaArchitectures: cudaArchs ?? 'ggml default' }
      : { cpuVariants: gpu ? 'portable' : cpuVariants }),
    // the patches that change this build (a backend's own patches only where it is compiled)
    llamaPatches: sourcePatches(built.defs, target).names,
    llamaBuildKey: built.key,
    llamaBuildSeconds: built.builtSeconds,
    llamaCmakeOptions: built.defs,
    // what each CPU backend was compiled for, and would be on an AMX Xeon (cpu-features.mjs)
    cpuBackends: built.cpuBackends,
  });
}

if (fromSource || target) {
  buildFromSource(cuda ? 'cuda-src' : vulkan ? 'vulkan' : 'cpu');
} else {
  const vulkanMissing = missingVulkanPieces();
  if (!flavourArg && vulkanMissing.length) console.log(`power: no vulkan flavour (it needs ${vulkanMissing.join(' and ')})`);
  const wanted = flavourArg ? [flavourArg] : ['cpu', 'cpu-prebuilt', 'cuda', ...(vulkanMissing.length ? [] : ['vulkan'])];
  for (const flavour of wanted) {
    const f = FLAVOURS[flavour];
    if (f.route === 'source') {
      if (f.gpu === 'cuda') fail(`flavour '${flavour}' is built with --from-source --cuda`);
      buildFromSource(flavour);
      continue;
    }
    const libDir = prebuiltLibDir(root, key, f);
    if (!libDir) {
      // the CUDA package is optional (npm skips it where it has no build); the CPU one is not
      if (!flavourArg && f.gpu) {
        console.log(`power: @node-llama-cpp/${key}${f.packageSuffix} is not installed: no ${flavour} flavour`);
        continue;
      }
      fail(`@node-llama-cpp/${key}${f.packageSuffix}@3.21.1 is not installed (run npm install on ${key})`);
    }
    buildAddon(flavour, libDir, src, { cpuVariants: f.gpu ? undefined : 'prebuilt' });
  }
}
