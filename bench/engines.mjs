#!/usr/bin/env node
// CPU engines side by side (issue 7): the default `cpu` flavour (llama.cpp from the bundle,
// GGML_LLAMAFILE=OFF, GGML_NATIVE: batch-invariant) against `cpu-prebuilt` (node-llama-cpp's
// prebuilt libraries), on one F16 llama model written by our GGUF writer. One run, the two
// flavours interleaved request by request (so the machine's drift lands on both alike), medians:
//   - prefill tok/s of a long prompt and AR decode tok/s (power generate --strategy none);
//   - power audit of the draft-model pair (greedy, K 4 and 7) on each flavour: identical, or
//     where the verify row differs from the one-row decode and by how much.
//
//   node bench/engines.mjs [--reps R] [--threads T] [--tokens N] [--prompt-tokens P]
//                          [--audit-k 4,7] [--audit-prompts N] [--audit-tokens N] [--write]
//
// Needs dist/ (npm run build) and both flavours built (npm install builds them).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FLAVOURS = ['cpu', 'cpu-prebuilt'];
const RESULTS_MD = join(ROOT, 'bench', 'RESULTS-exact.md');

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
  },
});
const reps = Number(values.reps);
const threads = values.threads;
const tokens = Number(values.tokens);
const promptLength = Number(values['prompt-tokens']);
const auditKs = values['audit-k'].split(',').map(Number);
const auditTokens = values['audit-tokens'];

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(1);
}

for (const f of FLAVOURS) {
  if (!existsSync(join(ROOT, 'build', `addon-${f}`, 'power.node'))) fail(`flavour ${f} is not built (npm run build:native -- --flavour ${f})`);
}
if (!existsSync(join(ROOT, 'dist', 'node', 'cli', 'power.js'))) fail('dist/ is missing (npm run build)');

// the model: the F16 target of the issue's measurement (8 blocks, E = 1024, ~180 MB) and a draft
// made of its first 2 blocks (same seed: same embedding, head and first blocks)
const { makeModelFiles } = await import(pathToFileURL(join(ROOT, 'dist', 'tools', 'models', 'synthetic.js')).href);
const k = Math.sqrt(128 / 1024);
const target = {
  arch: 'llama', name: 'power-bench-f16', vocab: 'default', seed: 21, dtype: 'f16',
  embd: 1024, layers: 8, heads: 16, kvHeads: 4, ff: 2816, contextLength: 4096,
  scales: { embedding: 1, output: 0.5, attentionQK: 0.1 * k, attentionVO: 0.05 * k, projection: 0.1 * k },
};
const models = await makeModelFiles(join(ROOT, '.cache', 'bench'), {
  'engines-f16.gguf': { params: target },
  'engines-f16-draft.gguf': { params: { ...target, name: 'power-bench-f16-draft', layers: 2 } },
}, { onLog: (l) => console.log(`bench: ${l}`) });

function power(flavour, argv) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'power.js'), ...argv], {
    encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, POWER_FLAVOUR: flavour },
  });
  if (r.status !== 0 && !(argv[0] === 'audit' && r.status === 1)) fail(`${flavour}: power ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// a prompt of ordinary tokens (ids 300.. cycle through the synthetic vocabulary's words)
const prompt = Array.from({ length: promptLength }, (_, i) => (i === 0 ? 1 : 300 + ((i * 37) % 500))).join(',');
const samples = Object.fromEntries(FLAVOURS.map((f) => [f, { prefill: [], decode: [], digest: new Set() }]));
const load = [loadavg()[0]];
for (let rep = 0; rep < reps; rep++) {
  // alternate which flavour goes first, so a drift in machine load hits both alike
  for (const f of rep % 2 ? [...FLAVOURS].reverse() : FLAVOURS) {
    const r = power(f, ['generate', '--json', '--threads', threads, '--model', models['engines-f16.gguf'], '--prompt-tokens', prompt, '--max-tokens', String(tokens)]);
    samples[f].prefill.push(r.stats.prefillTokensPerSecond);
    samples[f].decode.push(r.stats.steadyDecodeTokensPerSecond ?? r.stats.decodeTokensPerSecondMedian);
    samples[f].digest.add(r.digest);
    console.log(`bench: rep ${rep + 1} ${f}: prefill ${r.stats.prefillTokensPerSecond.toFixed(1)} tok/s, decode ${samples[f].decode.at(-1).toFixed(2)} tok/s`);
  }
  load.push(loadavg()[0]);
}

const audits = [];
for (const f of FLAVOURS) {
  for (const kk of auditKs) {
    for (const p of ['1,300,301,302,303', '1,263,400,500,600,700', '1,42,43,44'].slice(0, Number(values['audit-prompts']))) {
      const a = power(f, ['audit', '--json', '--threads', threads, '--model', models['engines-f16.gguf'], '--draft', models['engines-f16-draft.gguf'],
        '--strategy', 'draft-model', '--k', String(kk), '--prompt-tokens', p, '--max-tokens', auditTokens]);
      audits.push({ flavour: f, k: kk, prompt: p, ...a });
      console.log(`bench: audit ${f} K${kk} [${p}]: ${a.identical ? 'identical' : `diverges at ${a.firstDivergence.index} (margin ${a.firstDivergence.controlMargin.toPrecision(3)}, row diff ${a.firstDivergence.rowMaxAbsDiff.toPrecision(3)}, explained ${a.firstDivergence.explained})`}`);
    }
  }
}

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const row = (f) => {
  const s = samples[f];
  return `| ${f} | ${median(s.prefill).toFixed(1)} | ${median(s.decode).toFixed(2)} | ${s.digest.size === 1 ? 'yes' : 'no'} |`;
};
const ratio = (key) => (median(samples.cpu[key]) / median(samples['cpu-prebuilt'][key])).toFixed(2);
const lines = [
  `## CPU engines: default \`cpu\` (from source, GGML_LLAMAFILE=OFF, GGML_NATIVE) vs \`cpu-prebuilt\``,
  '',
  `- date: ${new Date().toISOString()}; ${cpu}, ${cpus().length} cores shared with other jobs (load average ${load.map((x) => x.toFixed(1)).join(' → ')})`,
  `- model: F16 llama, E=1024, 8 blocks, 16/4 heads, F=2816 (${(readFileSize(models['engines-f16.gguf']) / 1e6).toFixed(0)} MB), written by our GGUF writer; draft: its first 2 blocks`,
  `- ${reps} interleaved requests per flavour (order alternating), ${threads} thread(s), prompt ${promptLength} tokens, ${tokens} generated tokens; medians`,
  '',
  '| flavour | prefill tok/s | AR decode tok/s | same digest every run |',
  '| --- | ---: | ---: | --- |',
  row('cpu'),
  row('cpu-prebuilt'),
  '',
  `cpu / cpu-prebuilt: prefill ${ratio('prefill')}×, AR decode ${ratio('decode')}×. Greedy AR digests ${[...samples.cpu.digest][0] === [...samples['cpu-prebuilt'].digest][0] ? 'equal' : 'differ'} between the flavours.`,
  '',
  `\`power audit\` (draft-model, greedy, ${auditTokens} tokens) on the same pair:`,
  '',
  '| flavour | K | prompt | identical | first divergence | control margin | verify row max abs diff | explained |',
  '| --- | ---: | --- | --- | ---: | ---: | ---: | --- |',
  ...audits.map((a) => {
    const d = a.firstDivergence;
    return `| ${a.flavour} | ${a.k} | ${a.prompt} | ${a.identical ? 'yes' : 'no'} | ${d ? d.index : '-'} | ${d ? d.controlMargin.toPrecision(3) : '-'} | ${d ? d.rowMaxAbsDiff.toPrecision(3) : '-'} | ${d ? d.explained : '-'} |`;
  }),
  '',
];
function readFileSize(p) {
  return statSync(p).size;
}
console.log(lines.join('\n'));
if (values.write) {
  const head = existsSync(RESULTS_MD) ? readFileSync(RESULTS_MD, 'utf8').split('\n## CPU engines')[0].trimEnd() + '\n\n' : '# Exactness on real weights: measured results\n\n';
  writeFileSync(RESULTS_MD, head + lines.join('\n'));
  console.log(`bench: wrote ${RESULTS_MD}`);
}
