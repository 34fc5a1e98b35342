// A long reply streamed through `power serve`'s /v1/chat/completions against the same request
// through `power generate --json`, in one run: the decode rate a client sees, and the serving
// process's CPU time per token at the start and at the end of the reply (flat when the work per
// round does not grow with the reply). Greedy, the autoregressive control, on the synthetic
// target.gguf; medians over repetitions, the two front doors alternating.
//
//   node --import tsx bench/serve-stream.ts [--tokens 4000] [--reps 3] [--write]
//
// --write appends the table to bench/RESULTS-cpu.md. Needs dist/ and the addon (npm ci).
import { spawn } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { WebSocket } from 'ws';

import { powerApi } from '../contract/api/index.js';
import { createApiClient } from '../contract/transport/ws-client.js';
import { MODELS_CACHE, ROOT } from '../node/paths.js';
import { cpuSeconds } from './lib/cpu-time.js';
import { isoSeconds } from './lib/machine.js';
import { appendSection, RESULTS_CPU_MD, SERVE_STREAM_HEADING } from './lib/results.js';
import { failer, POWER_BIN, powerSync, requireDist } from './lib/run.js';
import { medianOf, medianRatio } from './lib/stats.js';

const { values } = parseArgs({
  options: { tokens: { type: 'string', default: '4000' }, reps: { type: 'string', default: '3' }, write: { type: 'boolean', default: false } },
});
const tokens = Number(values.tokens);
const reps = Number(values.reps);
const CONTEXT = tokens + 256;
const PROMPT = 'hello world';
const WINDOW = Number(process.env.POWER_BENCH_WINDOW ?? 100);

requireDist(failer('serve-stream'));

async function startServe(): Promise<{ origin: string; token: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [POWER_BIN, 'serve', '--port', '0', '--models-dir', MODELS_CACHE, '--data-dir', join(ROOT, '.cache', 'bench-serve-data')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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

interface StreamRun {
  rate: number;
  cpuFirst: number;
  cpuLast: number;
  tokens: number;
}

/** One streamed chat completion; the CPU time of the serving process per chunk over the first and the last WINDOW chunks. */
async function streamOnce(serve: { origin: string; token: string; pid: number }): Promise<StreamRun> {
  // a connection of its own (no keep-alive): the generate runs in between outlast the server's idle timeout
  const body = JSON.stringify({ model: 'target', messages: [{ role: 'user', content: PROMPT }], max_tokens: tokens, temperature: 0, stream: true });
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
  const times: number[] = [];
  const cpu: number[] = []; // sparse: the CPU time at the window edges
  let buffer = '';
  res.setEncoding('utf8');
  for await (const chunk of res as AsyncIterable<string>) {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const data = JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] };
      if (data.choices?.[0]?.delta?.content) {
        times.push(performance.now());
        // read at the window edges only: reading /proc at every chunk would take the cores the
        // server and the engine need (the reply has `tokens` chunks unless it ends early)
        const i = times.length - 1;
        if (i === 0 || i === WINDOW || i === tokens - 1 - WINDOW || i === tokens - 1) cpu[i] = cpuSeconds(serve.pid);
      }
    }
  }
  const n = times.length;
  if (n !== tokens) throw new Error(`${n} content chunks, not ${tokens} (the reply ended early)`);
  return {
    rate: ((n - 1) * 1000) / (times[n - 1]! - times[0]!),
    cpuFirst: ((cpu[WINDOW]! - cpu[0]!) / WINDOW) * 1e6,
    cpuLast: ((cpu[n - 1]! - cpu[n - 1 - WINDOW]!) / WINDOW) * 1e6,
    tokens: n,
  };
}

function generateOnce(): number {
  const r = powerSync(
    ['generate', '--model', join(MODELS_CACHE, 'target.gguf'), '--prompt', PROMPT, '--max-tokens', String(tokens), '--ctx', String(CONTEXT), '--json'],
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
  const target = (await api.models.list({})).entries.find((e) => e.name === 'target');
  if (!target) throw new Error(`no target.gguf in ${MODELS_CACHE} (npx power make-models)`);
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
    console.log(`rep ${i + 1}: /v1 ${streamed.at(-1)!.rate.toFixed(0)} tok/s (${streamed.at(-1)!.tokens} chunks), generate ${generated.at(-1)!.toFixed(0)} tok/s`);
  }
  const ratio = medianRatio(streamed.map((s, i) => [s.rate, generated[i]] as const));
  const growth = medianRatio(streamed.map((s) => [s.cpuLast, s.cpuFirst] as const));
  const med = (xs: readonly number[]): string => medianOf(xs)?.toFixed(0) ?? '-';
  const two = (x: number | null): string => x?.toFixed(2) ?? '-';
  const table = [
    '',
    `${SERVE_STREAM_HEADING} (bench/serve-stream.ts, ${isoSeconds()})`,
    '',
    `target.gguf, greedy, autoregressive, ${tokens} tokens, context ${CONTEXT}, ${reps} repetitions (medians); the /v1 rate is the client's (chunks − 1 over the time from the first to the last), generate's its steady decode rate.`,
    '',
    `| /v1 streamed tok/s | power generate --json tok/s | ratio | serving CPU µs/token, first ${WINDOW} | last ${WINDOW} | last / first |`,
    '| --- | --- | --- | --- | --- | --- |',
    `| ${med(streamed.map((s) => s.rate))} | ${med(generated)} | ${two(ratio)} | ${med(streamed.map((s) => s.cpuFirst))} | ${med(streamed.map((s) => s.cpuLast))} | ${two(growth)} |`,
    '',
  ].join('\n');
  console.log(table);
  if (values.write) appendSection(RESULTS_CPU_MD, table);
} finally {
  serve.stop();
}
