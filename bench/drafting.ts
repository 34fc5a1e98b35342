// Chains, p-min and adaptive K against the fixed profiles: acceptance (accepted / proposed) and
// steady decode tok/s, medians over prompts x repetitions, greedy, one thread each. The synthetic
// pairs (target.gguf + draft-close.gguf; hybrid-mtp.gguf for mtp, its S = K - 1) on the synthetic
// prompts (bench/lib/prompts.ts); with --real, the real model (Gemma 3 270M Q4_K_M) with n-gram
// chains on the first calibration tasks. Every run must emit the control's tokens (column "= AR").
//
//   node --import tsx bench/drafting.ts [--tokens 256] [--k 6] [--reps 2] [--threads 1] [--real] [--write]
//
// --write replaces its section of bench/RESULTS-drafting.md. Needs the built addon (build/addon-cpu).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { SAMPLING_DEFAULTS } from '../app/contract/engine-types.js';
import { strategyLabel, type Strategy } from '../app/contract/strategies.js';
import { readBuildInfo } from '../app/engine/build-info.js';
import { EngineClient } from '../app/engine/client.js';
import { ROOT } from '../app/paths.js';
import { runRequest } from '../app/service/request.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { PROMPTS } from './lib/prompts.js';
import { benchCommand, RESULTS_DRAFTING_MD, writeBetweenMarkers } from './lib/results.js';
import { medianOf } from './lib/stats.js';

const values = benchOptions({ tokens: '256', k: '6', reps: '2', threads: '1' }, ['real', 'write']);
const { tokens, k, reps, threads } = positiveIntegers(values, ['tokens', 'k', 'reps', 'threads']);

const MODELS = join(ROOT, '.cache', 'models');
const REAL = join(ROOT, '.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');
const BEGIN = '<!-- drafting: begin -->';
const END = '<!-- drafting: end -->';

interface Config {
  label: string;
  strategy: Strategy;
  fallbacks?: Strategy[];
  pMin?: number;
  adaptiveK?: boolean;
}
interface Pair {
  name: string;
  target: string;
  draft?: string;
  loadMtp?: boolean;
  s: number;
  /** the prompts as text (tokenized by the target) */
  prompts: readonly string[];
  configs: Config[];
}

const draftConfigs: Config[] = [
  { label: 'draft-model (fixed)', strategy: 'draft-model' },
  { label: 'ngram,draft-model', strategy: 'ngram', fallbacks: ['draft-model'] },
  { label: 'draft-model p-min 0.5', strategy: 'draft-model', pMin: 0.5 },
  { label: 'draft-model adaptive K', strategy: 'draft-model', adaptiveK: true },
];
const mtpConfigs: Config[] = [
  { label: 'mtp (fixed)', strategy: 'mtp' },
  { label: 'ngram,mtp', strategy: 'ngram', fallbacks: ['mtp'] },
  { label: 'mtp p-min 0.5', strategy: 'mtp', pMin: 0.5 },
  { label: 'mtp adaptive K', strategy: 'mtp', adaptiveK: true },
];
const pairs: Pair[] = [
  {
    name: 'target + draft-close',
    target: join(MODELS, 'target.gguf'),
    draft: join(MODELS, 'draft-close.gguf'),
    s: k,
    prompts: PROMPTS.slice(0, 4),
    configs: draftConfigs,
  },
  {
    name: 'hybrid-mtp',
    target: join(MODELS, 'hybrid-mtp.gguf'),
    loadMtp: true,
    s: k - 1,
    prompts: PROMPTS.slice(0, 4),
    configs: mtpConfigs,
  },
];
if (values.real) {
  if (!existsSync(REAL)) throw new Error(`--real needs ${REAL} (scripts/install-real-model.mjs)`);
  const tasks = readFileSync(join(ROOT, 'bench', 'tasks', 'calibration.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .slice(0, 3)
    .map((l) => (JSON.parse(l) as { prompt: string }).prompt);
  pairs.push({
    name: 'Gemma 3 270M Q4_K_M',
    target: REAL,
    s: 0,
    prompts: tasks,
    configs: [
      { label: 'ngram (fixed)', strategy: 'ngram' },
      { label: 'ngram-mod (fixed)', strategy: 'ngram-mod' },
      { label: 'ngram,ngram-mod', strategy: 'ngram', fallbacks: ['ngram-mod'] },
      { label: 'ngram-mod,ngram', strategy: 'ngram-mod', fallbacks: ['ngram'] },
      { label: 'ngram adaptive K', strategy: 'ngram', adaptiveK: true },
    ],
  });
}

const started = Date.now();
const loadAtStart = load1();
const rows: string[] = [];
for (const pair of pairs) {
  const engine = EngineClient.start();
  try {
    const modelId = (await engine.call('loadModel', { path: pair.target, gpuLayers: 0, ...(pair.loadMtp ? { loadMtp: true } : {}) }))
      .modelId;
    const draftId = pair.draft ? (await engine.call('loadModel', { path: pair.draft, gpuLayers: 0 })).modelId : undefined;
    const prompts = await Promise.all(
      pair.prompts.map((text) => engine.call('tokenize', { modelId, text, addSpecial: true, parseSpecial: false })),
    );
    const open = async (c: Config | null) =>
      (
        await engine.call('createSession', {
          modelId,
          contextSize: 1024,
          threads,
          strategy: c?.strategy ?? 'none',
          ...(c ? { fallbacks: c.fallbacks ?? [], pMin: c.pMin ?? 0, adaptiveK: c.adaptiveK ?? false, k, s: pair.s } : {}),
          ...(c && draftId ? { draftModelId: draftId } : {}),
        })
      ).sessionId;
    const measure = async (c: Config | null, control?: string[]) => {
      const sessionId = await open(c);
      const rates: (number | null)[] = [];
      const acceptance: number[] = [];
      const digests: string[] = [];
      for (let rep = 0; rep < reps; rep++) {
        for (const prompt of prompts) {
          const out = await runRequest(engine, { sessionId, prompt, maxTokens: tokens, sampling: SAMPLING_DEFAULTS });
          rates.push(out.stats.steadyDecodeTokensPerSecond);
          if (out.stats.proposed > 0) acceptance.push(out.stats.accepted / out.stats.proposed);
          digests.push(out.digest);
        }
      }
      await engine.call('disposeSession', { sessionId });
      return { rate: medianOf(rates), acceptance: medianOf(acceptance), digests, same: control ? digests.join() === control.join() : true };
    };
    const control = await measure(null);
    rows.push(`| ${pair.name} | none (control) | – | ${control.rate?.toFixed(1) ?? '–'} | 1.00 | yes |`);
    for (const c of pair.configs) {
      const m = await measure(c, control.digests);
      const pct = m.acceptance === null ? '–' : `${(100 * m.acceptance).toFixed(0)} %`;
      const speedup = m.rate && control.rate ? (m.rate / control.rate).toFixed(2) : '–';
      rows.push(`| ${pair.name} | ${c.label} | ${pct} | ${m.rate?.toFixed(1) ?? '–'} | ${speedup} | ${m.same ? 'yes' : '**no**'} |`);
      console.error(`${pair.name}: ${strategyLabel(c.strategy, c.fallbacks)} done`);
    }
  } finally {
    await engine.close();
  }
}

const info = readBuildInfo('cpu');
const md = [
  BEGIN,
  `## Chains, p-min and adaptive K against fixed profiles (bench/drafting.ts, ${isoSeconds()})`,
  '',
  `${machineLine()}, load ${loadAtStart.toFixed(1)} at the start and ${load1().toFixed(1)} at the end: **a shared machine** ` +
    `(other jobs ran beside it), so the tok/s figures are noisy and only their order of magnitude and the acceptance are to be read. ` +
    `Flavour cpu (llama.cpp ${info.llamaCppRelease}); ${threads} thread(s); context 1024; greedy; ${tokens} tokens per request; ` +
    `K${k} (S = K on the attention-only target, K - 1 on the hybrid); ${reps} repetitions of each prompt; run time ` +
    `${((Date.now() - started) / 60000).toFixed(1)} min. Rerun: \`${benchCommand('drafting', process.argv.slice(2))}\`.`,
  '',
  'Acceptance: median over requests of accepted / proposed; tok/s: median steady decode rate; speedup: over the control; ' +
    "= AR: every request emitted the control's tokens.",
  '',
  '| target | drafting | acceptance | steady tok/s | speedup | = AR |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
  END,
].join('\n');
console.log(md);
if (values.write) writeBetweenMarkers(RESULTS_DRAFTING_MD, BEGIN, END, md, '# Results: chains, p-min and adaptive K\n');
