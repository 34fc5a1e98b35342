// Power against llama.cpp's llama-server, server to server, as a user comparing them would:
// the same real model (Gemma 3 270M Q4_K_M), llama-server built from the same release as shipped
// (bench/lib/llama.ts, LLAMA_STOCK_SRC), both on the CPU with the same threads, one server
// process at a time (ggml's threads spin: two engines on the same cores measure neither),
// streamed /v1/completions, greedy, four kinds of prompt (bench/lib/text-prompts.ts; with
// --tasks repetition the workloads where users meet repetition, bench/lib/repetition-tasks.ts,
// a request sent twice measured the second time; --tasks all: both), every
// configuration once per round, the rounds interleaved, medians over the rounds. With --weights
// TYPES (a list of `power quantize` recipes, or `common`: the ten types users run most), the
// model re-quantized to each type (`power quantize --allow-requantize`, kept in
// .cache/bench/weights; q4_k_m is the model itself) and, per type, each server's autoregressive
// reply and Power's `suffix` at K64 (which must emit the same text):
//   - prefill: prompt tokens / time to the first streamed token (the client's clock, cold: no
//     prompt cache on either side);
//   - decode: (tokens - 1) / time from the first to the last streamed token (the client's clock);
//   - acceptance from each server's own counters (llama-server's timings, Power's stats);
//   - exactness: each Power reply against Power's autoregressive one, and llama-server's
//     against Power's.
//
//   node --import tsx bench/vs-llama-server.ts [--tokens 256] [--rounds 2] [--threads 2] [--k 4] [--tasks kinds|repetition|all]
//                                              [--weights common|q4_0,q8_0,...] [--write]
//
// Needs dist/ (npm run build), the real model (node scripts/install-real-model.mjs) and cmake;
// builds llama-server into build/llama-stock/build on the first run (~6 min on 2 cores).
// --write replaces its section of bench/RESULTS-real.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';

import { WebSocket } from 'ws';

import { powerApi } from '../app/contract/api/index.js';
import { SAMPLING_DEFAULTS, type RoundRecord } from '../app/contract/engine-types.js';
import { K_MAX } from '../app/contract/profile.js';
import { createApiClient } from '../app/contract/transport/ws-client.js';
import { EngineClient } from '../app/engine/client.js';
import { runRequest } from '../app/service/request.js';
import { ROOT } from '../app/paths.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { buildLlamaTools, ensureLlamaSource, LLAMA_STOCK_SRC } from './lib/llama.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand, RESULTS_REAL_MD, writeBetweenMarkers } from './lib/results.js';
import { failer, POWER_BIN, powerSync, requireDist } from './lib/run.js';
import { freePort, waitHealthy } from './lib/server.js';
import { medianOf } from './lib/stats.js';
import { REPETITION_TASKS, type RepetitionTask } from './lib/repetition-tasks.js';
import { PROMPT_KINDS } from './lib/text-prompts.js';

const values = benchOptions({ tokens: '256', rounds: '2', threads: '2', k: '4', only: '', tasks: 'kinds', weights: '' }, ['write']);
const fail: (message: string) => never = failer('vs-llama-server');
const { tokens: TOKENS, rounds: ROUNDS, threads: THREADS, k: K } = positiveIntegers(values, ['tokens', 'rounds', 'threads', 'k'], fail);
requireDist(fail);
const MODEL = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');
if (!existsSync(MODEL)) fail(`${relative(ROOT, MODEL)} is missing: node scripts/install-real-model.mjs`);
const CTX = 4096;
const TASK_SETS: Record<string, readonly RepetitionTask[]> = {
  kinds: PROMPT_KINDS,
  repetition: REPETITION_TASKS,
  all: [...PROMPT_KINDS, ...REPETITION_TASKS],
};
const TASKS = TASK_SETS[values.tasks] ?? fail(`--tasks is one of ${Object.keys(TASK_SETS).join(', ')}, not '${values.tasks}'`);
// the weight types users run most (issue 53's targets)
const COMMON_WEIGHTS = ['q4_0', 'q4_1', 'q5_0', 'q5_1', 'q8_0', 'q4_k_m', 'q5_k_m', 'q6_k', 'iq4_xs', 'f16'];
const WEIGHTS = values.weights === 'common' ? COMMON_WEIGHTS : values.weights.split(',').filter(Boolean);
// each task set, and the weights comparison, writes a section of its own
const SECTION =
  WEIGHTS.length > 0 ? 'vs-llama-server weights' : values.tasks === 'kinds' ? 'vs-llama-server' : `vs-llama-server ${values.tasks}`;
const BEGIN = `<!-- ${SECTION}: begin -->`;
const END = `<!-- ${SECTION}: end -->`;

// ------------------------------------------------------------------ the servers and their settings

interface Config {
  /** the row's name */
  name: string;
  server: 'power' | 'llama-server';
  /** llama-server: its command-line flags for speculation */
  flags?: readonly string[];
  /** Power: the request's strategy and K */
  strategy?: string;
  k?: number;
  /** the model file (the real model unless a weight type's copy) */
  model?: string;
  /** --weights: the type's recipe */
  weight?: string;
}

// Power's largest K, as far as llama-server's ngram-mod drafts (its n_max, 64)
const KMAX = K_MAX;
const ALL_CONFIGS: readonly Config[] = [
  { name: 'llama-server, autoregressive', server: 'llama-server', flags: [] },
  // its default is Flash Attention auto (on, on the CPU); Power's CPU default is on for this model (defaultFlashAttn)
  { name: 'llama-server, autoregressive, `-fa off`', server: 'llama-server', flags: ['-fa', 'off'] },
  { name: 'Power, autoregressive', server: 'power', strategy: 'none' },
  {
    name: `llama-server \`--spec-type ngram-simple --spec-draft-n-max ${K}\``,
    server: 'llama-server',
    flags: ['--spec-type', 'ngram-simple', '--spec-draft-n-max', String(K)],
  },
  { name: `Power \`ngram-simple\`, K${K}`, server: 'power', strategy: 'ngram-simple', k: K },
  { name: 'llama-server `--spec-type ngram-mod`', server: 'llama-server', flags: ['--spec-type', 'ngram-mod'] },
  { name: `Power \`ngram-mod\`, K${K}`, server: 'power', strategy: 'ngram-mod', k: K },
  { name: `Power \`ngram\` (ours), K${K}`, server: 'power', strategy: 'ngram', k: K },
  { name: `Power \`suffix\`, K${K}`, server: 'power', strategy: 'suffix', k: K },
  // llama-server's ngram-simple drafts its whole m-gram whatever --spec-draft-n-max says: K_MAX lets Power's do the same
  { name: `Power \`ngram-simple\`, K${KMAX}`, server: 'power', strategy: 'ngram-simple', k: KMAX },
  { name: `Power \`ngram-mod\`, K${KMAX}`, server: 'power', strategy: 'ngram-mod', k: KMAX },
  { name: `Power \`ngram\` (ours), K${KMAX}`, server: 'power', strategy: 'ngram', k: KMAX },
  // the suffix drafter with its defaults: the length of each draft is its own
  { name: `Power \`suffix\`, K${KMAX}`, server: 'power', strategy: 'suffix', k: KMAX },
  // a chain: each round the first member that drafts wins (ngram-mod's sure matches, else ngram-simple's m-gram)
  { name: `Power \`ngram-mod,ngram-simple\`, K${KMAX}`, server: 'power', strategy: 'ngram-mod,ngram-simple', k: KMAX },
  // ngram-simple's long m-gram drafts first, else ours
  { name: `Power \`ngram-simple,ngram\`, K${KMAX}`, server: 'power', strategy: 'ngram-simple,ngram', k: KMAX },
];

// --only a,b: the autoregressive rows (the controls and the reference) and the configurations
// whose names contain a or b; a quick look, never written
const ONLY = values.only.split(',').filter(Boolean);
if (ONLY.length > 0 && values.write) fail('--only runs a part of the comparison: it cannot --write');

/** The real model as `power quantize` writes it in `type` (made once into .cache/bench/weights). */
function modelIn(type: string): string {
  if (type === 'q4_k_m') return MODEL;
  const out = join(ROOT, '.cache', 'bench', 'weights', `gemma-3-270m-${type}.gguf`);
  if (existsSync(out)) return out;
  mkdirSync(dirname(out), { recursive: true });
  console.log(`power quantize ${relative(ROOT, MODEL)} → ${relative(ROOT, out)}`);
  const q = powerSync(['quantize', MODEL, out, '--recipe', type, '--allow-requantize', '--threads', String(THREADS)]);
  if (q.status !== 0) fail(`power quantize --recipe ${type} failed: ${q.stderr}`);
  return out;
}

const weightConfigs = (type: string): Config[] => {
  const model = modelIn(type);
  return [
    { name: `llama-server, autoregressive, ${type}`, server: 'llama-server', flags: [], model, weight: type },
    { name: `Power, autoregressive, ${type}`, server: 'power', strategy: 'none', model, weight: type },
    { name: `Power \`suffix\`, K${KMAX}, ${type}`, server: 'power', strategy: 'suffix', k: KMAX, model, weight: type },
  ];
};

if (WEIGHTS.length > 0 && ONLY.length > 0) fail('--weights and --only do not go together');
const CONFIGS =
  WEIGHTS.length > 0
    ? WEIGHTS.flatMap(weightConfigs)
    : ONLY.length > 0
      ? ALL_CONFIGS.filter((c) => c.name.includes('autoregressive') || ONLY.some((o) => c.name.includes(o)))
      : ALL_CONFIGS;

interface Server {
  base: string;
  headers: Record<string, string>;
  model: string;
  child: ChildProcess;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}

/** llama-server with the model and a configuration's flags; no prompt cache, one slot. */
async function startLlamaServer(exe: string, flags: readonly string[], model: string): Promise<Server> {
  const port = await freePort();
  const args = ['-m', model, '-c', String(CTX), '-t', String(THREADS), '-tb', String(THREADS), '-np', '1', '--host', '127.0.0.1'];
  args.push('--port', String(port), '--no-webui', ...flags);
  const child = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-8000)));
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(child, base, { log: () => log, what: 'llama-server', timeoutMs: 180_000, fail });
  return { base, headers: {}, model: 'gemma', child };
}

/** power serve over a models folder that holds only the model. */
async function startPower(file: string): Promise<Server> {
  const dir = join(ROOT, '.cache', 'bench', 'vs-llama-server');
  const models = join(dir, file === MODEL ? 'models' : `models-${basename(file, '.gguf')}`);
  mkdirSync(models, { recursive: true });
  const link = join(models, basename(file));
  if (!existsSync(link)) symlinkSync(file, link);
  // a fresh data folder: no store of earlier replies (suffix) from another configuration or round
  rmSync(join(dir, 'data'), { recursive: true, force: true });
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const args = [POWER_BIN, 'serve', '--port', String(port), '--token', token, '--models-dir', models, '--data-dir', join(dir, 'data')];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-8000)));
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}` };
  await waitHealthy(child, base, { headers, log: () => log, what: 'power serve', timeoutMs: 180_000, fail });
  const list = (await (await fetch(`${base}/v1/models`, { headers })).json()) as { data: { id: string }[] };
  const model = list.data.find((m) => m.id.includes('gemma'))?.id;
  if (!model) fail(`power serve lists no gemma model: ${JSON.stringify(list)}`);
  // loaded with llama-server's threads and context; /v1 then uses the loaded model as it is
  const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers });
  const { api, close } = createApiClient(powerApi, ws);
  try {
    const entry = (await api.models.list({})).entries.find((e) => e.path.endsWith(basename(file)));
    if (!entry) fail(`power serve's library has no ${basename(file)}`);
    await api.engine.load({ modelId: entry.id, contextSize: CTX, threads: THREADS });
  } finally {
    close();
  }
  return { base, headers, model, child };
}

// ------------------------------------------------------------------ one streamed request

interface Sample {
  text: string;
  tokens: number;
  promptTokens: number | null;
  /** ms from the request to the first streamed text */
  ttftMs: number;
  /** tok/s from the first to the last streamed token */
  decode: number | null;
  drafted: number | null;
  accepted: number | null;
}

type Chunk = {
  choices?: { text?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  timings?: { prompt_n?: number; predicted_n?: number; draft_n?: number; draft_n_accepted?: number };
  power?: { stats?: { proposed?: number; accepted?: number } };
};

async function complete(server: Server, config: Config, prompt: string): Promise<Sample> {
  const body: Record<string, unknown> = {
    model: server.model,
    prompt,
    max_tokens: TOKENS,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (config.server === 'power') Object.assign(body, { strategy: config.strategy, ...(config.k ? { k: config.k } : {}) });
  else Object.assign(body, { cache_prompt: false, top_k: 1 });
  const started = performance.now();
  const res = await fetch(`${server.base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...server.headers },
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body) fail(`${config.name}: HTTP ${res.status} ${await res.text()}`);
  let text = '';
  let first: number | null = null;
  let last = started;
  let tokens: number | null = null;
  let promptTokens: number | null = null;
  let drafted: number | null = null;
  let accepted: number | null = null;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('');
      if (!data || data === '[DONE]') continue;
      const c = JSON.parse(data) as Chunk;
      const piece = c.choices?.[0]?.text ?? '';
      if (piece) {
        first ??= now;
        last = now;
        text += piece;
      }
      if (c.usage?.completion_tokens !== undefined) tokens = c.usage.completion_tokens;
      if (c.usage?.prompt_tokens !== undefined) promptTokens = c.usage.prompt_tokens;
      if (c.timings) {
        tokens ??= c.timings.predicted_n ?? null;
        promptTokens ??= c.timings.prompt_n ?? null;
        if (c.timings.draft_n !== undefined) {
          drafted = c.timings.draft_n;
          accepted = c.timings.draft_n_accepted ?? 0;
        }
      }
      if (c.power?.stats?.proposed !== undefined) {
        drafted = c.power.stats.proposed;
        accepted = c.power.stats.accepted ?? 0;
      }
    }
  }
  if (first === null || tokens === null) fail(`${config.name}: the stream carried no text or no token count`);
  const span = (last - first) / 1000;
  return {
    text,
    tokens,
    promptTokens,
    ttftMs: first - started,
    decode: tokens > 1 && span > 0 ? (tokens - 1) / span : null,
    drafted,
    accepted,
  };
}

// ------------------------------------------------------------------ the run

ensureLlamaSource('CMakeLists.txt', fail, (l) => console.log(l), LLAMA_STOCK_SRC);
const serverExe = join(LLAMA_STOCK_SRC, 'build', 'bin', 'llama-server');
const built = buildLlamaTools(
  { src: LLAMA_STOCK_SRC, build: join(LLAMA_STOCK_SRC, 'build'), targets: ['llama-server'], defs: { GGML_CPU_AMX: 'OFF' } },
  fail,
);
if (built) console.log(`built llama-server in ${built.toFixed(0)} s`);

/**
 * What one round of K64 + 1 rows costs on this machine against a one-row round: the ceiling of
 * any strategy on these tasks (every draft accepted). Power's engine alone, before any server
 * starts: the request sent again (the task marked `again`) drafts K64 from the store round after
 * round; the autoregressive rounds of a session of its own give the one-row figure. Medians of
 * the rounds' wall time (propose, verify, sample and commit).
 */
async function roundCosts(text: string): Promise<{ fullMs: number | null; oneMs: number | null }> {
  const engine = EngineClient.start();
  try {
    const { modelId } = await engine.call('loadModel', { path: MODEL, gpuLayers: 0 });
    const prompt = await engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false });
    const roundsOf = async (strategy: 'none' | 'suffix', sends: number) => {
      const k = strategy === 'none' ? 0 : KMAX;
      const { sessionId } = await engine.call('createSession', { modelId, contextSize: CTX, threads: THREADS, strategy, k });
      let rounds: RoundRecord[] = [];
      for (let i = 0; i < sends; i++)
        rounds = (await runRequest(engine, { sessionId, prompt, maxTokens: TOKENS, sampling: SAMPLING_DEFAULTS })).rounds;
      if (strategy === 'suffix') await engine.call('suffixStore', { sessionId, clear: true });
      await engine.call('disposeSession', { sessionId });
      return rounds;
    };
    const ms = (rs: readonly RoundRecord[]) => medianOf(rs.map((r) => (r.endUs - r.startUs) / 1000));
    const one = ms(await roundsOf('none', 1));
    const full = ms((await roundsOf('suffix', 2)).filter((r) => r.proposed === KMAX));
    await engine.call('disposeModel', { modelId });
    return { fullMs: full, oneMs: one };
  } finally {
    await engine.close();
  }
}
const again = TASKS.find((t) => t.again);
const costs = again && WEIGHTS.length === 0 ? await roundCosts(again.text) : null;
if (costs) console.log(`a round of ${KMAX + 1} rows: ${costs.fullMs?.toFixed(1)} ms; of one row: ${costs.oneMs?.toFixed(1)} ms`);

const runStarted = performance.now();
const loadStart = load1();
// samples[config][kind] over the rounds
const samples = new Map<string, Map<string, Sample[]>>(CONFIGS.map((c) => [c.name, new Map(TASKS.map((p) => [p.kind, []]))]));
for (let round = 0; round < ROUNDS; round++) {
  // alternate the order of the configurations from one round to the next
  const order = round % 2 === 0 ? CONFIGS : [...CONFIGS].reverse();
  for (const config of order) {
    const model = config.model ?? MODEL;
    const server = config.server === 'power' ? await startPower(model) : await startLlamaServer(serverExe, config.flags ?? [], model);
    try {
      // a warm-up request: the first one pays for page faults and, in Power, the engine host's start
      await complete(server, config, 'Hello');
      for (const p of TASKS) {
        // a request sent again: the first send is not measured (llama-server's ngram-mod pool and
        // Power's store of earlier replies both outlive it)
        if (p.again) await complete(server, config, p.text);
        const s = await complete(server, config, p.text);
        samples.get(config.name)!.get(p.kind)!.push(s);
        console.log(
          `round ${round + 1} ${config.name} ${p.kind}: ${s.promptTokens} prompt tokens, first token ${s.ttftMs.toFixed(0)} ms, ` +
            `${s.decode?.toFixed(1)} tok/s${s.drafted ? `, ${s.accepted}/${s.drafted} accepted` : ''}`,
        );
      }
    } finally {
      await stop(server.child);
    }
  }
}
const minutes = (performance.now() - runStarted) / 60_000;

// ------------------------------------------------------------------ the tables

const kinds = TASKS.map((p) => p.kind);
const fmt = (v: number | null, digits = 1): string => (v === null ? '-' : v.toFixed(digits));
const controlText = (kind: string): string | undefined => samples.get('Power, autoregressive')!.get(kind)![0]?.text;
const listOf = (config: string, kind: string): Sample[] => samples.get(config)!.get(kind)!;
const decodeOf = (config: string, kind: string): number | null => medianOf(listOf(config, kind).map((s) => s.decode));
const prefillOf = (config: string, kind: string): number | null =>
  medianOf(listOf(config, kind).map((s) => (s.promptTokens ? s.promptTokens / (s.ttftMs / 1000) : null)));

const lines: string[] = [];
lines.push(
  `## Power against llama-server on the real model${WEIGHTS.length > 0 ? ', per weight type' : ''} (bench/vs-llama-server.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end; Gemma 3 270M ${WEIGHTS.length > 0 ? 'Q4_K_M, re-quantized to each type' : 'Q4_K_M'}; ` +
    `${THREADS} threads on both; llama-server built from the same release as shipped (AMX compiled out); one server at a time; ` +
    `streamed \`/v1/completions\`, greedy, ${TOKENS} tokens at most; ${ROUNDS} rounds, the configurations in alternating order; ` +
    `medians; run time ${minutes.toFixed(1)} min. Rerun: \`${benchCommand('vs-llama-server', ['--tokens', String(TOKENS), '--rounds', String(ROUNDS), '--threads', String(THREADS), '--k', String(K), ...(values.tasks === 'kinds' ? [] : ['--tasks', values.tasks]), ...(WEIGHTS.length > 0 ? ['--weights', values.weights] : []), '--write'])}\`.`,
);
const ratioOf = (a: number | null, b: number | null): number | null => (a && b ? a / b : null);
function comparisonTables(): void {
  lines.push(
    '',
    "Decode tok/s by the client's clock (first to last streamed token) · acceptance of the drafted tokens · the same text as Power's autoregressive reply:",
    '',
    `| decode | ${kinds.join(' | ')} |`,
    `| --- | ${kinds.map(() => '---').join(' | ')} |`,
  );
  for (const c of CONFIGS) {
    const cells = kinds.map((kind) => {
      const list = samples.get(c.name)!.get(kind)!;
      const drafted = medianOf(list.map((s) => s.drafted));
      const accepted = medianOf(list.map((s) => s.accepted));
      const same = list.every((s) => s.text === controlText(kind));
      const acc = drafted
        ? ` · ${Math.round((100 * (accepted ?? 0)) / drafted)} % of ${drafted}`
        : c.name.includes('autoregressive')
          ? ''
          : ' · no drafts';
      return `${fmt(decodeOf(c.name, kind))}${acc}${same ? '' : ' · **differs**'}`;
    });
    lines.push(`| ${c.name} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    "Prefill tok/s (prompt tokens / time to the first streamed token, the client's clock, no prompt cache), autoregressive:",
    '',
  );
  lines.push(
    `| prefill | ${kinds.map((k) => `${k} (${samples.get('Power, autoregressive')!.get(k)![0]?.promptTokens ?? '?'} tokens)`).join(' | ')} |`,
  );
  lines.push(`| --- | ${kinds.map(() => '---').join(' | ')} |`);
  for (const name of ['llama-server, autoregressive', 'llama-server, autoregressive, `-fa off`', 'Power, autoregressive']) {
    lines.push(`| ${name} | ${kinds.map((k) => fmt(prefillOf(name, k))).join(' | ')} |`);
  }
  const ratio = (a: number | null, b: number | null): string => {
    const r = ratioOf(a, b);
    return r === null ? '-' : `${r.toFixed(2)}×`;
  };
  lines.push(
    `| Power / llama-server | ${kinds.map((k) => ratio(prefillOf('Power, autoregressive', k), prefillOf('llama-server, autoregressive', k))).join(' | ')} |`,
    `| Power / llama-server \`-fa off\` | ${kinds.map((k) => ratio(prefillOf('Power, autoregressive', k), prefillOf('llama-server, autoregressive, `-fa off`', k))).join(' | ')} |`,
  );
  lines.push('', 'Ratios of decode rates (medians):', '');
  lines.push(`| | ${kinds.join(' | ')} |`, `| --- | ${kinds.map(() => '---').join(' | ')} |`);
  lines.push(
    `| Power AR / llama-server AR | ${kinds.map((k) => ratio(decodeOf('Power, autoregressive', k), decodeOf('llama-server, autoregressive', k))).join(' | ')} |`,
    `| Power AR / llama-server AR \`-fa off\` | ${kinds.map((k) => ratio(decodeOf('Power, autoregressive', k), decodeOf('llama-server, autoregressive, `-fa off`', k))).join(' | ')} |`,
  );
  const best = (server: 'power' | 'llama-server', kind: string): { name: string; rate: number | null } => {
    let top = { name: '-', rate: null as number | null };
    for (const c of CONFIGS.filter((c) => c.server === server)) {
      const r = decodeOf(c.name, kind);
      if (r !== null && (top.rate === null || r > top.rate)) top = { name: c.name, rate: r };
    }
    return top;
  };
  lines.push(
    `| Power's best / llama-server's best | ${kinds.map((k) => ratio(best('power', k).rate, best('llama-server', k).rate)).join(' | ')} |`,
  );
  // the suffix drafter's targets (issue 56), where it ran with its defaults
  const suffixName = `Power \`suffix\`, K${KMAX}`;
  if (CONFIGS.some((c) => c.name === suffixName)) {
    const bestOther = (kind: string): number | null => {
      const rates = CONFIGS.filter((c) => c.server === 'power' && c.strategy !== 'suffix').map((c) => decodeOf(c.name, kind) ?? 0);
      return Math.max(0, ...rates) || null;
    };
    lines.push(
      `| \`suffix\` K${KMAX} / Power AR | ${kinds.map((k) => ratio(decodeOf(suffixName, k), decodeOf('Power, autoregressive', k))).join(' | ')} |`,
      `| \`suffix\` K${KMAX} / llama-server's best | ${kinds.map((k) => ratio(decodeOf(suffixName, k), best('llama-server', k).rate)).join(' | ')} |`,
      `| \`suffix\` K${KMAX} / Power's best other | ${kinds.map((k) => ratio(decodeOf(suffixName, k), bestOther(k))).join(' | ')} |`,
    );
  }
  if (costs?.fullMs && costs.oneMs) {
    const ceiling = ((KMAX + 1) * 1000) / costs.fullMs;
    lines.push(
      '',
      `A round of ${KMAX + 1} rows (K${KMAX}, Power's engine alone, the request sent again) costs ${costs.fullMs.toFixed(1)} ms against ` +
        `${costs.oneMs.toFixed(1)} ms for an autoregressive round: with every draft accepted, at most ${ceiling.toFixed(0)} tok/s, ` +
        `${(ceiling / (1000 / costs.oneMs)).toFixed(2)}× autoregressive decode, the ceiling of every speculative figure above.`,
    );
  }
  const llamaSame = kinds.filter((k) => samples.get('llama-server, autoregressive')!.get(k)![0]?.text === controlText(k));
  lines.push(
    '',
    `llama-server's autoregressive text equals Power's on ${llamaSame.length} of ${kinds.length} prompts (${llamaSame.join(', ') || 'none'}); ` +
      "where it differs, its released kernels round differently from Power's batch-invariant ones.",
  );
}

/** --weights: per type, each server's autoregressive decode and prefill, and Power's `suffix` K64 against its own reply. */
function weightsTables(): void {
  const span = (values: readonly (number | null)[]): string => {
    const v = values.filter((x): x is number => x !== null);
    if (v.length === 0) return '-';
    const [lo, hi, mid] = [Math.min(...v), Math.max(...v), medianOf(v)!];
    return `${mid.toFixed(2)}× (${lo.toFixed(2)}–${hi.toFixed(2)})`;
  };
  const per = (type: string) => ({
    llama: `llama-server, autoregressive, ${type}`,
    power: `Power, autoregressive, ${type}`,
    suffix: `Power \`suffix\`, K${KMAX}, ${type}`,
  });
  lines.push(
    '',
    "Per type, over the prompts (median, in brackets the lowest and highest prompt): Power's autoregressive decode and prefill " +
      "against llama-server's (tok/s medians over the rounds, each prompt's ratio); Power's `suffix` K64 against Power's " +
      "autoregressive decode, its acceptance, and whether every reply equals the autoregressive one; llama-server's text against Power's.",
    '',
    `| type | Power AR / llama-server AR, decode | prefill | Power AR decode, tok/s | \`suffix\` K${KMAX} / Power AR | \`suffix\` acceptance | \`suffix\` = AR | llama-server = Power |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const type of WEIGHTS) {
    const n = per(type);
    const text = (config: string, kind: string) => listOf(config, kind).map((s) => s.text);
    const same = (config: string) => kinds.filter((k) => text(config, k).every((t) => t === text(n.power, k)[0]));
    const total = (field: 'drafted' | 'accepted') =>
      kinds.reduce((a, k) => a + (medianOf(listOf(n.suffix, k).map((s) => s[field])) ?? 0), 0);
    const [drafted, accepted] = [total('drafted'), total('accepted')];
    lines.push(
      `| ${type} | ${span(kinds.map((k) => ratioOf(decodeOf(n.power, k), decodeOf(n.llama, k))))} | ` +
        `${span(kinds.map((k) => ratioOf(prefillOf(n.power, k), prefillOf(n.llama, k))))} | ` +
        `${fmt(medianOf(kinds.map((k) => decodeOf(n.power, k))))} | ${span(kinds.map((k) => ratioOf(decodeOf(n.suffix, k), decodeOf(n.power, k))))} | ` +
        `${drafted ? `${Math.round((100 * accepted) / drafted)} % of ${drafted}` : 'no drafts'} | ` +
        `${same(n.suffix).length === kinds.length ? 'yes' : `**differs** on ${kinds.filter((k) => !same(n.suffix).includes(k)).join(', ')}`} | ` +
        `${same(n.llama).length} of ${kinds.length} |`,
    );
  }
}
if (WEIGHTS.length > 0) weightsTables();
else comparisonTables();
const md = lines.join('\n') + '\n';
console.log('\n' + md);
if (values.write) {
  writeBetweenMarkers(RESULTS_REAL_MD, BEGIN, END, `${BEGIN}\n${md}${END}`, '# Benchmarks on the real model\n');
  console.log(`wrote ${relative(ROOT, RESULTS_REAL_MD)}`);
}
