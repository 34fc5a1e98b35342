// One node-llama-cpp measurement for bench/peers.ts, in its own process (node-llama-cpp loads
// its own prebuilt llama.cpp libraries, which must not meet Power's in one process: this file
// imports nothing of Power's):
//   node --import tsx bench/peers-nlc.ts '{"target":..., "draft":...|null, "k":4, "threads":2, "ctx":2048,
//                                          "tokens":128, "prompts":[[1,2,3],...], "minConfidence":null}'
// Greedy. Prints one JSON object: per prompt, the generated token ids, the decode rate (tokens
// after the first / time after the first) and the predictor's validated/refuted counts.
import { performance } from 'node:perf_hooks';

import { DraftSequenceTokenPredictor, getLlama, getModuleVersion, LlamaLogLevel, type LlamaContext, type Token } from 'node-llama-cpp';

/** What bench/peers.ts asks for. */
export interface NlcJob {
  target: string;
  draft: string | null;
  k: number;
  threads: number;
  ctx: number;
  tokens: number;
  prompts: number[][];
  minTokens?: number;
  minConfidence?: number | null;
}

/** What it prints. */
export interface NlcResult {
  version: string;
  llamaCppRelease: string | null;
  results: { tokens: number[]; ttftMs: number | null; decode: number | null; validated: number; refuted: number }[];
}

const job = JSON.parse(process.argv[2] ?? '') as NlcJob;
const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error });
const target = await llama.loadModel({ modelPath: job.target, gpuLayers: 0 });
const context = await target.createContext({ contextSize: job.ctx, threads: job.threads, sequences: 1, flashAttention: false });
let predictor: DraftSequenceTokenPredictor | undefined;
let draftContext: LlamaContext | undefined;
if (job.draft) {
  const draft = await llama.loadModel({ modelPath: job.draft, gpuLayers: 0 });
  draftContext = await draft.createContext({ contextSize: job.ctx, threads: job.threads, sequences: 1, flashAttention: false });
  const options: { maxTokens: number; minTokens: number; minConfidence?: number } = { maxTokens: job.k, minTokens: job.minTokens ?? 0 };
  if (job.minConfidence !== null && job.minConfidence !== undefined) options.minConfidence = job.minConfidence;
  predictor = new DraftSequenceTokenPredictor(draftContext.getSequence(), options);
}
const sequence = context.getSequence(predictor ? { tokenPredictor: predictor } : {});

const results: NlcResult['results'] = [];
for (const prompt of job.prompts) {
  await sequence.clearHistory();
  const tokens: number[] = [];
  let first: number | null = null;
  let last: number | null = null;
  const started = performance.now();
  for await (const token of sequence.evaluate(prompt as Token[], { temperature: 0 })) {
    const now = performance.now();
    if (first === null) first = now;
    last = now;
    tokens.push(token);
    if (tokens.length >= job.tokens) break;
  }
  const stats = sequence.tokenPredictions;
  results.push({
    tokens,
    ttftMs: first === null ? null : first - started,
    decode: first !== null && last !== null && tokens.length > 1 && last > first ? ((tokens.length - 1) * 1000) / (last - first) : null,
    validated: stats.validated,
    refuted: stats.refuted,
  });
}
const out: NlcResult = { version: await getModuleVersion(), llamaCppRelease: llama.llamaCppRelease?.release ?? null, results };
console.log(JSON.stringify(out));
await context.dispose();
await draftContext?.dispose();
await llama.dispose();
