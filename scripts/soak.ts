#!/usr/bin/env node
// Soak: one real `power serve` (bin/power.js over dist/) on a synthetic model, streaming replies
// without pause for N minutes — chat replies over /ws (send, regenerate, a stop now and then; a
// fresh chat every 20 replies, the old one deleted, the connection renewed every 100) and a
// streamed /v1 completion every 10th — and printing the memory curve: the server's and the
// engine host's RSS, the host's threads, replies and tokens so far. Not part of npm test.
//
//   npx tsc -p tsconfig.build.json && node --import tsx scripts/soak.ts [--minutes 30] [--every 30] [--model .cache/models/target.gguf]
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { WebSocket } from 'ws';

import { powerApi } from '../app/contract/api/index.js';
import { createApiClient } from '../app/contract/transport/ws-client.js';
import { MODELS_CACHE } from '../app/paths.js';
import { engineHostPid, rssOf, startPowerServe, type PowerServe } from '../test/fixtures/serve.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    every: { type: 'string', default: '30' },
    model: { type: 'string', default: join(MODELS_CACHE, 'target.gguf') },
  },
});
const minutes = Number(values.minutes);
const everyS = Number(values.every);
const model = resolve(values.model!);
if (!(minutes > 0) || !(everyS > 0)) throw new Error('--minutes and --every take positive numbers');

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

function connect(serve: PowerServe) {
  return createApiClient(powerApi, new WebSocket(`${serve.origin.replace('http', 'ws')}/ws`, { headers: serve.auth }) as never);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'power-soak-'));
  const serve = await startPowerServe(['--data-dir', join(dir, 'data'), '--models-dir', dirname(model)]);
  let client = connect(serve);
  const name = (await client.api.models.list({})).entries.find((e) => e.path === model)?.name;
  if (!name) throw new Error(`${model} is not in the library`);
  const modelId = (await client.api.models.list({})).entries.find((e) => e.name === name)!.id;
  await client.api.engine.load({ modelId, device: 'cpu', threads: 1, contextSize: 4096, draftMethod: { strategy: 'ngram' } });

  let replies = 0;
  let tokens = 0;
  let errors = 0;
  let chatId = (await client.api.chats.create({ title: 'soak' })).id;
  const started = Date.now();
  const curve: { s: number; rss: number; hostRss: number; threads: number }[] = [];
  const sample = (): void => {
    const host = engineHostPid(serve.child.pid!);
    const rss = rssOf(serve.child.pid!);
    const hostRss = host ? rssOf(host) : 0;
    const threads = host ? Number(/Threads:\s+(\d+)/.exec(readStatus(host))![1]) : 0;
    const s = Math.round((Date.now() - started) / 1000);
    curve.push({ s, rss, hostRss, threads });
    console.log(
      `${String(s).padStart(5)} s  server ${mb(rss).padStart(7)} MB  host ${mb(hostRss).padStart(7)} MB  host threads ${threads}  replies ${replies}  tokens ${tokens}  errors ${errors}`,
    );
  };
  console.log(`soak: ${minutes} min on ${name}, a sample every ${everyS} s (pid ${serve.child.pid})`);
  sample();
  const timer = setInterval(sample, everyS * 1000);

  while (Date.now() - started < minutes * 60_000) {
    if (replies > 0 && replies % 100 === 0) {
      client.close();
      client = connect(serve);
    }
    if (replies > 0 && replies % 20 === 0) {
      await client.api.chats.delete({ chatId });
      chatId = (await client.api.chats.create({ title: `soak ${replies}` })).id;
    }
    try {
      if (replies % 10 === 9) tokens += await v1(serve, name);
      else tokens += await chatReply(client, chatId, replies);
    } catch (error) {
      errors++;
      console.log(`reply ${replies}: ${(error as Error).message}`);
    }
    replies++;
  }
  clearInterval(timer);
  sample();
  client.close();
  await serve.stop('SIGTERM');
  await rm(dir, { recursive: true, force: true });

  const first = curve[1] ?? curve[0]!; // the first sample after warm-up
  const last = curve.at(-1)!;
  const peak = (key: 'rss' | 'hostRss') => Math.max(...curve.map((c) => c[key]));
  console.log(
    `soak done: ${replies} replies, ${tokens} tokens, ${errors} errors in ${minutes} min; ` +
      `server ${mb(first.rss)} → ${mb(last.rss)} MB (peak ${mb(peak('rss'))}), engine host ${mb(first.hostRss)} → ${mb(last.hostRss)} MB (peak ${mb(peak('hostRss'))}), ` +
      `host threads ${first.threads} → ${last.threads}`,
  );
}

function readStatus(pid: number): string {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}

/** One chat reply (send, or every third a regenerate; every seventh stopped after its first tokens): its token count. */
async function chatReply(client: ReturnType<typeof connect>, chatId: string, n: number): Promise<number> {
  const { api } = client;
  let id = '';
  let count = 0;
  const early: { messageId: string; n: number }[] = [];
  let settle: (e: Error | null) => void = () => {};
  const ended = new Promise<Error | null>((r) => (settle = r));
  const stopEarly = n % 7 === 6;
  const offs = [
    api.generation.onRounds((e) => {
      const k = e.rounds.reduce((s, r) => s + r.tokenIds.length, 0);
      if (!id) return void early.push({ messageId: e.messageId, n: k });
      if (e.messageId !== id) return;
      count += k;
      if (stopEarly && count >= 4) void api.chats.stop({ chatId });
    }),
    api.generation.onDone((d) => d.messageId === id && settle(null)),
    api.generation.onError((e) => e.messageId === id && settle(new Error(`${e.error.code}: ${e.error.message}`))),
  ];
  try {
    const sampling = { maxTokens: 256 };
    const chat = await api.chats.get({ chatId });
    const start =
      n % 3 === 2 && chat.messages.length > 0
        ? api.chats.regenerate({ chatId, sampling })
        : api.chats.send({ chatId, content: `soak message ${n}`, sampling });
    id = (await start).assistantMessageId;
    count += early.filter((e) => e.messageId === id).reduce((s, e) => s + e.n, 0);
    const error = await ended;
    if (error) throw error;
    return count;
  } finally {
    offs.forEach((off) => off());
  }
}

/** One streamed /v1/completions: its completion tokens. */
async function v1(serve: PowerServe, model: string): Promise<number> {
  const res = await fetch(`${serve.origin}/v1/completions`, {
    method: 'POST',
    headers: { ...serve.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model,
      prompt: 'the cat sat on the mat',
      max_tokens: 128,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  const body = await res.text();
  if (res.status !== 200 || !body.includes('data: [DONE]')) throw new Error(`/v1: ${res.status} ${body.slice(-200)}`);
  const usage = /"completion_tokens":(\d+)/.exec(body);
  return usage ? Number(usage[1]) : 0;
}

await main();
