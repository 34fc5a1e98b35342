// CPU engines side by side (issue 7): the default `cpu` flavour (llama.cpp from the bundle,
// GGML_LLAMAFILE=OFF, GGML_NATIVE: batch-invariant) against `cpu-prebuilt` (node-llama-cpp's
// prebuilt libraries), on one F16 llama model written by our GGUF writer. One run, the two
// flavours interleaved request by request (so the machine's drift lands on both alike), medians:
//   - prefill tok/s of a long prompt and AR decode tok/s (power generate --strategy none);
//   - power audit of the draft-model pair (greedy, K 4 and 7) on each flavour: identical, or
//     where the verify row differs from the one-row decode and by how much.
// With --model, the same on a model of your own (e.g. the real Gemma 3 270M): a text prompt
// (--prompt-file, else a built-in article) and the audit of `ngram` on it; --write puts that
// section into bench/RESULTS-real.md.
//
//   node --import tsx bench/engines.ts [--reps R] [--threads T] [--tokens N] [--prompt-tokens P]
//                                      [--audit-k 4,7] [--audit-prompts N] [--audit-tokens N] [--write]
//                                      [--model PATH [--prompt-file FILE]]
//
// Needs dist/ (npm run build: bin/power.js runs the compiled CLI) and both flavours built (npm install builds them).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

import type { GenerationResult } from '../app/contract/generation-result.js';
import type { AuditReport } from '../app/cli/audit.js';
import { BENCH_MODELS_CACHE, ROOT } from '../app/paths.js';
import { makeModelFiles, type LlamaModelParams } from '../tools/models/synthetic.js';
import { cpuModel, load1 } from './lib/machine.js';
import { RESULTS_EXACT_MD, RESULTS_REAL_MD, writeBetweenMarkers, writeTail } from './lib/results.js';
import { failer, powerSync, requireDist } from './lib/run.js';
import { ARTICLE } from './lib/text-prompts.js';
import { medianOf } from './lib/stats.js';

const FLAVOURS = ['cpu', 'cpu-prebuilt'] as const;
type Flavour = (typeof FLAVOURS)[number];
const HEADING = '## CPU engines';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '5' },
    threads: { type: 'string', default: '1' },
    tokens: { type: 'string', default: '64' },
    'prompt-tokens': { type: 'string', default: '256' },
    'audit-k': { type: 'string', default: '4,7' },
    'audit-prompts': { type: 'string', default: '3' },
    'audit-tokens': { type: 'string', default: '128' },
    write: { type: 'boolean', default: false },
    model: { type: 'string' },
    'prompt-file': { type: 'string' },
  },
});
const reps = Number(values.reps);
const threads = values.threads;
const tokens = Number(values.tokens);
const promptLength = Number(values['prompt-tokens']);
const auditKs = values['audit-k'].split(',').map(Number);
const auditTokens = values['audit-tokens'];

const fail: (message: string) => never = failer('bench');

for (const f of FLAVOURS) {
  if (!existsSync(join(ROOT, 'build', `addon-${f}`, 'power.node')))
    fail(`flavour ${f} is not built (npm run build:native -- --flavour ${f})`);
}
requireDist(fail);

// the model: the F16 target of the issue's measurement (8 blocks, E = 1024, ~180 MB) and a draft
// made of its first 2 blocks (same seed: same embedding, head and first blocks)
const k = Math.sqrt(128 / 1024);
const target: LlamaModelParams = {
  arch: 'llama',
  name: 'power-bench-f16',
  vocab: 'default',
  seed: 21,
  dtype: 'f16',
  embd: 1024,
  layers: 8,
  heads: 16,
  kvHeads: 4,
  ff: 2816,
  contextLength: 4096,
  scales: { embedding: 1, output: 0.5, attentionQK: 0.1 * k, attentionVO: 0.05 * k, projection: 0.1 * k },
};
const models = await makeModelFiles(
  BENCH_MODELS_CACHE,
  {
    'engines-f16.gguf': { params: target },
    'engines-f16-draft.gguf': { params: { ...target, name: 'power-bench-f16-draft', layers: 2 } },
  },
  { onLog: (l) => console.log(`bench: ${l}`) },
);

const userModel = values.model;
if (userModel && !existsSync(userModel)) fail(`--model ${userModel}: no such file`);
if (values['prompt-file'] && !userModel) fail('--prompt-file goes with --model (the synthetic model takes token ids)');
// a text to continue, for a model with a real vocabulary: prefill of a few hundred tokens
const textPrompt = values['prompt-file']
  ? readFileSync(values['prompt-file'], 'utf8')
  : ARTICLE.repeat(Math.max(1, Math.round(promptLength / 90)));
const speedModel = userModel ?? models['engines-f16.gguf'];

function power<T>(flavour: Flavour, argv: string[]): T {
  const r = powerSync(argv, { env: { ...process.env, POWER_FLAVOUR: flavour } });
  if (r.status !== 0 && !(argv[0] === 'audit' && r.status === 1))
    fail(`${flavour}: power ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

// a prompt of ordinary tokens (ids 300.. cycle through the synthetic vocabulary's words)
const prompt = Array.from({ length: promptLength }, (_, i) => (i === 0 ? 1 : 300 + ((i * 37) % 500))).join(',');
const samples: Record<Flavour, { prefill: (number | null)[]; decode: (number | null)[]; digest: Set<string> }> = {
  cpu: { prefill: [], decode: [], digest: new Set() },
  'cpu-prebuilt': { prefill: [], decode: [], digest: new Set() },
};
const load = [load1()];
let promptTokens = promptLength;
for (let rep = 0; rep < reps; rep++) {
  // alternate which flavour goes first, so a drift in machine load hits both alike
  for (const f of rep % 2 ? [...FLAVOURS].reverse() : FLAVOURS) {
    const input = userModel ? ['--prompt', textPrompt] : ['--prompt-tokens', prompt];
    const r = power<GenerationResult & { stats: { decodeTokensPerSecondMedian?: number | null } }>(f, [
      'generate',
      '--json',
      '--threads',
      threads,
      '--model',
      speedModel,
      ...input,
      '--max-tokens',
      String(tokens),
    ]);
    promptTokens = r.stats.promptTokens;
    samples[f].prefill.push(r.stats.prefillTokensPerSecond);
    samples[f].decode.push(r.stats.steadyDecodeTokensPerSecond ?? r.stats.decodeTokensPerSecondMedian ?? null);
    samples[f].digest.add(r.digest);
    console.log(
      `bench: rep ${rep + 1} ${f}: prefill ${r.stats.prefillTokensPerSecond?.toFixed(1)} tok/s, decode ${samples[f].decode.at(-1)?.toFixed(2)} tok/s`,
    );
  }
  load.push(load1());
}

const audits: (AuditReport & { prompt: string })[] = [];
for (const f of FLAVOURS) {
  for (const kk of auditKs) {
    const auditPrompts = userModel
      ? ['article']
      : ['1,300,301,302,303', '1,263,400,500,600,700', '1,42,43,44'].slice(0, Number(values['audit-prompts']));
    for (const p of auditPrompts) {
      const how = userModel
        ? ['--model', userModel, '--strategy', 'ngram', '--prompt', textPrompt]
        : [
            '--model',
            models['engines-f16.gguf'],
            '--draft',
            models['engines-f16-draft.gguf'],
            '--strategy',
            'draft-model',
            '--prompt-tokens',
            p,
          ];
      const a = power<AuditReport>(f, ['audit', '--json', '--threads', threads, ...how, '--k', String(kk), '--max-tokens', auditTokens]);
      audits.push({ prompt: p, ...a });
      const d = a.firstDivergence;
      console.log(
        `bench: audit ${f} K${kk} [${p}]: ${a.identical || !d ? 'identical' : `diverges at ${d.index} (margin ${d.controlMargin.toPrecision(3)}, row diff ${d.rowMaxAbsDiff.toPrecision(3)}, explained ${d.explained})`}`,
      );
    }
  }
}

const median = (xs: readonly (number | null)[]): string => medianOf(xs)?.toFixed(2) ?? '-';
const row = (f: Flavour): string => {
  const s = samples[f];
  return `| ${f} | ${medianOf(s.prefill)?.toFixed(1) ?? '-'} | ${median(s.decode)} | ${s.digest.size === 1 ? 'yes' : 'no'} |`;
};
const ratio = (key: 'prefill' | 'decode'): string => {
  const [a, b] = [medianOf(samples.cpu[key]), medianOf(samples['cpu-prebuilt'][key])];
  return a !== null && b !== null ? (a / b).toFixed(2) : '-';
};
const lines = [
  `${HEADING}: default \`cpu\` (from source, GGML_LLAMAFILE=OFF, GGML_NATIVE) vs \`cpu-prebuilt\``,
  '',
  `- date: ${new Date().toISOString()}; ${cpuModel()}, ${cpus().length} cores shared with other jobs (load average ${load.map((x) => x.toFixed(1)).join(' → ')})`,
  userModel
    ? `- model: ${basename(userModel)} (${(statSync(userModel).size / 1e6).toFixed(0)} MB); audits: \`ngram\` on the same prompt`
    : `- model: F16 llama, E=1024, 8 blocks, 16/4 heads, F=2816 (${(statSync(models['engines-f16.gguf']).size / 1e6).toFixed(0)} MB), written by our GGUF writer; draft: its first 2 blocks`,
  `- ${reps} interleaved requests per flavour (order alternating), ${threads} thread(s), prompt ${promptTokens} tokens, ${tokens} generated tokens; medians`,
  '',
  '| flavour | prefill tok/s | AR decode tok/s | same digest every run |',
  '| --- | ---: | ---: | --- |',
  row('cpu'),
  row('cpu-prebuilt'),
  '',
  `cpu / cpu-prebuilt: prefill ${ratio('prefill')}×, AR decode ${ratio('decode')}×. Greedy AR digests ${[...samples.cpu.digest][0] === [...samples['cpu-prebuilt'].digest][0] ? 'equal' : 'differ'} between the flavours.`,
  '',
  `\`power audit\` (${userModel ? 'ngram' : 'draft-model'}, greedy, ${auditTokens} tokens) on the same ${userModel ? 'model' : 'pair'}:`,
  '',
  '| flavour | K | prompt | identical | first divergence | control margin | verify row max abs diff | explained |',
  '| --- | ---: | --- | --- | ---: | ---: | ---: | --- |',
  ...audits.map((a) => {
    const d = a.firstDivergence;
    return `| ${a.flavour} | ${a.k} | ${a.prompt} | ${a.identical ? 'yes' : 'no'} | ${d ? d.index : '-'} | ${d ? d.controlMargin.toPrecision(3) : '-'} | ${d ? d.rowMaxAbsDiff.toPrecision(3) : '-'} | ${d ? d.explained : '-'} |`;
  }),
  '',
];
console.log(lines.join('\n'));
if (values.write && userModel) {
  // a model of one's own goes between its own markers, so the synthetic section's rewrite keeps it
  const name = basename(userModel);
  writeBetweenMarkers(
    RESULTS_REAL_MD,
    `<!-- engines.ts ${name} -->`,
    `<!-- /engines.ts ${name} -->`,
    [
      `<!-- engines.ts ${name} -->`,
      ...lines.map((l) => (l === lines[0] ? `${HEADING} on ${name}: \`cpu\` vs \`cpu-prebuilt\`` : l)),
      `<!-- /engines.ts ${name} -->`,
    ].join('\n'),
    '# Results: real vocabularies\n',
  );
  console.log(`bench: wrote ${RESULTS_REAL_MD}`);
} else if (values.write) {
  writeTail(RESULTS_EXACT_MD, HEADING, lines.join('\n'), '# Exactness on real weights: measured results\n\n');
  console.log(`bench: wrote ${RESULTS_EXACT_MD}`);
}
