#!/usr/bin/env node
// Builds the native addon (native/) with cmake-js against the llama.cpp release that
// node-llama-cpp@3.21.1 bundles: headers from its git bundle, libraries from the prebuilt
// @node-llama-cpp/<platform> package. Output: build/addon-<flavour>/ (power.node, the
// reference tool, the llama/ggml libraries and build-info.json). Incremental: a second run
// only recompiles what changed.
//
//   node scripts/build-native.mjs [--force] [--flavour cpu]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const args = process.argv.slice(2);
const force = args.includes('--force');
const flavourArg = args.indexOf('--flavour');
const flavour = flavourArg >= 0 ? args[flavourArg + 1] : 'cpu';

const FLAVOURS = {
  cpu: { packageSuffix: '', libSuffix: '' },
};

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

/** A package's folder, found the way Node finds packages (works whatever its "exports"). */
function packageDir(name) {
  for (const base of require.resolve.paths(name) ?? []) {
    if (existsSync(join(base, name, 'package.json'))) return join(base, name);
  }
  return null;
}

function platformKey() {
  const os = { linux: 'linux', win32: 'win', darwin: 'mac' }[process.platform];
  if (!os) fail(`unsupported platform ${process.platform}`);
  return `${os}-${process.arch}`;
}

/** Clones the llama.cpp source bundle once per release into build/llama.cpp. */
function llamaSource() {
  const pkgDir = packageDir('node-llama-cpp');
  if (!pkgDir) fail('node-llama-cpp@3.21.1 is not installed (run npm install)');
  const info = JSON.parse(readFileSync(join(pkgDir, 'llama', 'llama.cpp.info.json'), 'utf8'));
  const bundle = join(pkgDir, 'llama', 'gitRelease.bundle');
  const dir = join(root, 'build', 'llama.cpp');
  const stamp = join(dir, '.power-release');
  const want = `${info.tag} ${readFileSync(join(pkgDir, 'package.json'), 'utf8').match(/"version":\s*"([^"]+)"/)[1]}`;
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dirname(dir), { recursive: true });
    execFileSync('git', ['-c', 'advice.detachedHead=false', 'clone', '--quiet', bundle, dir], { stdio: 'inherit' });
    writeFileSync(stamp, want);
  }
  return { dir, tag: info.tag };
}

function prebuiltDir(key, f) {
  const name = `@node-llama-cpp/${key}${f.packageSuffix}`;
  const dir = packageDir(name);
  if (!dir) fail(`${name}@3.21.1 is not installed (run npm install on ${key})`);
  return join(dir, 'bins', `${key}${f.packageSuffix}`);
}

const f = FLAVOURS[flavour];
if (!f) fail(`unknown flavour '${flavour}' (known: ${Object.keys(FLAVOURS).join(', ')})`);
const key = platformKey();
const src = llamaSource();
const libDir = prebuiltDir(key, f);
const buildDir = join(root, 'build', `native-${flavour}`);
const outDir = join(root, 'build', `addon-${flavour}`);
if (force) rmSync(buildDir, { recursive: true, force: true });

// Build against the headers of the Node that runs us when they are installed (no download:
// build machines may be offline); npm's own nodedir setting wins when present.
const env = { ...process.env };
const nodePrefix = resolve(dirname(process.execPath), '..');
if (!env.npm_config_nodedir && existsSync(join(nodePrefix, 'include', 'node', 'node_api.h'))) {
  env.npm_config_nodedir = nodePrefix;
}

const cmakeJs = join(packageDir('cmake-js'), 'bin', 'cmake-js');
const addonApi = require('node-addon-api').include_dir.replace(/^"|"$/g, '');
execFileSync(
  process.execPath,
  [
    cmakeJs, 'compile',
    '--directory', join(root, 'native'),
    '--out', buildDir,
    '--config', 'Release',
    '--parallel', String(Math.max(1, cpus().length)),
    `--CDLLAMA_SRC_DIR=${src.dir}`,
    `--CDLLAMA_LIB_DIR=${libDir}`,
    `--CDLLAMA_LIB_SUFFIX=${f.libSuffix}`,
    `--CDPOWER_OUT_DIR=${outDir}`,
    `--CDNODE_ADDON_API_DIR=${resolve(root, addonApi)}`,
  ],
  { stdio: 'inherit', cwd: root, env },
);
/** The architectures this llama.cpp release can load, read from its own name table. */
function knownArchitectures() {
  const text = readFileSync(join(src.dir, 'src', 'llama-arch.cpp'), 'utf8');
  const table = text.slice(text.indexOf('LLM_ARCH_NAMES'), text.indexOf('};', text.indexOf('LLM_ARCH_NAMES')));
  const names = [...table.matchAll(/\{\s*LLM_ARCH_(\w+),\s*"([^"]+)"\s*\}/g)]
    .filter(([, id]) => id !== 'CLIP' && id !== 'UNKNOWN') // clip is a quantizer-only dummy
    .map(([, , name]) => name);
  if (names.length < 10) fail('could not read the architecture table from llama-arch.cpp');
  return names;
}

writeFileSync(
  join(outDir, 'build-info.json'),
  JSON.stringify(
    { flavour, platform: key, llamaCppRelease: src.tag, nodeLlamaCpp: '3.21.1', architectures: knownArchitectures() },
    null,
    2,
  ) + '\n',
);
console.log(`power: native addon (${flavour}) ready in ${outDir}`);
