// Structured output on the real model: what a JSON schema costs the autoregressive decode, and
// what the proposers win under it. Gemma 3 270M Q4_K_M (scripts/install-real-model.mjs), its
// early-exit draft (first 12 blocks), raw prompts that ask for JSON, greedy; per prompt the
// autoregressive run without and with the schema, then n-gram lookup and the draft model with
// the schema. "verified": proposals the target verified; "drafted": what the proposer drafted
// (the verified ones plus those the grammar refused before verification, native grammarCut).
// Every speculative run must emit its control's tokens (column "= AR").
//
//   node --import tsx bench/structured-output.ts [--tokens 128] [--k 4] [--threads 2] [--write]
//
// --write replaces its section of bench/RESULTS-real.md. Needs the built addon (build/addon-cpu).
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../app/contract/engine-types.js';
import { steadyDecodeTokensPerSecond } from '../app/contract/report/stats.js';
import type { Strategy } from '../app/contract/strategies.js';
import { readBuildInfo } from '../app/engine/build-info.js';
import { EngineClient } from '../app/engine/client.js';
import { ROOT } from '../app/paths.js';
import { runRequest, type RequestOutcome } from '../app/service/request.js';
import { writeEarlyExitDraft } from '../tools/models/early-exit-draft.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand, RESULTS_REAL_MD, writeBetweenMarkers } from './lib/results.js';

const values = benchOptions({ tokens: '128', k: '4', threads: '2' }, ['write']);
const { tokens, k, threads } = positiveIntegers(values, ['tokens', 'k', 'threads']);

const MODEL = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');
const DRAFT = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m-first12.gguf');
const BEGIN = '<!-- structured-output: begin -->';
const END = '<!-- structured-output: end -->';

const PERSON = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    age: { type: 'integer' },
    city: { type: 'string' },
    hobbies: { type: 'array', items: { type: 'string' } },
  },
  required: ['name', 'age', 'city', 'hobbies'],
};
const ITEMS = {
  type: 'array',
  items: {
    type: 'object',
    properties: { product: { type: 'string' }, price: { type: 'number' }, in_stock: { type: 'boolean' } },
    required: ['product', 'price', 'in_stock'],
  },
};
const CASES = [
  { name: 'person', prompt: 'Describe a person who lives in a city, as JSON.', schema: PERSON },
  { name: 'catalogue', prompt: 'A shop lists its products as a JSON array of objects with product, price and in_stock:\n', schema: ITEMS },
  { name: 'any object', prompt: 'Here is the configuration of the web server as a JSON object:\n', schema: { type: 'object' } },
];
const RUNS: { label: string; strategy: Strategy; draft?: boolean }[] = [
  { label: 'ngram', strategy: 'ngram' },
  { label: 'draft-model', strategy: 'draft-model', draft: true },
];

if (!existsSync(DRAFT)) await writeEarlyExitDraft(MODEL, DRAFT, 12);
const started = Date.now();
const loadAtStart = load1();
const engine = EngineClient.start();
const modelId = (await engine.call('loadModel', { path: MODEL, gpuLayers: 0 })).modelId;
const draftId = (await engine.call('loadModel', { path: DRAFT, gpuLayers: 0 })).modelId;
const session = async (strategy: Strategy, draft = false) =>
  (
    await engine.call('createSession', {
      modelId,
      contextSize: 1024,
      threads,
      strategy,
      k: strategy === 'none' ? 0 : k,
      s: 0,
      ...(draft ? { draftModelId: draftId } : {}),
    })
  ).sessionId;

const rate = (o: RequestOutcome) =>
  steadyDecodeTokensPerSecond(
    o.rounds.map((r) => ({ emitted: r.tokens.length, endUs: r.endUs })),
    2,
  ) ?? 0;
const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(0)} %`);

const rows: string[] = [];
for (const c of CASES) {
  const prompt = await engine.call('tokenize', { modelId, text: c.prompt, addSpecial: true, parseSpecial: false });
  const constrained: SamplingOptions = { ...SAMPLING_DEFAULTS, jsonSchema: JSON.stringify(c.schema) };
  const one = async (strategy: Strategy, sampling: SamplingOptions, draft = false) => {
    const sessionId = await session(strategy, draft);
    try {
      return await runRequest(engine, { sessionId, prompt, maxTokens: tokens, sampling });
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  };
  const free = await one('none', SAMPLING_DEFAULTS);
  const ar = await one('none', constrained);
  const cells = [`${rate(free).toFixed(1)}`, `${rate(ar).toFixed(1)} (${ar.tokens.length} tokens)`];
  for (const r of RUNS) {
    const out = await one(r.strategy, constrained, r.draft);
    const proposed = out.stats.proposed;
    const drafted = proposed + out.native.grammarCut;
    cells.push(
      `${rate(out).toFixed(1)} · ${pct(out.stats.accepted, proposed)} of ${proposed} verified · ${pct(out.stats.accepted, drafted)} of ${drafted} drafted · ${out.digest === ar.digest ? 'yes' : '**no**'}`,
    );
  }
  rows.push(`| ${c.name} | ${cells.join(' | ')} |`);
  console.error(`${c.name} done`);
}
await engine.call('disposeModel', { modelId: draftId });
await engine.call('disposeModel', { modelId });
await engine.close();

const info = readBuildInfo('cpu');
const md = [
  BEGIN,
  `## Structured output on the real model (bench/structured-output.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end (a shared machine); flavour cpu ` +
    `(llama.cpp ${info.llamaCppRelease}); Gemma 3 270M Q4_K_M, draft: its first 12 blocks; ${threads} threads; greedy; ` +
    `${tokens} tokens at most; K${k}; one run each; run time ${((Date.now() - started) / 60000).toFixed(1)} min. ` +
    `Rerun: \`${benchCommand('structured-output', ['--tokens', String(tokens), '--k', String(k), '--threads', String(threads), '--write'])}\`.`,
  '',
  'Decode tok/s after two warm-up rounds. Speculative cells: tok/s · acceptance of the verified proposals · acceptance of everything ' +
    'drafted (what verifying every proposal would give) · the same tokens as the autoregressive run with the schema.',
  '',
  `| schema | AR, free text | AR, schema | ${RUNS.map((r) => `${r.label} K${k}, schema`).join(' | ')} |`,
  `| --- | --- | --- | ${RUNS.map(() => '---').join(' | ')} |`,
  ...rows,
  '',
  END,
].join('\n');
console.log(md);
if (values.write) writeBetweenMarkers(RESULTS_REAL_MD, BEGIN, END, md, '# Results: real vocabularies\n');
