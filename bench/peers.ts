// Peers side by side (issue 12): Power against the tools a user would otherwise use, on the same
// synthetic weight-read-bound models, prompts, K, token counts and threads, in one run:
//   - Power: `power bench` (the autoregressive control and draft-model k<K>, interleaved, one engine)
//   - llama.cpp's llama-speculative-simple (speculative only) and llama-server (autoregressive and
//     speculative over HTTP), built from the release's own source bundle into --out
//   - node-llama-cpp's DraftSequenceTokenPredictor on its prebuilt libraries (bench/peers-nlc.ts)
// Each llama.cpp peer runs with its default polling and with --poll 0 and keeps the better (its
// best settings on a small machine). Runs on demand, never in CI; see bench/README.md.
//
//   node --import tsx bench/peers.ts [--out DIR] [--tokens N] [--prompts N] [--threads N] [--k K]
//                                    [--write] [--no-server] [--no-speculative-simple] [--no-nlc] [--build-server]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join, relative, resolve } from 'node:path';

import type { Report, RequestRecord } from '../app/contract/report/schema.js';
import type { GenerationResult } from '../app/contract/generation-result.js';
import { EngineClient } from '../app/engine/client.js';
import { MODELS_CACHE, ROOT } from '../app/paths.js';
import { BENCH_MODELS, makeModelFiles, makeModels } from '../tools/models/synthetic.js';
import type { NlcJob, NlcResult } from './peers-nlc.js';
import { benchOptions } from './lib/args.js';
import { fixed, percent, times } from './lib/format.js';
import {
  buildLlamaTools,
  compileSpeculativeSimple,
  ensureLlamaSource,
  LLAMA_SRC,
  parseSpeculativeSimple,
  speculativeSimpleArgs,
} from './lib/llama.js';
import { load1, machineLine } from './lib/machine.js';
import { PROMPTS as ALL_PROMPTS } from './lib/prompts.js';
import { benchCommand, RESULTS_MD, writeBetweenMarkers } from './lib/results.js';
import { failer, POWER_BIN, requireDist, run, type RunResult } from './lib/run.js';
import { freePort, waitHealthy } from './lib/server.js';
import { medianOf, medianRatio } from './lib/stats.js';

// Power and the llama.cpp peers on the same llama.cpp build: the prebuilt libraries, which carry
// libllama-common.so (the from-source default `cpu` flavour does not build common/)
process.env.POWER_FLAVOUR ??= 'cpu-prebuilt';
const ADDON_DIR = join(ROOT, `build/addon-${process.env.POWER_FLAVOUR}`);
const CTX = 2048;
const BEGIN = '<!-- peers.ts: begin -->';
const END = '<!-- peers.ts: end -->';
const PROMPTS = ALL_PROMPTS.slice(0, 6);

const opt = benchOptions(
  { out: '.cache/peers', tokens: '128', prompts: '4', threads: '2', k: '4', models: 'bench', 'run-timeout': '180' },
  ['write', 'no-server', 'no-speculative-simple', 'no-nlc', 'build-server', 'help'],
);
if (opt.help) {
  console.log(`${benchCommand('peers')} [--out DIR] [--tokens N] [--prompts N] [--threads N] [--k K] [--write]
${' '.repeat(benchCommand('peers').length + 1)}[--no-server] [--no-speculative-simple] [--no-nlc] [--build-server]
  --out DIR          models, llama.cpp build, reports (default .cache/peers)
  --tokens N         tokens per request (128); --prompts N (4, at most ${PROMPTS.length}); --threads N (2); --k K (4)
  --write            write the results into bench/RESULTS.md (between the peers.ts markers)
  --models small     the test set's tiny target.gguf / draft-close.gguf (.cache/models): a quick check
                     that every peer runs, not a measurement (default: bench, BENCH_MODELS)
  --run-timeout S    give up on one peer run after S seconds (180): it counts as no result
  --build-server     build llama-server from the bundle's source (cmake, 332 steps: ~5 min on 2 idle cores)
  --no-server, --no-speculative-simple, --no-nlc   skip a peer`);
  process.exit(0);
}
const OUT = resolve(ROOT, opt.out);
const TOKENS = Number(opt.tokens);
const THREADS = Number(opt.threads);
const K = Number(opt.k);
const NPROMPTS = Math.min(PROMPTS.length, Math.max(1, Number(opt.prompts)));
const LLAMA_BUILD = join(OUT, 'llama-build');
const SMALL = opt.models === 'small';
const RUN_TIMEOUT_MS = Number(opt['run-timeout']) * 1000;
/** The run settings `power generate` (the reference outputs) and `power bench` (the measure) share: the same reply on the same engine. */
const POWER_RUN = ['--max-tokens', String(TOKENS), '--ctx', String(CTX), '--threads', String(THREADS), '--device', 'cpu'];

const fail: (message: string) => never = failer('peers');

/** A peer run, given up on after 10 minutes unless told otherwise (a spinning thread pool on an overloaded machine can take minutes per token). */
const runPeer = (cmd: string, args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> =>
  run(cmd, args, { cwd: options.cwd ?? ROOT, timeoutMs: options.timeoutMs ?? 600_000 });

// ---------------------------------------------------------------- models and prompts

interface Pair {
  target: string;
  draft: string;
}

async function models(): Promise<Pair> {
  if (SMALL) {
    const set = await makeModels(MODELS_CACHE);
    return { target: set['target.gguf'], draft: set['draft-close.gguf'] };
  }
  const paths = await makeModelFiles(join(OUT, 'models'), BENCH_MODELS, { onLog: (l) => console.log(`  ${l}`) });
  return { target: paths['bench-target.gguf'], draft: paths['bench-draft.gguf'] };
}

/** Prompt token ids as llama.cpp tokenizes the text (BOS added), through Power's engine. */
async function tokenize(target: string, texts: readonly string[]): Promise<number[][]> {
  const engine = EngineClient.start({});
  try {
    const { modelId } = await engine.call('loadModel', { path: target });
    const out: number[][] = [];
    for (const text of texts) out.push([...(await engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false }))]);
    return out;
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------- Power

interface Reference {
  tokens: number[];
  text: string;
  digest: string;
}

/** Power's reference outputs (tokens and text) for the correctness checks of the peers. */
async function powerReference(m: Pair, prompts: readonly number[][]): Promise<Reference[]> {
  const out: Reference[] = [];
  for (const p of prompts) {
    const r = await runPeer(process.execPath, [
      POWER_BIN,
      'generate',
      '--model',
      m.target,
      '--prompt-tokens',
      p.join(','),
      ...POWER_RUN,
      '--json',
    ]);
    if (r.code !== 0) fail(`power generate failed: ${r.stderr.trim()}`);
    const j = JSON.parse(r.stdout) as GenerationResult;
    out.push({ tokens: j.tokens, text: j.text, digest: j.digest });
  }
  return out;
}

/** A measurement of one prompt; `same`: its output is Power's autoregressive one (null: not checked). */
interface PerPrompt {
  decode: number | null;
  acceptance?: number | null;
  same: boolean | null;
}

interface PowerRequest {
  decode: number | null;
  digest: string;
  acceptance: number | null;
  promptTokens: number;
}

/** `power bench`: control and k<K> interleaved in one engine; decode per request from its round samples. */
async function powerBench(m: Pair, texts: readonly string[]): Promise<{ ar: PowerRequest[]; spec: PowerRequest[]; command: string }> {
  const tasks = join(OUT, 'peers-tasks.jsonl');
  await mkdir(OUT, { recursive: true }); // --models small writes no models into it
  await writeFile(tasks, texts.map((t, i) => JSON.stringify({ id: `p${i + 1}`, category: 'peers', prompt: t })).join('\n') + '\n');
  const dir = join(OUT, 'power-report');
  const args = [
    POWER_BIN,
    'bench',
    '--model',
    m.target,
    '--draft',
    m.draft,
    '--strategy',
    'draft-model',
    '--profiles',
    `k${K}`,
    '--tasks',
    tasks,
    '--raw',
    ...POWER_RUN,
    '--out',
    dir,
    '--formats',
    'json,md',
  ];
  const r = await runPeer(process.execPath, args);
  if (r.code !== 0) fail(`power bench failed: ${r.stderr.trim()}`);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Report;
  const decode = (q: RequestRecord): number | null => {
    const s = q.samples;
    const dt = s.length > 0 ? (s[s.length - 1]!.endUs - s[0]!.endUs) / 1e6 : 0;
    return q.generatedTokens > 1 && dt > 0 ? (q.generatedTokens - 1) / dt : null;
  };
  const pick = (profile: string): PowerRequest[] =>
    report.requests
      .filter((q) => q.profile === profile)
      .map((q) => ({ decode: decode(q), digest: q.digest, acceptance: q.acceptanceRate, promptTokens: q.promptTokens }));
  return {
    ar: pick('control'),
    spec: pick(`k${K}`),
    command: `power ${args
      .slice(1)
      .map((a) => relative(ROOT, a) || a)
      .join(' ')}`,
  };
}

// ---------------------------------------------------------------- llama.cpp from the bundle

/** llama-server (and llama-speculative-simple) built by cmake from the bundle, native CPU flags. */
function buildWithCmake(targets: readonly string[]): void {
  ensureLlamaSource('CMakeLists.txt', fail);
  const seconds = buildLlamaTools({ src: LLAMA_SRC, build: LLAMA_BUILD, targets, defs: { GGML_OPENMP: 'OFF' } }, fail);
  console.log(`  built ${targets.join(', ')} in ${seconds.toFixed(0)} s`);
}

interface Tool {
  exe: string;
  cwd: string;
  build: string;
}

/** llama-speculative-simple: the cmake build when there is one, else g++ against the prebuilt libraries (3 s). */
function speculativeSimple(): Tool {
  const cmakeExe = join(LLAMA_BUILD, 'bin/llama-speculative-simple');
  if (existsSync(cmakeExe)) return { exe: cmakeExe, cwd: ROOT, build: 'cmake, from the bundle, GGML_NATIVE=ON' };
  const exe = join(OUT, 'bin/llama-speculative-simple');
  compileSpeculativeSimple({ exe, libDir: ADDON_DIR, rpath: 'absolute' }, fail);
  // ggml finds its CPU backend variants next to the libraries: run from their folder
  return { exe, cwd: ADDON_DIR, build: "the example's source compiled against Power's prebuilt libraries (same release)" };
}

async function runSpeculativeSimple(
  tool: Tool,
  m: Pair,
  text: string,
  poll0: boolean,
): Promise<{ decode: number | null; acceptance: number | null; text: string; timedOut?: boolean }> {
  const args = speculativeSimpleArgs({ target: m.target, draft: m.draft, text, tokens: TOKENS, ctx: CTX, threads: THREADS, k: K, poll0 });
  const r = await runPeer(tool.exe, args, { cwd: tool.cwd, timeoutMs: RUN_TIMEOUT_MS });
  if (r.timedOut) return { decode: null, acceptance: null, text: '', timedOut: true };
  if (r.code !== 0) fail(`llama-speculative-simple failed: ${r.stderr.trim().split('\n').slice(-4).join(' | ')}`);
  const s = parseSpeculativeSimple(r.stderr);
  if (!s) fail(`could not read llama-speculative-simple's summary:\n${r.stderr.slice(-1500)}`);
  return { decode: s.decode, acceptance: s.drafted ? (s.accepted ?? NaN) / s.drafted : null, text: r.stdout };
}

interface ServerRow {
  decode: number | null;
  acceptance: number | null;
  tokens: number[] | null;
}

/** One llama-server process for a configuration; every prompt through POST /completion. */
async function runServer(
  exe: string,
  m: Pair,
  prompts: readonly number[][],
  { spec, poll0 }: { spec: boolean; poll0: boolean },
): Promise<ServerRow[]> {
  const port = await freePort();
  const args = [
    '-m',
    m.target,
    '-c',
    String(CTX),
    '-t',
    String(THREADS),
    '-tb',
    String(THREADS),
    '-np',
    '1',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
  ];
  if (spec) args.push('-md', m.draft, '-td', String(THREADS), '--spec-draft-n-max', String(K), '--spec-draft-n-min', '0');
  if (poll0) args.push('--poll', '0', '--poll-batch', '0', ...(spec ? ['--poll-draft', '0', '--poll-batch-draft', '0'] : []));
  const child = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(child, base, { log: () => log, what: 'llama-server', timeoutMs: 120_000, fail });
    const out: ServerRow[] = [];
    for (const p of prompts) {
      const res = await fetch(`${base}/completion`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          prompt: p,
          n_predict: TOKENS,
          temperature: 0,
          top_k: 1,
          cache_prompt: false,
          return_tokens: true,
          ignore_eos: false,
        }),
      });
      if (!res.ok) fail(`llama-server /completion: HTTP ${res.status} ${await res.text()}`);
      const j = (await res.json()) as {
        tokens?: number[];
        timings?: { predicted_per_second?: number; draft_n?: number; draft_n_accepted?: number };
      };
      const t = j.timings ?? {};
      out.push({
        decode: t.predicted_per_second ?? null,
        acceptance: t.draft_n ? (t.draft_n_accepted ?? NaN) / t.draft_n : null,
        tokens: j.tokens ?? null,
      });
    }
    return out;
  } finally {
    child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------- node-llama-cpp

interface NlcRow {
  decode: number | null;
  tokens: number[];
  acceptance: number | null;
}

/** settings: { minTokens, minConfidence } of DraftSequenceTokenPredictor (absent: its default) */
async function runNlc(
  m: Pair,
  prompts: number[][],
  spec: boolean,
  settings: { minTokens?: number; minConfidence?: number } = {},
): Promise<{ version: string; rows: NlcRow[] }> {
  const job: NlcJob = {
    target: m.target,
    draft: spec ? m.draft : null,
    k: K,
    threads: THREADS,
    ctx: CTX,
    tokens: TOKENS,
    prompts,
    minTokens: settings.minTokens ?? 0,
    minConfidence: settings.minConfidence ?? null,
  };
  const r = await runPeer(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/peers-nlc.ts'), JSON.stringify(job)]);
  if (r.code !== 0) fail(`node-llama-cpp run failed: ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  const j = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as NlcResult;
  return {
    version: j.version,
    rows: j.results.map((x) => ({
      decode: x.decode,
      tokens: x.tokens,
      acceptance: x.validated + x.refuted > 0 ? x.validated / (x.validated + x.refuted) : null,
    })),
  };
}

// ---------------------------------------------------------------- main

requireDist(fail);
const started = new Date();
const load0 = load1();
console.log(`peers: ${NPROMPTS} prompts × ${TOKENS} tokens, K=${K}, ${THREADS} threads, context ${CTX}, greedy`);
console.log('models');
const m = await models();
const texts = PROMPTS.slice(0, NPROMPTS);
const prompts = await tokenize(m.target, texts);
console.log('Power reference outputs (power generate)');
const reference = await powerReference(m, prompts);
interface Row {
  peer: string;
  mode: string;
  settings: string;
  perPrompt: PerPrompt[];
}
const rows: Row[] = [];
const sameTokens = (a: readonly number[] | null, i: number): boolean | null =>
  a ? a.length === reference[i]!.tokens.length && a.every((t, j) => t === reference[i]!.tokens[j]) : null;

console.log('Power (power bench: control and k' + K + ' interleaved)');
const power = await powerBench(m, texts);
power.ar.forEach((q, i) => {
  if (q.promptTokens !== prompts[i]!.length)
    fail(`power bench tokenized prompt ${i + 1} differently (${q.promptTokens} vs ${prompts[i]!.length})`);
});
rows.push({
  peer: 'Power',
  mode: 'autoregressive',
  settings: '',
  perPrompt: power.ar.map((q, i) => ({ ...q, same: q.digest === reference[i]!.digest })),
});
rows.push({
  peer: 'Power',
  mode: `draft-model K${K}`,
  settings: '',
  perPrompt: power.spec.map((q, i) => ({ ...q, same: q.digest === reference[i]!.digest })),
});

/** The faster of two variants of a peer (median decode; a missing median counts as 0). */
const best = <T extends { decode: number | null }>(a: T[], b: T[]): T[] =>
  (medianOf(a.map((x) => x.decode)) ?? 0) >= (medianOf(b.map((x) => x.decode)) ?? 0) ? a : b;
const notes: string[] = [];

if (!opt['no-speculative-simple']) {
  console.log('llama-speculative-simple');
  const tool = speculativeSimple();
  const variants: { poll0: boolean; per: PerPrompt[] }[] = [];
  for (const poll0 of THREADS > 1 ? [false, true] : [false]) {
    const per: PerPrompt[] = [];
    for (const [i, text] of texts.entries()) {
      const r = await runSpeculativeSimple(tool, m, text, poll0);
      if (r.timedOut)
        notes.push(
          `llama-speculative-simple (${poll0 ? '--poll 0' : 'default poll'}) on prompt ${i + 1}: gave up after ${RUN_TIMEOUT_MS / 1000} s`,
        );
      per.push({ decode: r.decode, acceptance: r.acceptance, same: r.timedOut ? null : r.text.includes(reference[i]!.text) });
    }
    variants.push({ poll0, per });
  }
  const chosen = variants.reduce((a, b) => (best(a.per, b.per) === a.per ? a : b));
  rows.push({
    peer: 'llama-speculative-simple',
    mode: `draft K${K}`,
    settings: chosen.poll0 ? '--poll 0' : 'default poll',
    perPrompt: chosen.per,
  });
  notes.push(
    `llama-speculative-simple: ${tool.build}; decode = its own "decoded N tokens in X s"; output checked as text containing Power's.`,
  );
}

const serverExe = join(LLAMA_BUILD, 'bin/llama-server');
if (!opt['no-server'] && !existsSync(serverExe) && opt['build-server']) buildWithCmake(['llama-server', 'llama-speculative-simple']);
if (!opt['no-server']) {
  if (!existsSync(serverExe)) {
    notes.push(`llama-server: not built (run with --build-server to build it from the bundle into ${relative(ROOT, LLAMA_BUILD)}).`);
  } else {
    for (const spec of [false, true]) {
      console.log(`llama-server (${spec ? 'speculative' : 'autoregressive'})`);
      const variants: { poll0: boolean; per: ServerRow[] }[] = [];
      for (const poll0 of THREADS > 1 ? [false, true] : [false])
        variants.push({ poll0, per: await runServer(serverExe, m, prompts, { spec, poll0 }) });
      const chosen = variants.reduce((a, b) => (best(a.per, b.per) === a.per ? a : b));
      rows.push({
        peer: 'llama-server',
        mode: spec ? `draft K${K}` : 'autoregressive',
        settings: chosen.poll0 ? '--poll 0' : 'default poll',
        perPrompt: chosen.per.map((x, i) => ({ ...x, same: sameTokens(x.tokens, i) })),
      });
    }
    notes.push(
      'llama-server: cmake build from the bundle (GGML_NATIVE=ON, static); POST /completion with prompt token ids, greedy, cache_prompt false; decode = its timings.predicted_per_second.',
    );
  }
}

if (!opt['no-nlc']) {
  console.log('node-llama-cpp (autoregressive)');
  const ar = await runNlc(m, prompts, false);
  rows.push({
    peer: `node-llama-cpp ${ar.version}`,
    mode: 'autoregressive',
    settings: 'prebuilt libraries',
    perPrompt: ar.rows.map((x, i) => ({ ...x, same: sameTokens(x.tokens, i) })),
  });
  // its defaults (minTokens 0, minConfidence 0.6) draft only what is ready and confident; on
  // these models they barely draft, so waiting for K confident-or-not tokens is tried too
  const variants: { settings: { minTokens?: number; minConfidence?: number }; per: NlcRow[] }[] = [];
  for (const settings of [{}, { minTokens: K, minConfidence: 0 }]) {
    console.log(`node-llama-cpp (DraftSequenceTokenPredictor ${JSON.stringify(settings)})`);
    variants.push({ settings, per: (await runNlc(m, prompts, true, settings)).rows });
  }
  const chosen = variants.reduce((a, b) => (best(a.per, b.per) === a.per ? a : b));
  rows.push({
    peer: `node-llama-cpp ${ar.version}`,
    mode: `DraftSequenceTokenPredictor maxTokens ${K}`,
    settings: chosen.settings.minTokens ? `minTokens ${K}, minConfidence 0` : 'defaults (minTokens 0, minConfidence 0.6)',
    perPrompt: chosen.per.map((x, i) => ({ ...x, same: sameTokens(x.tokens, i) })),
  });
  notes.push(
    "node-llama-cpp: its prebuilt CPU libraries (@node-llama-cpp/linux-x64), LlamaContextSequence.evaluate greedy; the draft predictor's better of its defaults and minTokens K / minConfidence 0; decode = tokens after the first / time after the first; acceptance = validated / (validated + refuted).",
  );
}

// ratios: per prompt (runs of one prompt happened close together), then the median
const powerAr = rows[0]!.perPrompt;
const powerSpec = rows[1]!.perPrompt;
const table = rows.map((r) => {
  const mine = r.mode !== 'autoregressive' ? powerSpec : powerAr;
  const same = r.perPrompt.map((x) => x.same);
  return {
    ...r,
    decode: medianOf(r.perPrompt.map((x) => x.decode)),
    acceptance: medianOf(r.perPrompt.map((x) => x.acceptance ?? null)),
    ratio: medianRatio(r.perPrompt.map((x, i) => [mine[i]?.decode, x.decode] as const)),
    same: same.every((s) => s === null) ? '-' : `${same.filter((s) => s === true).length}/${same.length}`,
  };
});

const lines = [
  BEGIN,
  '## Peers side by side (bench/peers.ts)',
  '',
  `Written by \`${benchCommand('peers', [...process.argv.slice(2).filter((a) => a !== '--write'), '--write'])}\` on ${started.toISOString().slice(0, 10)}; ` +
    `${machineLine()}; 1-min load average ${load0.toFixed(2)} before, ${load1().toFixed(2)} after (the after figure includes the run's own ${THREADS} thread(s)).`,
  '',
  (SMALL
    ? "Models: the test set's target.gguf and draft-close.gguf (3 MB each): a check that every peer runs, not a measurement. "
    : 'Models: `BENCH_MODELS` (tools/models/synthetic.js): target 435 MB F32 llama (12 blocks), draft = its first 3 blocks (114 MB). ') +
    `${NPROMPTS} prompts × ${TOKENS} tokens, greedy, context ${CTX}, ${THREADS} thread(s) for every engine, K = ${K}.`,
  `Power: \`${power.command}\`.`,
  '',
  // the run itself keeps THREADS cores busy, so only the load found before it says whether others competed
  ...(load0 + THREADS > cpus().length + 0.5
    ? [
        `**Busy machine:** ${load0.toFixed(1)} cores were already busy before the run, which needs ${THREADS} of the ${cpus().length}, so every figure below ` +
          'is dominated by contention for the CPU (peers ran one after another, not interleaved); rerun on a quiet machine before reading ratios into it.',
        '',
      ]
    : []),
  '| peer | mode | settings | decode tok/s (median) | Power / peer (median of per-prompt ratios) | acceptance | output = Power AR |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...table.map(
    (r) =>
      `| ${r.peer} | ${r.mode} | ${r.settings || '-'} | ${fixed(r.decode, 1)} | ${r.peer === 'Power' ? '-' : times(r.ratio)} | ${percent(r.acceptance)} | ${r.same} |`,
  ),
  '',
  `Power draft-model K${K} / Power autoregressive: ${times(medianRatio(powerSpec.map((x, i) => [x.decode, powerAr[i]?.decode] as const)))} (median of per-prompt ratios).`,
  '"Power / peer" compares like with like: Power autoregressive against a peer\'s autoregressive mode, Power speculative against a peer\'s speculative mode.',
  '',
  ...notes.map((n) => `- ${n}`),
  END,
];
const md = lines.join('\n');
console.log('\n' + md);
await writeFile(join(OUT, 'peers-last-run.json'), JSON.stringify({ started, rows: table }, null, 2));
if (opt.write) {
  writeBetweenMarkers(RESULTS_MD, BEGIN, END, md, '# Benchmark results\n');
  console.log(`wrote ${relative(ROOT, RESULTS_MD)}`);
}
