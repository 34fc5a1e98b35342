// Engine speed benchmark (issues #3 and #8): on one synthetic target/draft pair (F16, and its
// Q8_0 and Q4_0 quantizations made with llama.cpp's own llama-quantize), in one interleaved run:
//   - Power autoregressive at default settings vs the bare C-API loop (power-bench-loop) at its
//     best thread count and threadpool mode;
//   - Power draft-model K at default settings vs llama-speculative-simple at its best threads and
//     --poll, and vs Power autoregressive;
//   - host overhead per round from Power's own round records;
//   - the suspects of issue #8 (JS work per round, threadpools, thread count, spinning pools).
// Figures are medians over prompts and ratios inside one run, so the machine's drift cancels out.
//
//   node --import tsx bench/speculative.ts [--out DIR] [--tokens N] [--prompts N] [--types f16,q8_0,q4_0] [--k K]
//                                          [--threads 1,2] [--reps R] [--write] [--no-llama] [--no-profile]
//                                          [--force-models] [--no-priority]
//
// Needs dist/ (bin/power.js runs the compiled CLI) and the addon (build/addon-<POWER_FLAVOUR or
// cpu-prebuilt>, with power-bench-loop). See bench/README.md.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { cpus, getPriority, setPriority } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

import type { SamplingOptions } from '../app/contract/engine-types.js';
import type { Tokens } from '../app/engine/protocol.js';
import type { GenerationResult } from '../app/contract/generation-result.js';
import type { EngineHostProcess } from '../app/engine/launcher.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { ROOT } from '../app/paths.js';
import { writeGguf } from '../tools/gguf/writer.js';
import { BENCH_MODELS, GENERATOR_VERSION, makeModelSpec, specHash } from '../tools/models/synthetic.js';
import { benchOptions } from './lib/args.js';
import { childPid, mainThreadCpuMs } from './lib/cpu-time.js';
import { fixed, percent, times } from './lib/format.js';
import { compileAgainstPrebuilt, compileSpeculativeSimple, LLAMA_SRC, parseSpeculativeSimple, speculativeSimpleArgs } from './lib/llama.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { PROMPTS } from './lib/prompts.js';
import { benchCommand, FLASH_ATTN_HEADING, RESULTS_CPU_MD, SERVE_STREAM_HEADING, writeHead } from './lib/results.js';
import { failer, POWER_BIN, requireDist, run } from './lib/run.js';
import { medianOf, medianRatio } from './lib/stats.js';

// the prebuilt libraries by default: they carry libllama-common.so, which the llama.cpp peers link
// against, so Power and its peers run the same llama.cpp build
const FLAVOUR = process.env.POWER_FLAVOUR ?? 'cpu-prebuilt';
const ADDON_DIR = join(ROOT, `build/addon-${FLAVOUR}`);
const LLAMA_EXE = join(ROOT, 'build/bench/llama-speculative-simple');
const QUANTIZE_EXE = join(ROOT, 'build/bench/llama-quantize');
const BARE_EXE = join(ADDON_DIR, 'power-bench-loop');
const CTX = 2048;
const TYPES = ['f16', 'q8_0', 'q4_0'] as const;
type ModelType = (typeof TYPES)[number];

const USAGE = `${benchCommand('speculative')} [options]
  --out DIR        where the benchmark models and last-run.json go (default .cache/bench)
  --tokens N       tokens generated per request (default 128)
  --prompts N      prompts, 1..${PROMPTS.length} (default 4)
  --types LIST     model types, of ${TYPES.join(', ')} (default all three; the first is the headline)
  --k K            draft width for both engines (default 4)
  --threads LIST   thread counts the peers (bare loop, llama-speculative-simple) are swept over, and
                   Power is also run at besides its default (default 1,2)
  --reps R         run every configuration R times per prompt and keep its fastest run (default 1)
  --write          also write the Markdown summary to bench/RESULTS-cpu.md
  --no-llama       skip llama-speculative-simple
  --no-profile     skip the engine-direct part (JS work per round, threadpool polling)
  --force-models   regenerate the benchmark models
  --no-priority    keep the normal CPU priority (by default the bench and every engine it starts
                   run at nice -10 when allowed: on a shared machine, another busy process makes
                   ggml's spinning thread barriers collapse and a 2-thread step 5-50x slower)
Environment: POWER_FLAVOUR picks the addon flavour (default cpu-prebuilt, the libraries the llama.cpp peers link against).`;

// ---------------------------------------------------------------- small helpers

const fail: (message: string) => never = failer('bench');

function intList(text: string, name: string): number[] {
  const list = String(text)
    .split(',')
    .map((x) => Number(x.trim()));
  if (list.length === 0 || list.some((x) => !Number.isInteger(x) || x < 1 || x > 64)) fail(`--${name}: bad list "${text}"`);
  return list;
}

// ---------------------------------------------------------------- 1. models

/** Builds tools/quantize from the release's source against the prebuilt libraries (libllama-common.so has common/). */
function ensureQuantize(): void {
  const dir = join(LLAMA_SRC, 'tools/quantize');
  const srcs = [join(dir, 'main.cpp'), join(dir, 'quantize.cpp')];
  if (!srcs.every((s) => existsSync(s))) fail(`no ${relative(ROOT, dir)} sources (clone the release bundle into build/llama.cpp)`);
  const built = compileAgainstPrebuilt(
    { sources: srcs, exe: QUANTIZE_EXE, libDir: ADDON_DIR, includes: ['tools/quantize'], opt: '-O1' },
    fail,
  );
  if (built !== null) console.log(`  built     ${relative(ROOT, QUANTIZE_EXE)} (g++, linked to the prebuilt libraries)`);
}

interface Pair {
  target: string;
  draft: string;
}

interface TypeModels extends Pair {
  targetBytes: number;
  draftBytes: number;
  layers: { target: number; draft: number };
}

type Role = 'target' | 'draft';

interface Manifest {
  generator: number;
  files: Record<string, { key: string; size: number } | undefined>;
}

/**
 * The benchmark pair, once per type: F16 from our GGUF writer (`BENCH_MODELS` with dtype f16), Q8_0
 * and Q4_0 from the F16 files with llama.cpp's llama-quantize. Cached in `outDir` by the
 * generator's spec hash (and the quantization type).
 */
async function ensureModels(outDir: string, types: readonly ModelType[], force: boolean): Promise<Record<ModelType, TypeModels>> {
  await mkdir(outDir, { recursive: true });
  const manifestPath = join(outDir, 'manifest.json');
  let manifest: Manifest = { generator: GENERATOR_VERSION, files: {} };
  try {
    const parsed = JSON.parse(await readFile(manifestPath, 'utf8')) as Partial<Manifest>;
    if (parsed.generator === GENERATOR_VERSION && parsed.files) manifest = parsed as Manifest;
  } catch {
    // no cache yet
  }
  const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : -1);
  const remember = async (file: string, key: string): Promise<void> => {
    manifest.files[file] = { key, size: sizeOf(join(outDir, file)) };
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  };
  const fresh = (file: string, key: string): boolean =>
    !force && manifest.files[file]?.key === key && manifest.files[file].size === sizeOf(join(outDir, file));
  const out: Partial<Record<ModelType, TypeModels>> = {};
  for (const role of ['target', 'draft'] as const satisfies readonly Role[]) {
    const { params } = BENCH_MODELS[`bench-${role}.gguf`];
    const f16 = { ...params, dtype: 'f16' as const };
    const f16File = `bench-${role}-f16.gguf`;
    const f16Key = specHash(f16);
    if (fresh(f16File, f16Key)) {
      console.log(`  cached    ${f16File}`);
    } else {
      const tmp = join(outDir, `${f16File}.tmp-${process.pid}`);
      try {
        await writeGguf(tmp, makeModelSpec(f16));
        await rename(tmp, join(outDir, f16File));
      } catch (error) {
        await rm(tmp, { force: true });
        throw error;
      }
      await remember(f16File, f16Key);
      console.log(`  generated ${f16File}`);
    }
    for (const type of types) {
      const file = `bench-${role}-${type}.gguf`;
      if (type !== 'f16') {
        const key = `${f16Key}:${type}`;
        if (fresh(file, key)) {
          console.log(`  cached    ${file}`);
        } else {
          ensureQuantize();
          const tmp = join(outDir, `${file}.tmp-${process.pid}`);
          const r = spawnSync(QUANTIZE_EXE, [join(outDir, f16File), tmp, type.toUpperCase()], { encoding: 'utf8', cwd: ADDON_DIR });
          if (r.status !== 0) fail(`llama-quantize ${type} failed:\n${r.stderr.slice(-2000)}`);
          await rename(tmp, join(outDir, file));
          await remember(file, key);
          console.log(`  quantized ${file} (llama-quantize ${type.toUpperCase()})`);
        }
      }
      const entry = (out[type] ??= { target: '', draft: '', targetBytes: -1, draftBytes: -1, layers: { target: 0, draft: 0 } });
      entry[role] = join(outDir, file);
      entry[role === 'target' ? 'targetBytes' : 'draftBytes'] = sizeOf(join(outDir, file));
      entry.layers[role] = params.layers;
    }
  }
  return out as Record<ModelType, TypeModels>;
}

// ---------------------------------------------------------------- 2. llama-speculative-simple

/**
 * Builds examples/speculative-simple from the release's source (build/llama.cpp) against the
 * prebuilt libraries of the addon folder, common/ included (libllama-common.so exports every
 * common_* symbol the example uses). Rebuilt when the source or the libraries are newer.
 */
function ensureLlamaSpeculative(): void {
  const builtMs = compileSpeculativeSimple({ exe: LLAMA_EXE, libDir: ADDON_DIR, log: (line) => console.log(`  ${line}`) }, fail);
  if (builtMs === null) console.log(`  up to date ${relative(ROOT, LLAMA_EXE)}`);
  else
    console.log(
      `  built     ${relative(ROOT, LLAMA_EXE)} in ${(builtMs / 1000).toFixed(1)} s (g++, linked to the prebuilt libllama-common.so)`,
    );
}

// ---------------------------------------------------------------- 3. one measurement

interface Overhead {
  share: number;
  perRoundMs: number;
  roundMs: number;
}

interface PowerFigures {
  tokens: number[];
  digest: string;
  text: string;
  decode: number | null;
  steady: number | null;
  request: number | null;
  acceptance: number | null;
  meanLength: number | null;
  overhead: Overhead | null;
}

interface BareFigures {
  tokens: number[];
  decode: number;
  stepMs: number;
}

interface LlamaFigures {
  tokens: number;
  decodeSeconds: number;
  decode: number;
  acceptance: number | null;
  drafted: number;
  accepted: number;
  targetEvalMs: number | null;
  stdout: string;
}

type JsonRound = { endUs: number; proposeUs: number; verifyUs: number; commitUs: number };

/**
 * `power generate --json --rounds` once (threads: null = the engine's default). Decode rate over
 * everything after the first token, as for the peers; host overhead from the round records.
 */
async function runPower(
  pair: Pair,
  promptTokens: readonly number[],
  { tokens, threads, k }: { tokens: number; threads: number | null; k: number },
): Promise<PowerFigures> {
  const args = [
    POWER_BIN,
    'generate',
    '--model',
    pair.target,
    '--prompt-tokens',
    promptTokens.join(','),
    '--max-tokens',
    String(tokens),
    '--ctx',
    String(CTX),
    '--json',
    '--rounds',
  ];
  if (threads) args.push('--threads', String(threads));
  if (k) args.push('--strategy', 'draft-model', '--draft', pair.draft, '--k', String(k));
  else args.push('--strategy', 'none');
  const r = await run(process.execPath, args);
  if (r.code !== 0) fail(`power generate failed (${r.code}): ${r.stderr.trim()}`);
  const j = JSON.parse(r.stdout) as GenerationResult & { rounds: JsonRound[] };
  const s = j.stats;
  const n = j.tokens.length;
  const totalMs = s.requestTokensPerSecond ? (n / s.requestTokensPerSecond) * 1000 : null;
  const decodeMs = totalMs !== null && s.ttftMs !== null ? totalMs - s.ttftMs : null;
  return {
    tokens: j.tokens,
    digest: j.digest,
    text: j.text,
    decode: decodeMs !== null && decodeMs > 0 ? ((n - 1) * 1000) / decodeMs : null,
    steady: s.steadyDecodeTokensPerSecond,
    request: s.requestTokensPerSecond,
    acceptance: s.acceptanceRate,
    meanLength: s.meanAcceptanceLength,
    overhead: hostOverhead(j.rounds),
  };
}

/**
 * Host overhead per round over the steady rounds (after the two warm-up ones): round wall time
 * (end to end) minus its propose, verify and commit steps, as a share of the wall time. What is
 * left is the engine's own bookkeeping between steps: recording the round, handing it to the
 * stream, the next round's set-up (and any stall of the generation thread).
 */
function hostOverhead(rounds: readonly JsonRound[]): Overhead | null {
  let wall = 0;
  let steps = 0;
  for (let i = 2; i < rounds.length; i++) {
    const round = rounds[i]!;
    wall += round.endUs - rounds[i - 1]!.endUs;
    steps += round.proposeUs + round.verifyUs + round.commitUs;
  }
  const n = Math.max(0, rounds.length - 2);
  return wall > 0 ? { share: (wall - steps) / wall, perRoundMs: (wall - steps) / n / 1000, roundMs: wall / n / 1000 } : null;
}

/** The bare C-API loop once (native/tools/bench_loop.cpp). */
async function runBare(
  pair: Pair,
  promptTokens: readonly number[],
  { tokens, threads, mode }: { tokens: number; threads: number; mode: string },
): Promise<BareFigures> {
  const r = await run(BARE_EXE, [pair.target, String(tokens), String(CTX), promptTokens.join(','), String(threads), mode], {
    cwd: ADDON_DIR,
  });
  if (r.code !== 0) fail(`power-bench-loop failed (${r.code}): ${r.stderr.trim()}`);
  const j = JSON.parse(r.stdout) as { tokens: number[]; decodeTokensPerSecond: number; stepMsMedian: number };
  return { tokens: j.tokens, decode: j.decodeTokensPerSecond, stepMs: j.stepMsMedian };
}

/** llama-speculative-simple once, from the folder of the prebuilt libraries (ggml finds its CPU backends there). */
async function runLlama(
  models: Pair,
  text: string,
  { tokens, threads, k, poll0 }: { tokens: number; threads: number; k: number; poll0: boolean },
): Promise<LlamaFigures> {
  const args = speculativeSimpleArgs({ target: models.target, draft: models.draft, text, tokens, ctx: CTX, threads, k, poll0 });
  const r = await run(LLAMA_EXE, args, { cwd: ADDON_DIR });
  if (r.code !== 0) fail(`llama-speculative-simple failed (${r.code}): ${r.stderr.trim().split('\n').slice(-5).join('\n')}`);
  const s = parseSpeculativeSimple(r.stderr);
  if (!s || s.drafted === null || s.accepted === null) fail(`could not read llama-speculative-simple's summary:\n${r.stderr.slice(-2000)}`);
  return {
    tokens: s.tokens,
    decodeSeconds: s.decodeSeconds,
    decode: s.decode,
    acceptance: s.drafted > 0 ? s.accepted / s.drafted : null,
    drafted: s.drafted,
    accepted: s.accepted,
    targetEvalMs: s.targetEvalMs,
    stdout: r.stdout,
  };
}

// ---------------------------------------------------------------- 4. the engine driven directly

const POLL_LEVELS = [0, 1, 50] as const;

interface Profile {
  promptTokens: number[][];
  defaultThreads: number;
  js?: { hostPerRound: number | null; callerPerRound: number; roundMs: number; rounds: number; roundsPerMessage: number | null };
  poll?: { threads: number; levels: Record<number, (number | null)[]> };
}

/**
 * Drives the engine directly (one host, models loaded once): tokenizes the prompts, learns the
 * default thread count, measures the JS work per round (the engine host's JS thread and this
 * process, while draft-model requests run at default settings) and the steady rate of the
 * session threadpool's polling levels at the highest thread count.
 */
async function profile(
  pair: Pair,
  promptTexts: readonly string[],
  { tokens, k, pollThreads, generate }: { tokens: number; k: number; pollThreads: number; generate: boolean },
): Promise<Profile> {
  const engine = EngineClient.start({ flavour: FLAVOUR });
  const sampling: SamplingOptions = {
    temperature: 0,
    seed: 0,
    topK: 40,
    topP: 0.95,
    minP: 0.05,
    repeatPenalty: 1,
    repeatLastN: 64,
    presencePenalty: 0,
    frequencyPenalty: 0,
    path: 'cpu',
  };
  try {
    await engine.call('hello', {});
    const target = await engine.call('loadModel', { path: pair.target });
    const draft = await engine.call('loadModel', { path: pair.draft });
    const prompts: Tokens[] = [];
    for (const text of promptTexts) {
      const ids = await engine.call('tokenize', { modelId: target.modelId, text, addSpecial: true, parseSpecial: true });
      prompts.push(Int32Array.from(ids));
    }
    const spec = await engine.call('createSession', {
      modelId: target.modelId,
      contextSize: CTX,
      strategy: 'draft-model',
      k,
      s: k,
      draftModelId: draft.modelId,
    });
    const out: Profile = { promptTokens: prompts.map((p) => Array.from(p)), defaultThreads: spec.threads };
    if (!generate) return out;

    // JS work per round: CPU of the host's JS thread and of this process while the requests run
    const hostPid = childPid('app/engine-host/host');
    const js = { hostMs: 0, benchMs: 0, rounds: 0, wallMs: 0, messages: 0 };
    // IPC messages that carry rounds: the channel's `engine.onRounds` events (app/engine/protocol.ts;
    // the client's child process is private to TypeScript only, and the launcher's host process
    // has onMessage and no off: count while `counting`)
    let counting = true;
    (engine as unknown as { child: EngineHostProcess }).child.onMessage((m) => {
      if (counting && (m as { event?: unknown } | null)?.event === 'engine.onRounds') js.messages++;
    });
    for (const prompt of prompts) {
      const host0 = hostPid ? mainThreadCpuMs(hostPid) : null;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const b = await runRequest(engine, { sessionId: spec.sessionId, prompt, maxTokens: tokens, sampling });
      js.wallMs += performance.now() - t0;
      const cpu1 = process.cpuUsage(cpu0);
      const host1 = hostPid ? mainThreadCpuMs(hostPid) : null;
      if (host0 !== null && host1 !== null) js.hostMs += host1 - host0;
      js.benchMs += (cpu1.user + cpu1.system) / 1000;
      js.rounds += b.rounds.length;
    }
    counting = false;
    out.js = {
      hostPerRound: hostPid ? js.hostMs / js.rounds : null,
      callerPerRound: js.benchMs / js.rounds,
      roundMs: js.wallMs / js.rounds,
      rounds: js.rounds,
      roundsPerMessage: js.messages ? js.rounds / js.messages : null,
    };
    await engine.call('disposeSession', { sessionId: spec.sessionId });

    // the session pool's polling level, draft-model K at `pollThreads` threads (one shared pool;
    // at 1 thread the pool has no workers and nothing polls)
    if (pollThreads < 2) return out;
    const poll: NonNullable<Profile['poll']> = { threads: pollThreads, levels: {} };
    out.poll = poll;
    for (const level of POLL_LEVELS) {
      const s = await engine.call('createSession', {
        modelId: target.modelId,
        contextSize: CTX,
        strategy: 'draft-model',
        k,
        s: k,
        draftModelId: draft.modelId,
        threads: pollThreads,
        threadpoolPoll: level,
      });
      const rates: (number | null)[] = [];
      for (const prompt of prompts) {
        const r = await runRequest(engine, { sessionId: s.sessionId, prompt, maxTokens: tokens, sampling });
        rates.push(r.stats.steadyDecodeTokensPerSecond);
      }
      poll.levels[level] = rates;
      await engine.call('disposeSession', { sessionId: s.sessionId });
    }
    return out;
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------- 5. report

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

type Config =
  | { key: string; runner: 'bare'; threads: number; mode: string; label: string; settings: string }
  | { key: string; runner: 'power'; threads: number | null; k: number; label: string; settings: string }
  | { key: string; runner: 'llama'; threads: number; poll0: boolean; label: string; settings: string };

/** The configurations run for each prompt of each type, back to back (order rotated per prompt). */
function configsFor({
  threadList,
  k,
  defaultThreads,
  withLlama,
}: {
  threadList: readonly number[];
  k: number;
  defaultThreads: number;
  withLlama: boolean;
}): Config[] {
  const list: Config[] = [];
  for (const t of threadList) {
    list.push({
      key: `bare-t${t}`,
      runner: 'bare',
      threads: t,
      mode: 'auto',
      label: 'bare C-API loop',
      settings: `${t} thr, llama.cpp's per-graph threads`,
    });
    if (t > 1)
      list.push({
        key: `bare-t${t}-pool`,
        runner: 'bare',
        threads: t,
        mode: 'pool:1',
        label: 'bare C-API loop',
        settings: `${t} thr, persistent pool, poll 1`,
      });
  }
  list.push({
    key: 'ar',
    runner: 'power',
    threads: null,
    k: 0,
    label: 'Power autoregressive',
    settings: `default (${defaultThreads} thr)`,
  });
  for (const t of threadList)
    if (t !== defaultThreads)
      list.push({ key: `ar-t${t}`, runner: 'power', threads: t, k: 0, label: 'Power autoregressive', settings: `--threads ${t}` });
  list.push({
    key: 'spec',
    runner: 'power',
    threads: null,
    k,
    label: `Power draft-model K${k}`,
    settings: `default (${defaultThreads} thr)`,
  });
  for (const t of threadList)
    if (t !== defaultThreads)
      list.push({ key: `spec-t${t}`, runner: 'power', threads: t, k, label: `Power draft-model K${k}`, settings: `--threads ${t}` });
  if (withLlama) {
    for (const t of threadList) {
      list.push({
        key: `llama-t${t}`,
        runner: 'llama',
        threads: t,
        poll0: false,
        label: `llama-speculative-simple K${k}`,
        settings: `-t ${t}${t > 1 ? ', default --poll 50' : ''}`,
      });
      if (t > 1)
        list.push({
          key: `llama-t${t}-p0`,
          runner: 'llama',
          threads: t,
          poll0: true,
          label: `llama-speculative-simple K${k}`,
          settings: `-t ${t}, --poll 0`,
        });
    }
  }
  return list;
}

type Entry = { type: ModelType; prompt: number; key: string; load: number; matchesAr?: boolean } & (
  ({ runner: 'power' } & PowerFigures) | ({ runner: 'bare' } & BareFigures) | ({ runner: 'llama' } & LlamaFigures)
);

async function main(): Promise<void> {
  const values = benchOptions(
    { out: '.cache/bench', tokens: '128', prompts: '4', types: TYPES.join(','), k: '4', threads: '1,2', reps: '1' },
    ['write', 'no-llama', 'no-profile', 'force-models', 'no-priority', 'help'],
  );
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const tokens = Number(values.tokens);
  const nPrompts = Number(values.prompts);
  const k = Number(values.k);
  if (!Number.isInteger(tokens) || tokens < 8 || tokens > 1024) fail('--tokens must be an integer in [8, 1024]');
  if (!Number.isInteger(nPrompts) || nPrompts < 1 || nPrompts > PROMPTS.length) fail(`--prompts must be in [1, ${PROMPTS.length}]`);
  if (!Number.isInteger(k) || k < 1 || k > 16) fail('--k must be in [1, 16]');
  if (!['1', '2', '3', '4', '5'].includes(values.reps)) fail('--reps must be 1..5');
  const typeNames = values.types.split(',').map((t) => t.trim());
  const isType = (t: string): t is ModelType => (TYPES as readonly string[]).includes(t);
  if (typeNames.length === 0 || !typeNames.every(isType)) fail(`--types: a list of ${TYPES.join(', ')}`);
  const types = typeNames as ModelType[];
  const threadList = intList(values.threads, 'threads');
  const withLlama = !values['no-llama'];
  requireDist(fail);
  if (!existsSync(BARE_EXE)) fail(`${relative(ROOT, BARE_EXE)} is missing: build the addon (npm run build:native)`);
  const started = performance.now();
  let priority = 'normal (nice 0)';
  if (!values['no-priority']) {
    try {
      setPriority(0, -10); // children (engine hosts, the peers) inherit it
      priority = `raised (nice ${getPriority(0)})`;
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      priority = `normal (could not raise it: ${e.code ?? e.message})`;
    }
  }
  const uptime = (): string => spawnSync('uptime', [], { encoding: 'utf8' }).stdout.trim();
  const uptimeBefore = uptime();
  console.log(`CPU priority ${priority}; ${uptimeBefore}`);

  console.log('models:');
  const outDir = resolve(ROOT, values.out);
  const models = await ensureModels(outDir, types, values['force-models']);
  if (withLlama) {
    console.log('llama-speculative-simple:');
    ensureLlamaSpeculative();
  }
  const texts = PROMPTS.slice(0, nPrompts);
  const head = types[0]!;
  const generate = !values['no-profile'];
  const pollThreads = Math.max(...threadList);
  console.log(
    generate
      ? `engine driven directly (${head}: JS work per round${pollThreads > 1 ? `, threadpool polling at ${pollThreads} threads` : ''})...`
      : 'tokenizing the prompts...',
  );
  const prof = await profile(models[head], texts, { tokens, k, pollThreads, generate });
  const configs = configsFor({ threadList, k, defaultThreads: prof.defaultThreads, withLlama });

  const results: Entry[] = [];
  const reps = Number(values.reps);
  for (const type of types) {
    for (let p = 0; p < texts.length; p++) {
      const order = configs.map((_, i) => configs[(i + p) % configs.length]!);
      const best = new Map<string, Entry>();
      for (let rep = 0; rep < reps; rep++) {
        for (const c of order) {
          const base = { type, prompt: p, key: c.key };
          let entry: Entry;
          if (c.runner === 'power') {
            const figures = await runPower(models[type], prof.promptTokens[p]!, { tokens, threads: c.threads, k: c.k });
            entry = { ...base, runner: c.runner, load: load1(), ...figures };
          } else if (c.runner === 'bare') {
            const figures = await runBare(models[type], prof.promptTokens[p]!, { tokens, threads: c.threads, mode: c.mode });
            entry = { ...base, runner: c.runner, load: load1(), ...figures };
          } else {
            const figures = await runLlama(models[type], texts[p]!, { tokens, threads: c.threads, k, poll0: c.poll0 });
            entry = { ...base, runner: c.runner, load: load1(), ...figures };
          }
          const kept = best.get(c.key);
          if (!kept || (entry.decode ?? 0) > (kept.decode ?? 0)) best.set(c.key, entry);
          process.stdout.write(
            `  ${type} prompt ${p + 1}/${texts.length}${reps > 1 ? ` rep ${rep + 1}` : ''} ${c.label} [${c.settings}]: ${fixed(entry.decode, 1)} tok/s\n`,
          );
        }
      }
      for (const c of configs) results.push(best.get(c.key)!);
    }
  }

  // checks: Power's draft-model tokens equal Power AR's (digest), the bare loop's tokens equal
  // Power AR's, and llama-speculative-simple's text contains Power AR's
  const find = (type: ModelType, prompt: number, key: string): Entry | undefined =>
    results.find((r) => r.type === type && r.prompt === prompt && r.key === key);
  for (const r of results) {
    const ar = find(r.type, r.prompt, 'ar');
    if (ar?.runner !== 'power') fail(`no Power autoregressive run for ${r.type} prompt ${r.prompt + 1}`);
    r.matchesAr =
      r.runner === 'power'
        ? r.digest === ar.digest
        : r.runner === 'bare'
          ? r.tokens.join(',') === ar.tokens.join(',')
          : r.stdout.includes(ar.text);
  }
  const byKey = (type: ModelType, key: string): Entry[] => results.filter((r) => r.type === type && r.key === key);
  const steady = (r: Entry): number | null => (r.runner === 'power' ? r.steady : null);
  const medianFor = (type: ModelType, key: string, field: (r: Entry) => number | null = (r) => r.decode): number | null =>
    medianOf(byKey(type, key).map(field));
  const perPromptRatio = (type: ModelType, a: string, b: string): number | null =>
    medianRatio(texts.map((_, p) => [find(type, p, a)?.decode, find(type, p, b)?.decode] as const));
  const bestOf = (type: ModelType, runner: Config['runner']): string => {
    const keys = configs.filter((c) => c.runner === runner).map((c) => c.key);
    return keys.reduce((a, b) => ((medianFor(type, b) ?? 0) > (medianFor(type, a) ?? 0) ? b : a));
  };
  const overhead = (r: Entry): Overhead | null | undefined => (r.runner === 'power' ? r.overhead : undefined);

  const rows: string[][] = [];
  const summary: Partial<
    Record<
      ModelType,
      {
        bareBest: string;
        arVsBare: number | null;
        llamaBest: string | null;
        specVsLlama: number | null;
        specVsAr: number | null;
        overheadAr: number | null;
        overheadSpec: number | null;
        overheadSpecMs: number | null;
        specRoundMs: number | null;
        poolVsAuto: { t: number; r: number | null }[];
        arThreads: { t: number; r: number | null; s: number | null }[];
        llamaPoll: { t: number; r: number | null }[];
      }
    >
  > = {};
  for (const type of types) {
    for (const c of configs) {
      const rs = byKey(type, c.key);
      rows.push([
        type,
        c.label,
        c.settings,
        fixed(medianFor(type, c.key), 1),
        c.runner === 'power' ? fixed(medianFor(type, c.key, steady), 1) : '-',
        c.runner === 'power' ? percent(medianOf(rs.map((r) => overhead(r)?.share))) : '-',
        (c.runner === 'power' && c.k) || c.runner === 'llama'
          ? percent(medianFor(type, c.key, (r) => (r.runner === 'bare' ? null : r.acceptance)))
          : '-',
        c.key === 'ar' ? 'control' : `${rs.filter((r) => r.matchesAr).length}/${rs.length}`,
      ]);
    }
    const bareBest = bestOf(type, 'bare');
    const llamaBest = withLlama ? bestOf(type, 'llama') : null;
    const label = (key: string): Config => configs.find((c) => c.key === key)!;
    summary[type] = {
      bareBest: `${label(bareBest).settings}`,
      arVsBare: perPromptRatio(type, 'ar', bareBest),
      llamaBest: llamaBest ? label(llamaBest).settings : null,
      specVsLlama: llamaBest ? perPromptRatio(type, 'spec', llamaBest) : null,
      specVsAr: perPromptRatio(type, 'spec', 'ar'),
      overheadAr: medianOf(byKey(type, 'ar').map((r) => overhead(r)?.share)),
      overheadSpec: medianOf(byKey(type, 'spec').map((r) => overhead(r)?.share)),
      overheadSpecMs: medianOf(byKey(type, 'spec').map((r) => overhead(r)?.perRoundMs)),
      specRoundMs: medianOf(byKey(type, 'spec').map((r) => overhead(r)?.roundMs)),
      poolVsAuto: threadList.filter((t) => t > 1).map((t) => ({ t, r: perPromptRatio(type, `bare-t${t}-pool`, `bare-t${t}`) })),
      arThreads: threadList
        .filter((t) => t !== prof.defaultThreads)
        .map((t) => ({ t, r: perPromptRatio(type, `ar-t${t}`, 'ar'), s: perPromptRatio(type, `spec-t${t}`, 'spec') })),
      llamaPoll: withLlama
        ? threadList.filter((t) => t > 1).map((t) => ({ t, r: perPromptRatio(type, `llama-t${t}`, `llama-t${t}-p0`) }))
        : [],
    };
  }
  const mainTable = table(
    ['type', 'runner', 'settings', 'decode tok/s', 'steady tok/s', 'host overhead / round', 'acceptance', 'tokens = Power AR'],
    rows,
  );

  const verdict = (x: number | null | undefined, target: number, more = true): string =>
    x === null || x === undefined ? 'not measured' : (more ? x >= target : x <= target) ? 'met' : 'NOT met';
  const ratioRows = types.map((type) => {
    const s = summary[type]!;
    return [
      type,
      `${times(s.arVsBare)} (bare best: ${s.bareBest})`,
      withLlama ? `${times(s.specVsLlama)} (llama best: ${s.llamaBest})` : '-',
      times(s.specVsAr),
      `${percent(s.overheadAr)} / ${percent(s.overheadSpec)} (${fixed(s.overheadSpecMs, 3)} of ${fixed(s.specRoundMs, 2)} ms)`,
    ];
  });
  const ratioTable = table(
    [
      'type',
      'Power AR default / bare loop at its best',
      `Power K${k} default / llama-speculative-simple at its best`,
      `Power K${k} / Power AR (defaults)`,
      'host overhead per round, AR / K (median)',
    ],
    ratioRows,
  );
  const h = summary[head]!;
  const verdicts = [
    `Power AR default ≥ 0.95× the bare loop at its best (${head}): ${times(h.arVsBare)}: ${verdict(h.arVsBare, 0.95)}`,
    ...(withLlama
      ? [
          `Power draft-model K${k} default ≥ 1.15× llama-speculative-simple at its best (${head}): ${times(h.specVsLlama)}: ${verdict(h.specVsLlama, 1.15)}`,
        ]
      : []),
    `Power draft-model K${k} ≥ 1.3× Power AR (${head}): ${times(h.specVsAr)}: ${verdict(h.specVsAr, 1.3)}`,
    `host overhead ≤ 3% of a round (${head}, K${k}): ${percent(h.overheadSpec)}: ${verdict(h.overheadSpec, 0.03, false)}`,
  ];
  const powerSpec = results.filter((r) => r.runner === 'power' && r.key.startsWith('spec'));
  verdicts.push(
    `Power draft-model tokens = Power AR tokens (digest): ${powerSpec.filter((r) => r.matchesAr).length}/${powerSpec.length}` +
      ' (the prebuilt CPU libraries are not batch-invariant, docs/exactness.md: a verify row can round differently from a one-row decode and flip a near tie)',
  );
  const runLoads = results.map((r) => r.load);
  const medianLoad = medianOf(runLoads);
  if (medianLoad !== null && medianLoad > cpus().length) {
    verdicts.push(
      `the machine was oversubscribed (median load ${fixed(medianLoad, 1)} on ${cpus().length} CPUs): every runner lost time slices, ` +
        'and Power\'s "host overhead" also counts the slice its generation thread loses right after a hand-over wakes the engine host\'s JS thread ' +
        '(time the scheduler takes either way; compare Power AR with the bare loop for what it costs)',
    );
  }
  const bare = results.filter((r) => r.runner === 'bare');
  verdicts.push(`bare loop tokens = Power AR tokens: ${bare.filter((r) => r.matchesAr).length}/${bare.length}`);

  // the suspects of issue #8, measured
  const suspects: string[] = [];
  if (prof.js) {
    suspects.push(
      `- **JS woken every round in two processes.** Now (rounds coalesced natively, one IPC message per batch): ${fixed(prof.js.hostPerRound, 3)} ms CPU ` +
        `on the engine host's JS thread + ${fixed(prof.js.callerPerRound, 3)} ms in the calling process per round (${head}, K${k}, default threads, ` +
        `${prof.js.rounds} rounds of ${fixed(prof.js.roundMs, 1)} ms, ${fixed(prof.js.roundsPerMessage, 2)} rounds per IPC message; the per-request ` +
        `costs — result, digest — are included). Before (one event per round, bench/RESULTS-cpu.md of 2026-11-29): 0.39 ms + 1.10 ms per round.`,
    );
  }
  for (const type of types) {
    const s = summary[type]!;
    const parts: string[] = [];
    for (const { t, r } of s.poolVsAuto) parts.push(`bare loop at ${t} threads, persistent pool / per-graph threads ${times(r)}`);
    for (const { t, r, s: sr } of s.arThreads) parts.push(`Power at --threads ${t} / default: AR ${times(r)}, K${k} ${times(sr)}`);
    for (const { t, r } of s.llamaPoll)
      parts.push(`llama-speculative-simple at ${t} threads, two pools polling (default) / --poll 0 ${times(r)}`);
    if (parts.length) suspects.push(`- ${type}: ${parts.join('; ')}.`);
  }
  if (prof.poll) {
    const base = prof.poll.levels[1]!;
    const cells = POLL_LEVELS.map((level) => {
      const rates = prof.poll!.levels[level]!;
      const rel = medianRatio(rates.map((x, i) => [x, base[i]] as const));
      return `poll ${level}: ${fixed(medianOf(rates), 1)} tok/s (${times(rel)} of poll 1)`;
    });
    suspects.push(
      `- Power's shared session pool, draft-model K${k} on ${head} at ${prof.poll.threads} threads, steady decode by polling level: ${cells.join('; ')}.`,
    );
  }

  const uptimeAfter = uptime();
  const minutes = (performance.now() - started) / 60000;
  const size = (b: number): string => `${(b / 1e6).toFixed(0)} MB`;
  const md = [
    '# Engine speed benchmark (CPU)',
    '',
    `Written by \`${benchCommand('speculative', ['--write'])}\` on ${isoSeconds()}; ${machineLine()}; addon flavour \`${FLAVOUR}\`, llama.cpp v0.4.0 (node-llama-cpp 3.21.1).`,
    `Command: \`${benchCommand('speculative', process.argv.slice(2))}\`; run time ${minutes.toFixed(1)} min.`,
    `Load: \`${uptimeBefore}\` before, \`${uptimeAfter}\` after; 1-min load average at the end of each run: median ${fixed(medianLoad, 2)}, max ${fixed(Math.max(...runLoads), 2)} (this run's own processes included). CPU priority ${priority}.`,
    '',
    `Models (synthetic, \`BENCH_MODELS\` in tools/models/synthetic.ts written as F16, then llama-quantize): ` +
      types
        .map(
          (t) =>
            `${t}: target ${size(models[t].targetBytes)} (${models[t].layers.target} blocks), draft ${size(models[t].draftBytes)} (its first ${models[t].layers.draft} blocks)`,
        )
        .join('; ') +
      '.',
    `${texts.length} prompts × ${tokens} tokens, greedy, context ${CTX}, K = ${k}; every configuration of a prompt runs back to back (order rotated per prompt)` +
      `${reps > 1 ? `, ${reps} times, its fastest run counts` : ''}. Power's default thread count here: ${prof.defaultThreads}.`,
    '',
    '"decode tok/s": tokens after the first / time after the first token, median over prompts (Power: from its JSON; the bare loop: its own clock; llama-speculative-simple: its "decoded N tokens in T s").',
    '"steady tok/s": Power\'s `steadyDecodeTokensPerSecond` (tokens after the two warm-up rounds / the time they took).',
    '"host overhead / round": over the steady rounds of Power\'s `--rounds` records, (round wall time − propose − verify − commit) / round wall time, median over prompts.',
    'Ratios: per prompt (runs seconds apart), then the median over prompts.',
    '',
    mainTable,
    '',
    ratioTable,
    '',
    ...verdicts.map((v) => `- ${v}`),
    '',
    '## The suspects of issue #8',
    '',
    ...suspects,
    '',
  ].join('\n');

  console.log('\n' + md);
  const stripped = results.map((r) => {
    const copy: Record<string, unknown> = { ...r };
    delete copy.stdout;
    delete copy.text;
    delete copy.tokens;
    return copy;
  });
  await writeFile(join(outDir, 'last-run.json'), JSON.stringify({ summary, profile: prof, results: stripped }, null, 2) + '\n');
  if (values.write) {
    // the sections other scripts append (bench/flash-attn.ts, bench/serve-stream.ts) stay
    writeHead(RESULTS_CPU_MD, md, [FLASH_ATTN_HEADING, SERVE_STREAM_HEADING]);
    console.log(`wrote ${relative(ROOT, RESULTS_CPU_MD)}`);
  }
}

await main();
