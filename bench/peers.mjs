#!/usr/bin/env node
// Peers side by side (issue 12): Power against the tools a user would otherwise use, on the same
// synthetic weight-read-bound models, prompts, K, token counts and threads, in one run:
//   - Power: `power bench` (the autoregressive control and draft-model k<K>, interleaved, one engine)
//   - llama.cpp's llama-speculative-simple (speculative only) and llama-server (autoregressive and
//     speculative over HTTP), built from the release's own source bundle into --out
//   - node-llama-cpp's DraftSequenceTokenPredictor on its prebuilt libraries (bench/peers-nlc.mjs)
// Each llama.cpp peer runs with its default polling and with --poll 0 and keeps the better (its
// best settings on a small machine). Runs on demand, never in CI; see bench/README.md.
//
//   node bench/peers.mjs [--out DIR] [--tokens N] [--prompts N] [--threads N] [--k K]
//                        [--write] [--no-server] [--no-speculative-simple] [--no-nlc] [--build-server]
/* global setTimeout, clearTimeout, fetch */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Power and the llama.cpp peers on the same llama.cpp build: the prebuilt libraries, which carry
// libllama-common.so (the from-source default `cpu` flavour does not build common/)
process.env.POWER_FLAVOUR ??= 'cpu-prebuilt';
const ADDON_DIR = join(ROOT, `build/addon-${process.env.POWER_FLAVOUR}`);
const LLAMA_SRC = join(ROOT, 'build/llama.cpp');
const RESULTS_MD = join(ROOT, 'bench/RESULTS.md');
const CTX = 2048;
const BEGIN = '<!-- peers.mjs: begin -->';
const END = '<!-- peers.mjs: end -->';

// plain text over the synthetic vocabulary (node/models/vocab.ts)
const PROMPTS = [
  'the quick brown fox jumps over the lazy dog',
  'hello world, this is a test of the power model',
  'what is the answer to the question',
  'I like to write a story about water and people',
  'she said that they will come when the day is long',
  'how many people have made the first call',
];

const { values: opt } = parseArgs({
  options: {
    out: { type: 'string', default: '.cache/peers' },
    tokens: { type: 'string', default: '128' },
    prompts: { type: 'string', default: '4' },
    threads: { type: 'string', default: '2' },
    k: { type: 'string', default: '4' },
    write: { type: 'boolean', default: false },
    'no-server': { type: 'boolean', default: false },
    'no-speculative-simple': { type: 'boolean', default: false },
    'no-nlc': { type: 'boolean', default: false },
    'build-server': { type: 'boolean', default: false },
    models: { type: 'string', default: 'bench' },
    'run-timeout': { type: 'string', default: '180' },
    help: { type: 'boolean', default: false },
  },
});
if (opt.help) {
  console.log(`node bench/peers.mjs [--out DIR] [--tokens N] [--prompts N] [--threads N] [--k K] [--write]
                    [--no-server] [--no-speculative-simple] [--no-nlc] [--build-server]
  --out DIR          models, llama.cpp build, reports (default .cache/peers)
  --tokens N         tokens per request (128); --prompts N (4, at most ${PROMPTS.length}); --threads N (2); --k K (4)
  --write            write the results into bench/RESULTS.md (between the peers.mjs markers)
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

function fail(message) {
  console.error(`peers: ${message}`);
  process.exit(1);
}

function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}
const fmt = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));
const pct = (x) => (x === null || x === undefined ? '-' : `${(x * 100).toFixed(1)}%`);
const times = (x) => (x === null || x === undefined ? '-' : `${x.toFixed(2)}×`);

function run(cmd, args, options = {}) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    // a spinning thread pool on an overloaded machine can take minutes per token: give up on it
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 600_000);
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', (error) => done({ code: -1, stdout, stderr: stderr + String(error), timedOut }));
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
  });
}

async function importDist(path) {
  const file = join(ROOT, 'dist', path);
  if (!existsSync(file)) fail(`${relative(ROOT, file)} is missing: run npm run build`);
  return import(pathToFileURL(file).href);
}

// ---------------------------------------------------------------- models and prompts

async function models() {
  if (SMALL) {
    const { makeModels } = await importDist('tools/models/synthetic.js');
    const set = await makeModels(join(ROOT, '.cache/models'));
    return { target: set['target.gguf'], draft: set['draft-close.gguf'] };
  }
  const { makeModelFiles, BENCH_MODELS } = await importDist('tools/models/synthetic.js');
  const paths = await makeModelFiles(join(OUT, 'models'), BENCH_MODELS, { onLog: (l) => console.log(`  ${l}`) });
  return { target: paths['bench-target.gguf'], draft: paths['bench-draft.gguf'] };
}

/** Prompt token ids as llama.cpp tokenizes the text (BOS added), through Power's engine. */
async function tokenize(target, texts) {
  const { EngineClient } = await importDist('node/engine/client.js');
  const engine = EngineClient.start({});
  try {
    const { modelId } = await engine.call('loadModel', { path: target });
    const out = [];
    for (const text of texts) out.push([...(await engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false }))]);
    return out;
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------- Power

/** Power's reference outputs (tokens and text) for the correctness checks of the peers. */
async function powerReference(m, prompts) {
  const out = [];
  for (const p of prompts) {
    const r = await run(process.execPath, [
      join(ROOT, 'bin/power.js'), 'generate', '--model', m.target, '--prompt-tokens', p.join(','), '--max-tokens', String(TOKENS),
      '--ctx', String(CTX), '--threads', String(THREADS), '--device', 'cpu', '--json',
    ]);
    if (r.code !== 0) fail(`power generate failed: ${r.stderr.trim()}`);
    const j = JSON.parse(r.stdout);
    out.push({ tokens: j.tokens, text: j.text, digest: j.digest });
  }
  return out;
}

/** `power bench`: control and k<K> interleaved in one engine; decode per request from its round samples. */
async function powerBench(m, texts) {
  const tasks = join(OUT, 'peers-tasks.jsonl');
  await writeFile(tasks, texts.map((t, i) => JSON.stringify({ id: `p${i + 1}`, category: 'peers', prompt: t })).join('\n') + '\n');
  const dir = join(OUT, 'power-report');
  const args = [
    join(ROOT, 'bin/power.js'), 'bench', '--model', m.target, '--draft', m.draft, '--strategy', 'draft-model', '--profiles', `k${K}`,
    '--tasks', tasks, '--raw', '--max-tokens', String(TOKENS), '--ctx', String(CTX), '--threads', String(THREADS), '--device', 'cpu',
    '--out', dir, '--formats', 'json,md',
  ];
  const r = await run(process.execPath, args);
  if (r.code !== 0) fail(`power bench failed: ${r.stderr.trim()}`);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'));
  const decode = (q) => {
    const s = q.samples;
    const dt = (s[s.length - 1].endUs - s[0].endUs) / 1e6;
    return q.generatedTokens > 1 && dt > 0 ? (q.generatedTokens - 1) / dt : null;
  };
  const pick = (profile) =>
    report.requests
      .filter((q) => q.profile === profile)
      .map((q) => ({ decode: decode(q), digest: q.digest, acceptance: q.acceptanceRate, promptTokens: q.promptTokens }));
  return { ar: pick('control'), spec: pick(`k${K}`), command: `power ${args.slice(1).map((a) => relative(ROOT, a) || a).join(' ')}` };
}

// ---------------------------------------------------------------- llama.cpp from the bundle

function ensureSource() {
  if (existsSync(join(LLAMA_SRC, 'CMakeLists.txt'))) return;
  const bundle = join(ROOT, 'node_modules/node-llama-cpp/llama/gitRelease.bundle');
  const c = spawnSync('git', ['clone', '--quiet', bundle, LLAMA_SRC], { stdio: 'inherit' });
  if (c.status !== 0) fail('git clone of the source bundle failed');
}

/** llama-server (and llama-speculative-simple) built by cmake from the bundle, native CPU flags. */
function buildWithCmake(targets) {
  ensureSource();
  const configure = [
    '-S', LLAMA_SRC, '-B', LLAMA_BUILD, '-DCMAKE_BUILD_TYPE=Release', '-DBUILD_SHARED_LIBS=OFF', '-DGGML_NATIVE=ON', '-DGGML_OPENMP=OFF',
    '-DLLAMA_CURL=OFF', '-DLLAMA_OPENSSL=OFF', '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_UI=OFF', '-DLLAMA_USE_PREBUILT_UI=OFF',
  ];
  if (spawnSync('ninja', ['--version']).status === 0) configure.push('-G', 'Ninja');
  const started = performance.now();
  for (const args of [configure, ['--build', LLAMA_BUILD, '--target', ...targets, '-j', String(cpus().length)]]) {
    const r = spawnSync('cmake', args, { stdio: 'inherit' });
    if (r.status !== 0) fail(`cmake ${args.slice(0, 2).join(' ')} failed`);
  }
  console.log(`  built ${targets.join(', ')} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** llama-speculative-simple: the cmake build when there is one, else g++ against the prebuilt libraries (3 s). */
function speculativeSimple() {
  const cmakeExe = join(LLAMA_BUILD, 'bin/llama-speculative-simple');
  if (existsSync(cmakeExe)) return { exe: cmakeExe, cwd: ROOT, build: 'cmake, from the bundle, GGML_NATIVE=ON' };
  ensureSource();
  const exe = join(OUT, 'bin/llama-speculative-simple');
  const src = join(LLAMA_SRC, 'examples/speculative-simple/speculative-simple.cpp');
  const libs = ['libllama-common.so', 'libllama.v0.4.0.so', 'libggml.v0.4.0.so', 'libggml-base.so'];
  if (!existsSync(exe) || statSync(exe).mtimeMs < statSync(src).mtimeMs) {
    mkdirSync(dirname(exe), { recursive: true });
    const r = spawnSync('g++', [
      '-std=c++17', '-O2', `-I${join(LLAMA_SRC, 'include')}`, `-I${join(LLAMA_SRC, 'ggml/include')}`, `-I${join(LLAMA_SRC, 'common')}`,
      `-I${join(LLAMA_SRC, 'vendor')}`, src, '-o', exe, `-L${ADDON_DIR}`, ...libs.map((l) => `-l:${l}`), `-Wl,-rpath,${ADDON_DIR}`,
    ], { encoding: 'utf8' });
    if (r.status !== 0) fail(`building llama-speculative-simple failed:\n${r.stderr}`);
  }
  // ggml finds its CPU backend variants next to the libraries: run from their folder
  return { exe, cwd: ADDON_DIR, build: "the example's source compiled against Power's prebuilt libraries (same release)" };
}

async function runSpeculativeSimple(tool, m, text, poll0) {
  const args = [
    '-m', m.target, '-md', m.draft, '-p', text, '-n', String(TOKENS), '-c', String(CTX), '-t', String(THREADS), '-td', String(THREADS),
    '--spec-type', 'draft-simple', '--spec-draft-n-max', String(K), '--temp', '0', '--seed', '0',
  ];
  if (poll0) args.push('--poll', '0', '--poll-batch', '0', '--poll-draft', '0', '--poll-batch-draft', '0');
  const r = await run(tool.exe, args, { cwd: tool.cwd, timeoutMs: RUN_TIMEOUT_MS });
  if (r.timedOut) return { decode: null, acceptance: null, text: '', timedOut: true };
  if (r.code !== 0) fail(`llama-speculative-simple failed: ${r.stderr.trim().split('\n').slice(-4).join(' | ')}`);
  const d = /decoded\s+(\d+) tokens in\s+([\d.]+) seconds, speed:\s+([\d.]+) t\/s/.exec(r.stderr);
  const drafted = /n_drafted\s*=\s*(\d+)/.exec(r.stderr);
  const accepted = /n_accept\s*=\s*(\d+)/.exec(r.stderr);
  if (!d) fail(`could not read llama-speculative-simple's summary:\n${r.stderr.slice(-1500)}`);
  return { decode: Number(d[3]), acceptance: drafted && Number(drafted[1]) > 0 ? Number(accepted[1]) / Number(drafted[1]) : null, text: r.stdout };
}

function freePort() {
  return new Promise((done, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
    s.on('error', reject);
  });
}

/** One llama-server process for a configuration; every prompt through POST /completion. */
async function runServer(exe, m, prompts, { spec, poll0 }) {
  const port = await freePort();
  const args = ['-m', m.target, '-c', String(CTX), '-t', String(THREADS), '-tb', String(THREADS), '-np', '1', '--host', '127.0.0.1', '--port', String(port)];
  if (spec) args.push('-md', m.draft, '-td', String(THREADS), '--spec-draft-n-max', String(K), '--spec-draft-n-min', '0');
  if (poll0) args.push('--poll', '0', '--poll-batch', '0', ...(spec ? ['--poll-draft', '0', '--poll-batch-draft', '0'] : []));
  const child = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (log = (log + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) fail(`llama-server exited (${child.exitCode}): ${log.slice(-800)}`);
      const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline) fail(`llama-server did not come up: ${log.slice(-800)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const out = [];
    for (const p of prompts) {
      const res = await fetch(`${base}/completion`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: p, n_predict: TOKENS, temperature: 0, top_k: 1, cache_prompt: false, return_tokens: true, ignore_eos: false }),
      });
      if (!res.ok) fail(`llama-server /completion: HTTP ${res.status} ${await res.text()}`);
      const j = await res.json();
      const t = j.timings ?? {};
      out.push({
        decode: t.predicted_per_second ?? null,
        acceptance: t.draft_n > 0 ? t.draft_n_accepted / t.draft_n : null,
        tokens: j.tokens ?? null,
      });
    }
    return out;
  } finally {
    child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------- node-llama-cpp

/** settings: { minTokens, minConfidence } of DraftSequenceTokenPredictor (null: its default) */
async function runNlc(m, prompts, spec, settings = {}) {
  const job = { target: m.target, draft: spec ? m.draft : null, k: K, threads: THREADS, ctx: CTX, tokens: TOKENS, prompts, minTokens: settings.minTokens ?? 0, minConfidence: settings.minConfidence ?? null };
  const r = await run(process.execPath, [join(ROOT, 'bench/peers-nlc.mjs'), JSON.stringify(job)]);
  if (r.code !== 0) fail(`node-llama-cpp run failed: ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  const j = JSON.parse(r.stdout.trim().split('\n').pop());
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

const started = new Date();
const load0 = loadavg()[0];
console.log(`peers: ${NPROMPTS} prompts × ${TOKENS} tokens, K=${K}, ${THREADS} threads, context ${CTX}, greedy`);
console.log('models');
const m = await models();
const texts = PROMPTS.slice(0, NPROMPTS);
const prompts = await tokenize(m.target, texts);
console.log('Power reference outputs (power generate)');
const reference = await powerReference(m, prompts);
const rows = []; // { peer, mode, perPrompt: [{decode, same, acceptance}] }
const sameTokens = (a, i) => (a ? a.length === reference[i].tokens.length && a.every((t, j) => t === reference[i].tokens[j]) : null);

console.log('Power (power bench: control and k' + K + ' interleaved)');
const power = await powerBench(m, texts);
power.ar.forEach((q, i) => {
  if (q.promptTokens !== prompts[i].length) fail(`power bench tokenized prompt ${i + 1} differently (${q.promptTokens} vs ${prompts[i].length})`);
});
rows.push({ peer: 'Power', mode: 'autoregressive', settings: '', perPrompt: power.ar.map((q, i) => ({ ...q, same: q.digest === reference[i].digest })) });
rows.push({ peer: 'Power', mode: `draft-model K${K}`, settings: '', perPrompt: power.spec.map((q, i) => ({ ...q, same: q.digest === reference[i].digest })) });

const best = (a, b) => (median(a.map((x) => x.decode)) >= median(b.map((x) => x.decode)) ? a : b);
const notes = [];

if (!opt['no-speculative-simple']) {
  console.log('llama-speculative-simple');
  const tool = speculativeSimple();
  const variants = [];
  for (const poll0 of THREADS > 1 ? [false, true] : [false]) {
    const per = [];
    for (const [i, text] of texts.entries()) {
      const r = await runSpeculativeSimple(tool, m, text, poll0);
      if (r.timedOut) notes.push(`llama-speculative-simple (${poll0 ? '--poll 0' : 'default poll'}) on prompt ${i + 1}: gave up after ${RUN_TIMEOUT_MS / 1000} s`);
      per.push({ decode: r.decode, acceptance: r.acceptance, same: r.timedOut ? null : r.text.includes(reference[i].text) });
    }
    variants.push({ poll0, per });
  }
  const chosen = variants.reduce((a, b) => (best(a.per, b.per) === a.per ? a : b));
  rows.push({ peer: 'llama-speculative-simple', mode: `draft K${K}`, settings: chosen.poll0 ? '--poll 0' : 'default poll', perPrompt: chosen.per });
  notes.push(`llama-speculative-simple: ${tool.build}; decode = its own "decoded N tokens in X s"; output checked as text containing Power's.`);
}

let serverExe = join(LLAMA_BUILD, 'bin/llama-server');
if (!opt['no-server'] && !existsSync(serverExe) && opt['build-server']) buildWithCmake(['llama-server', 'llama-speculative-simple']);
if (!opt['no-server']) {
  if (!existsSync(serverExe)) {
    notes.push(`llama-server: not built (run with --build-server to build it from the bundle into ${relative(ROOT, LLAMA_BUILD)}).`);
    serverExe = null;
  } else {
    for (const spec of [false, true]) {
      console.log(`llama-server (${spec ? 'speculative' : 'autoregressive'})`);
      const variants = [];
      for (const poll0 of THREADS > 1 ? [false, true] : [false]) variants.push({ poll0, per: await runServer(serverExe, m, prompts, { spec, poll0 }) });
      const chosen = variants.reduce((a, b) => (best(a.per, b.per) === a.per ? a : b));
      rows.push({
        peer: 'llama-server',
        mode: spec ? `draft K${K}` : 'autoregressive',
        settings: chosen.poll0 ? '--poll 0' : 'default poll',
        perPrompt: chosen.per.map((x, i) => ({ ...x, same: sameTokens(x.tokens, i) })),
      });
    }
    notes.push('llama-server: cmake build from the bundle (GGML_NATIVE=ON, static); POST /completion with prompt token ids, greedy, cache_prompt false; decode = its timings.predicted_per_second.');
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
  const variants = [];
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
  notes.push("node-llama-cpp: its prebuilt CPU libraries (@node-llama-cpp/linux-x64), LlamaContextSequence.evaluate greedy; the draft predictor's better of its defaults and minTokens K / minConfidence 0; decode = tokens after the first / time after the first; acceptance = validated / (validated + refuted).");
}

// ratios: per prompt (runs of one prompt happened close together), then the median
const powerAr = rows[0].perPrompt;
const powerSpec = rows[1].perPrompt;
const table = rows.map((r) => {
  const spec = r.mode !== 'autoregressive';
  const mine = spec ? powerSpec : powerAr;
  const ratio = median(r.perPrompt.map((x, i) => (x.decode && mine[i].decode ? mine[i].decode / x.decode : null)));
  const same = r.perPrompt.map((x) => x.same);
  return {
    ...r,
    decode: median(r.perPrompt.map((x) => x.decode)),
    acceptance: median(r.perPrompt.map((x) => x.acceptance ?? null)),
    ratio,
    same: same.every((s) => s === null) ? '-' : `${same.filter((s) => s === true).length}/${same.length}`,
  };
});

const lines = [
  BEGIN,
  '## Peers side by side (bench/peers.mjs)',
  '',
  `Written by \`node bench/peers.mjs${process.argv.slice(2).filter((a) => a !== '--write').map((a) => ` ${a}`).join('')} --write\` on ${started.toISOString().slice(0, 10)}; ` +
    `${cpus()[0]?.model.trim()}, ${cpus().length} logical cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; 1-min load average ${load0.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after (the after figure includes the run's own ${THREADS} thread(s)).`,
  '',
  (SMALL
    ? 'Models: the test set\'s target.gguf and draft-close.gguf (3 MB each): a check that every peer runs, not a measurement. '
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
  ...table.map((r) => `| ${r.peer} | ${r.mode} | ${r.settings || '-'} | ${fmt(r.decode)} | ${r.peer === 'Power' ? '-' : times(r.ratio)} | ${pct(r.acceptance)} | ${r.same} |`),
  '',
  `Power draft-model K${K} / Power autoregressive: ${times(median(powerSpec.map((x, i) => (x.decode && powerAr[i].decode ? x.decode / powerAr[i].decode : null))))} (median of per-prompt ratios).`,
  '"Power / peer" compares like with like: Power autoregressive against a peer\'s autoregressive mode, Power speculative against a peer\'s speculative mode.',
  '',
  ...notes.map((n) => `- ${n}`),
  END,
];
const md = lines.join('\n');
console.log('\n' + md);
await writeFile(join(OUT, 'peers-last-run.json'), JSON.stringify({ started, rows: table }, null, 2));
if (opt.write) {
  const current = existsSync(RESULTS_MD) ? await readFile(RESULTS_MD, 'utf8') : '# Benchmark results\n';
  const a = current.indexOf(BEGIN);
  const b = current.indexOf(END);
  const next = a >= 0 && b > a ? current.slice(0, a) + md + current.slice(b + END.length) : `${current.trimEnd()}\n\n${md}\n`;
  await writeFile(RESULTS_MD, next);
  console.log(`wrote ${relative(ROOT, RESULTS_MD)}`);
}
