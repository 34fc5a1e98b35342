// A long reply streamed through `power serve`'s /v1/chat/completions against the same request
// through `power generate --json`, in one run: the decode rate a client sees, and the serving
// process's CPU time per round over the first and the last WINDOW rounds of the reply (flat when
// the work per round does not grow with the reply). Each chunk says how far the reply has come
// (its `power.rounds` and `power.tokens`): one chunk carries the rounds of one hand-over of the
// engine, so the windows are counted in rounds, not chunks. Greedy, the autoregressive control, on the synthetic
// target.gguf; medians over repetitions, the two front doors alternating.
//
// Each window also reports what its CPU time per round is made of: the hand-overs (chunks) it
// holds, their rounds, the CPU time per hand-over and the pace at which the rounds came. The
// serving work is per hand-over (one IPC message in, one SSE write out); the engine hands over
// every 16 rounds or every 16 ms, so when decode slows as the context fills, the same work per
// hand-over is spread over fewer rounds, or comes after a longer idle wait.
//
// --model long-f16-target.gguf takes the 8-block F16 model of the long contract instead
// (tools/models LONG_MODELS, written to .cache/bench): its decode rate changes little over a
// reply, so the work per hand-over is measured at a steady pace. --windows handovers counts the
// windows in hand-overs (the first and the last WINDOW chunks) instead of rounds; the serving
// process's CPU time is then read at every chunk.
//
//   node --import tsx bench/serve-stream.ts [--tokens 4000] [--reps 3] [--model FILE]
//        [--windows rounds|handovers] [--write]
//
// --write appends the table to bench/RESULTS-cpu.md. Needs dist/ and the addon (npm ci).
import { spawn } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';

import { WebSocket } from 'ws';

import { powerApi } from '../app/contract/api/index.js';
import { createApiClient } from '../app/contract/transport/ws-client.js';
import { BENCH_MODELS_CACHE, MODELS_CACHE, ROOT } from '../app/paths.js';
import { LONG_MODELS, makeModelFiles, type ModelParams } from '../tools/models/synthetic.js';
import { benchOptions } from './lib/args.js';
import { cpuSeconds } from './lib/cpu-time.js';
import { isoSeconds } from './lib/machine.js';
import { appendSection, RESULTS_CPU_MD, SERVE_STREAM_HEADING } from './lib/results.js';
import { failer, POWER_BIN, powerSync, requireDist } from './lib/run.js';
import { medianOf, medianRatio } from './lib/stats.js';

const values = benchOptions({ tokens: '4000', reps: '3', model: 'target.gguf', windows: 'rounds' }, ['write']);
const tokens = Number(values.tokens);
const reps = Number(values.reps);
const CONTEXT = tokens + 256;
const PROMPT = 'hello world';
const WINDOW = Number(process.env.POWER_BENCH_WINDOW ?? 100);
const BY_HANDOVERS = values.windows === 'handovers';
const fail = failer('serve-stream');
if (!BY_HANDOVERS && values.windows !== 'rounds') fail(`--windows takes rounds or handovers (got ${values.windows})`);

requireDist(fail);
const MODEL_FILE = values.model.endsWith('.gguf') ? values.model : `${values.model}.gguf`;
const MODEL_NAME = MODEL_FILE.slice(0, -'.gguf'.length);
const longModel = (LONG_MODELS as Record<string, { params: ModelParams } | undefined>)[MODEL_FILE];
const MODEL_DIR = longModel ? BENCH_MODELS_CACHE : MODELS_CACHE;
if (longModel) await makeModelFiles(BENCH_MODELS_CACHE, { [MODEL_FILE]: longModel });

async function startServe(): Promise<{ origin: string; token: string; pid: number; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [POWER_BIN, 'serve', '--port', '0', '--models-dir', MODEL_DIR, '--data-dir', join(ROOT, '.cache', 'bench-serve-data')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /Power is ready at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([\w.~-]+)/.exec(out);
      if (m) resolve(m);
    });
    child.on('exit', (code) => reject(new Error(`power serve exited (${code})`)));
  });
  return { origin: ready[1]!, token: ready[2]!, pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

/** One window of a reply: what the serving process spent on it and how the rounds came. */
interface WindowFigures {
  cpuPerRound: number;
  cpuPerChunk: number;
  roundsPerChunk: number;
  /** rounds per second over the window, as the client received them */
  pace: number;
}

interface StreamRun {
  rate: number;
  first: WindowFigures;
  last: WindowFigures;
  chunks: number;
}

interface Seen {
  at: number;
  tokens: number;
  rounds: number;
  cpu: number | null;
}

/** The window between two sampled chunks (the first's work is before the window, the second's in it). */
function windowFigures(seen: readonly Seen[], from: Seen, to: Seen): WindowFigures {
  const rounds = to.rounds - from.rounds;
  const chunks = seen.indexOf(to) - seen.indexOf(from);
  const cpu = to.cpu! - from.cpu!;
  return {
    cpuPerRound: (cpu / rounds) * 1e6,
    cpuPerChunk: (cpu / chunks) * 1e6,
    roundsPerChunk: rounds / chunks,
    pace: (rounds * 1000) / (to.at - from.at),
  };
}

/** One streamed chat completion; the serving process's CPU time per round over the first and the last WINDOW rounds. */
async function streamOnce(serve: { origin: string; token: string; pid: number }): Promise<StreamRun> {
  // a connection of its own (no keep-alive): the generate runs in between outlast the server's idle timeout
  const body = JSON.stringify({
    model: MODEL_NAME,
    messages: [{ role: 'user', content: PROMPT }],
    max_tokens: tokens,
    temperature: 0,
    stream: true,
  });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${serve.origin}/v1/chat/completions`, {
      method: 'POST',
      agent: false,
      headers: { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    });
    req.on('response', resolve).on('error', reject);
    req.end(body);
  });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
  // per chunk with text: when it came and how far the reply had come; the CPU time is read at
  // the chunks near the two windows only (reading /proc at every chunk would take the cores the
  // server and the engine need)
  const seen: Seen[] = [];
  // the last window ends at the last chunk but one: the last text chunk often arrives in one read
  // with the reply's final chunk, after the server's end-of-request work (digest, final stats),
  // which is not work per round; so every chunk of the last WINDOW + 64 rounds is sampled
  const tailFrom = tokens - WINDOW - 64;
  // the first window's chunks are sampled as often, so that reading /proc weighs on both alike
  const headTo = WINDOW + 64;
  let buffer = '';
  res.setEncoding('utf8');
  for await (const chunk of res as AsyncIterable<string>) {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const data = JSON.parse(event.slice(6)) as {
        choices?: { delta?: { content?: string } }[];
        power?: { tokens?: number; rounds?: number };
      };
      const progress = data.power;
      if (!data.choices?.[0]?.delta?.content || progress?.rounds === undefined || progress.tokens === undefined) continue;
      const sampled = BY_HANDOVERS || progress.rounds <= headTo || progress.rounds >= tailFrom;
      seen.push({ at: performance.now(), tokens: progress.tokens, rounds: progress.rounds, cpu: sampled ? cpuSeconds(serve.pid) : null });
    }
  }
  const last = seen.at(-1);
  if (!last || last.tokens !== tokens) throw new Error(`${last?.tokens ?? 0} tokens streamed, not ${tokens} (the reply ended early)`);
  const first = seen[0]!;
  const end = seen.at(-2)!;
  const at = (rounds: number) => seen.find((x) => x.rounds >= rounds && x.cpu !== null)!;
  if (BY_HANDOVERS && seen.length < 2 * WINDOW + 2) throw new Error(`${seen.length} chunks: fewer than two windows of ${WINDOW}`);
  const head = BY_HANDOVERS ? seen[WINDOW]! : at(WINDOW);
  const tail = BY_HANDOVERS ? seen.at(-2 - WINDOW)! : at(end.rounds - WINDOW);
  return {
    rate: ((last.tokens - first.tokens) * 1000) / (last.at - first.at),
    first: windowFigures(seen, first, head),
    last: windowFigures(seen, tail, end),
    chunks: seen.length,
  };
}

function generateOnce(): number {
  const r = powerSync(
    [
      'generate',
      '--model',
      join(MODEL_DIR, MODEL_FILE),
      '--prompt',
      PROMPT,
      '--max-tokens',
      String(tokens),
      '--ctx',
      String(CONTEXT),
      '--json',
    ],
    { maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(`power generate: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { stats: { steadyDecodeTokensPerSecond: number } }).stats.steadyDecodeTokensPerSecond;
}

const serve = await startServe();
try {
  // load with a context that holds the whole reply; /v1 then uses the loaded model as it is
  const ws = new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: { Authorization: `Bearer ${serve.token}` } });
  const { api, close } = createApiClient(powerApi, ws);
  const target = (await api.models.list({})).entries.find((e) => e.name === MODEL_NAME);
  if (!target) throw new Error(`no ${MODEL_FILE} in ${MODEL_DIR} (npx power make-models)`);
  await api.engine.load({ modelId: target.id, contextSize: CONTEXT });
  close();

  const streamed: StreamRun[] = [];
  const generated: number[] = [];
  for (let i = 0; i < reps; i++) {
    if (i % 2 === 0) {
      streamed.push(await streamOnce(serve));
      generated.push(generateOnce());
    } else {
      generated.push(generateOnce());
      streamed.push(await streamOnce(serve));
    }
    const run = streamed.at(-1)!;
    console.log(
      `rep ${i + 1}: /v1 ${run.rate.toFixed(0)} tok/s (${run.chunks} chunks), generate ${generated.at(-1)!.toFixed(0)} tok/s; ` +
        `serving CPU ${run.first.cpuPerRound.toFixed(0)} → ${run.last.cpuPerRound.toFixed(0)} µs/round, ${run.first.cpuPerChunk.toFixed(0)} → ${run.last.cpuPerChunk.toFixed(0)} µs/chunk`,
    );
  }
  const ratio = medianRatio(streamed.map((s, i) => [s.rate, generated[i]] as const));
  const growth = medianRatio(streamed.map((s) => [s.last.cpuPerRound, s.first.cpuPerRound] as const));
  const unit = BY_HANDOVERS ? 'hand-overs (chunks)' : 'rounds';
  const chunkGrowth = medianRatio(streamed.map((s) => [s.last.cpuPerChunk, s.first.cpuPerChunk] as const));
  const med = (xs: readonly number[]): string => medianOf(xs)?.toFixed(0) ?? '-';
  const two = (x: number | null): string => x?.toFixed(2) ?? '-';
  const both = (pick: (w: WindowFigures) => number, digits = 0): string =>
    `${medianOf(streamed.map((s) => pick(s.first)))?.toFixed(digits) ?? '-'} | ${medianOf(streamed.map((s) => pick(s.last)))?.toFixed(digits) ?? '-'}`;
  const table = [
    '',
    `${SERVE_STREAM_HEADING} (bench/serve-stream.ts, ${isoSeconds()})`,
    '',
    `${MODEL_FILE}, greedy, autoregressive, ${tokens} tokens, context ${CONTEXT}, ${reps} repetitions (medians); the /v1 rate is the client's (the tokens after the first chunk over the time from the first chunk to the last), generate's its steady decode rate; the serving CPU over the first ${WINDOW} ${unit} and the last ${WINDOW} before the reply's last chunk (which can arrive after the end-of-request work)${BY_HANDOVERS ? ', read at every chunk' : ', from the rounds each chunk reports'}.`,
    '',
    `| /v1 streamed tok/s | power generate --json tok/s | ratio | serving CPU µs/round, first ${WINDOW} | last ${WINDOW} | last / first |`,
    '| --- | --- | --- | --- | --- | --- |',
    `| ${med(streamed.map((s) => s.rate))} | ${med(generated)} | ${two(ratio)} | ${both((w) => w.cpuPerRound)} | ${two(growth)} |`,
    '',
    `What the windows hold (first ${WINDOW} | last ${WINDOW}, medians):`,
    '',
    '| rounds per chunk, first | last | serving CPU µs per chunk, first | last | last / first | rounds/s received, first | last |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    `| ${both((w) => w.roundsPerChunk, 1)} | ${both((w) => w.cpuPerChunk)} | ${two(chunkGrowth)} | ${both((w) => w.pace)} |`,
    '',
  ].join('\n');
  console.log(table);
  if (values.write) appendSection(RESULTS_CPU_MD, table);
} finally {
  serve.stop();
}
