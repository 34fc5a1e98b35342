// llama.cpp's own tools as benchmark peers: the release's source (cloned from node-llama-cpp's
// bundle into build/llama.cpp), compiled with g++ against the prebuilt libraries of an addon
// folder (libllama-common.so exports the common_* symbols the examples use), and
// llama-speculative-simple's command line and summary.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';

import { ROOT } from '../../app/paths.js';

export const LLAMA_SRC = join(ROOT, 'build', 'llama.cpp');
const BUNDLE = join(ROOT, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');

/** The prebuilt libraries a tool links against (build/addon-cpu-prebuilt). */
export const PREBUILT_LIBS = ['libllama-common.so', 'libllama.v0.4.0.so', 'libggml.v0.4.0.so', 'libggml-base.so'];

/** The include folders of the release's source every tool needs. */
export const LLAMA_INCLUDES = ['include', 'ggml/include', 'common', 'vendor'];

/**
 * The release as shipped, for peers that must run llama.cpp's own kernels (llama-server as its
 * users build it), with one change: scripts/native/patches/ggml-cpu-no-amx.patch, so that
 * GGML_CPU_AMX=OFF keeps AMX out of both sides on a Xeon that has it (Power's engine never runs it).
 */
export const LLAMA_STOCK_SRC = join(ROOT, 'build', 'llama-stock');
const NO_AMX_PATCH = join(ROOT, 'scripts', 'native', 'patches', 'ggml-cpu-no-amx.patch');

/** Clones the release's source from the bundle into `dir` (LLAMA_SRC by default) unless `probe` (a path inside it) is there. */
export function ensureLlamaSource(probe: string, fail: (message: string) => never, log?: (line: string) => void, dir = LLAMA_SRC): void {
  if (existsSync(join(dir, probe))) return;
  if (!existsSync(BUNDLE)) fail(`no llama.cpp source at ${relative(ROOT, dir)} and no ${relative(ROOT, BUNDLE)}`);
  log?.(`cloning the release source from ${relative(ROOT, BUNDLE)} into ${relative(ROOT, dir)}`);
  const c = spawnSync('git', ['clone', '--quiet', BUNDLE, dir], { stdio: 'inherit' });
  if (c.status !== 0) fail('git clone of the source bundle failed');
  if (dir === LLAMA_STOCK_SRC) {
    const p = spawnSync('git', ['apply', NO_AMX_PATCH], { cwd: dir, stdio: 'inherit' });
    if (p.status !== 0) fail(`git apply ${relative(ROOT, NO_AMX_PATCH)} failed in ${relative(ROOT, dir)}`);
  }
}

/**
 * llama.cpp's own programs (llama-server, llama-speculative-simple, ...) built by cmake from the
 * source in `src` into `build`: static, native CPU flags, no network pieces. Skipped when every
 * target's executable is there; returns the build time in seconds (0 when skipped).
 */
export function buildLlamaTools(
  o: { src: string; build: string; targets: readonly string[]; defs?: Readonly<Record<string, string>> },
  fail: (message: string) => never,
): number {
  if (o.targets.every((t) => existsSync(join(o.build, 'bin', t)))) return 0;
  const defs: Record<string, string> = {
    CMAKE_BUILD_TYPE: 'Release',
    BUILD_SHARED_LIBS: 'OFF',
    GGML_NATIVE: 'ON',
    LLAMA_CURL: 'OFF',
    LLAMA_OPENSSL: 'OFF',
    LLAMA_BUILD_TESTS: 'OFF',
    LLAMA_BUILD_UI: 'OFF',
    LLAMA_USE_PREBUILT_UI: 'OFF',
    ...o.defs,
  };
  const configure = ['-S', o.src, '-B', o.build, ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)];
  if (spawnSync('ninja', ['--version']).status === 0) configure.push('-G', 'Ninja');
  const started = performance.now();
  for (const args of [configure, ['--build', o.build, '--target', ...o.targets, '-j', String(cpus().length)]]) {
    // cmake's progress to stderr: a bench's stdout is its table
    const r = spawnSync('cmake', args, { stdio: ['ignore', 2, 2] });
    if (r.status !== 0) fail(`cmake ${args.slice(0, 2).join(' ')} failed`);
  }
  return (performance.now() - started) / 1000;
}

export interface PrebuiltTool {
  /** sources (absolute paths) */
  sources: readonly string[];
  exe: string;
  /** the folder of the prebuilt libraries */
  libDir: string;
  /** include folders inside LLAMA_SRC besides LLAMA_INCLUDES */
  includes?: readonly string[];
  /** g++ optimization flag (default -O2) */
  opt?: string;
  /** rpath: relative to the executable ($ORIGIN/..., the default) or the libraries' absolute folder */
  rpath?: 'origin' | 'absolute';
}

/**
 * Compiles a tool with g++ against the prebuilt libraries, unless the executable is newer than its
 * sources and the libraries. Returns the build time in ms, or null when it was up to date.
 */
export function compileAgainstPrebuilt(tool: PrebuiltTool, fail: (message: string) => never): number | null {
  for (const lib of PREBUILT_LIBS)
    if (!existsSync(join(tool.libDir, lib))) fail(`${lib} is missing in ${tool.libDir} (build the addon first)`);
  const newest = Math.max(
    ...tool.sources.map((s) => statSync(s).mtimeMs),
    ...PREBUILT_LIBS.map((l) => statSync(join(tool.libDir, l)).mtimeMs),
  );
  if (existsSync(tool.exe) && statSync(tool.exe).mtimeMs >= newest) return null;
  mkdirSync(dirname(tool.exe), { recursive: true });
  const rpath = tool.rpath === 'absolute' ? tool.libDir : `$ORIGIN/${relative(dirname(tool.exe), tool.libDir)}`;
  const started = performance.now();
  const r = spawnSync(
    'g++',
    [
      '-std=c++17',
      tool.opt ?? '-O2',
      ...[...LLAMA_INCLUDES, ...(tool.includes ?? [])].map((d) => `-I${join(LLAMA_SRC, d)}`),
      ...tool.sources,
      '-o',
      tool.exe,
      `-L${tool.libDir}`,
      ...PREBUILT_LIBS.map((l) => `-l:${l}`),
      `-Wl,-rpath,${rpath}`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) fail(`building ${basename(tool.exe)} failed:\n${r.stderr}`);
  return performance.now() - started;
}

/** The source of llama.cpp's llama-speculative-simple example. */
const SPECULATIVE_SIMPLE_SRC = join(LLAMA_SRC, 'examples', 'speculative-simple', 'speculative-simple.cpp');

/**
 * llama-speculative-simple compiled into `o.exe` against the prebuilt libraries in `o.libDir`
 * (compileAgainstPrebuilt), its source cloned from the bundle first when missing. Returns the
 * build time in ms, or null when it was up to date.
 */
export function compileSpeculativeSimple(
  o: Omit<PrebuiltTool, 'sources'> & { log?: (line: string) => void },
  fail: (message: string) => never,
): number | null {
  ensureLlamaSource(relative(LLAMA_SRC, SPECULATIVE_SIMPLE_SRC), fail, o.log);
  return compileAgainstPrebuilt({ ...o, sources: [SPECULATIVE_SIMPLE_SRC] }, fail);
}

/** llama-speculative-simple's arguments: greedy, the draft-simple speculator at `k`, both models on `threads`. */
export function speculativeSimpleArgs(o: {
  target: string;
  draft: string;
  text: string;
  tokens: number;
  ctx: number;
  threads: number;
  k: number;
  poll0: boolean;
}): string[] {
  const args = [
    '-m',
    o.target,
    '-md',
    o.draft,
    '-p',
    o.text,
    '-n',
    String(o.tokens),
    '-c',
    String(o.ctx),
    '-t',
    String(o.threads),
    '-td',
    String(o.threads),
    '--spec-type',
    'draft-simple',
    '--spec-draft-n-max',
    String(o.k),
    '--temp',
    '0',
    '--seed',
    '0',
  ];
  // its default threadpools busy-wait (poll 50) between graphs; with a target and a draft pool
  // that leaves an idle pool spinning on a core the busy one needs
  if (o.poll0) args.push('--poll', '0', '--poll-batch', '0', '--poll-draft', '0', '--poll-batch-draft', '0');
  return args;
}

export interface SpeculativeSimpleSummary {
  /** "decoded N tokens in T seconds, speed: R t/s" */
  tokens: number;
  decodeSeconds: number;
  decode: number;
  /** n_drafted, n_accept (null when the log has none) */
  drafted: number | null;
  accepted: number | null;
  /** the target's "prompt eval time" */
  targetEvalMs: number | null;
}

/** What llama-speculative-simple's log (stderr) says of its run; null without its "decoded" line. */
export function parseSpeculativeSimple(log: string): SpeculativeSimpleSummary | null {
  const d = /decoded\s+(\d+) tokens in\s+([\d.]+) seconds, speed:\s+([\d.]+) t\/s/.exec(log);
  if (!d) return null;
  const drafted = /n_drafted\s*=\s*(\d+)/.exec(log);
  const accepted = /n_accept\s*=\s*(\d+)/.exec(log);
  const targetEval = /prompt eval time =\s+([\d.]+) ms \/\s+(\d+) tokens/.exec(log);
  return {
    tokens: Number(d[1]),
    decodeSeconds: Number(d[2]),
    decode: Number(d[3]),
    drafted: drafted ? Number(drafted[1]) : null,
    accepted: accepted ? Number(accepted[1]) : null,
    targetEvalMs: targetEval ? Number(targetEval[1]) : null,
  };
}
