// The cost of the Vulkan verify-rows patch (scripts/native/patches/ggml-vulkan-verify-rows-as-decode.patch)
// and what it buys, on this machine's Vulkan device (in CI's machine kind, Mesa's lavapipe): the
// vulkan flavour with the patch on against the same libraries with GGML_VK_BATCH_VARIANT=1 (the
// released kernel choices), interleaved request by request, medians:
//   - decode tok/s of the autoregressive control and of one speculative configuration;
//   - whether the speculative run emitted the control's tokens (power audit), each way.
//
//   node --import tsx bench/vulkan-patch.ts [--reps R] [--tokens N] [--model PATH --draft PATH | --strategy ngram]
//                                          [--k K] [--prompt-tokens 1,2,3] [--write]
//
// Defaults: the synthetic Q4_0 target with its close draft, draft-model K7, 300 tokens (past
// position 256). --write puts the section into bench/RESULTS-gpu.md. Needs dist/ (npm run build)
// and the vulkan flavour (npm install builds it where glslc and the Vulkan headers are installed).
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

import type { GenerationResult } from '../app/contract/generation-result.js';
import type { AuditReport } from '../app/cli/audit.js';
import { MODELS_CACHE, ROOT } from '../app/paths.js';
import { machineLine } from './lib/machine.js';
import { benchCommand, writeTail } from './lib/results.js';
import { failer, powerSync, requireDist } from './lib/run.js';
import { medianOf } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '300' },
    model: { type: 'string', default: join(MODELS_CACHE, 'target-q4_0.gguf') },
    draft: { type: 'string', default: join(MODELS_CACHE, 'draft-close-q4_0.gguf') },
    strategy: { type: 'string', default: 'draft-model' },
    k: { type: 'string', default: '7' },
    'prompt-tokens': { type: 'string', default: '1,500,501,500,501,500,501' },
    write: { type: 'boolean', default: false },
  },
});
const fail = failer('bench');
requireDist(fail);
if (!existsSync(join(ROOT, 'build', 'addon-vulkan', 'power.node')))
  fail('the vulkan flavour is not built (npm run build:native -- --from-source --vulkan)');
const reps = Number(values.reps);
const prompt = ['--prompt-tokens', values['prompt-tokens']];
const base = ['--model', values.model, ...prompt, '--max-tokens', values.tokens, '--device', 'vulkan', '--sampling', 'cpu', '--json'];
const spec = ['--strategy', values.strategy, '--k', values.k, ...(values.strategy === 'draft-model' ? ['--draft', values.draft] : [])];

const ARMS = { patched: {}, released: { GGML_VK_BATCH_VARIANT: '1' } } as const;
type Arm = keyof typeof ARMS;
const env = (arm: Arm) => ({ ...process.env, ...ARMS[arm] });

function generate(arm: Arm, args: readonly string[]): GenerationResult {
  const r = powerSync(['generate', ...base, ...args], { env: env(arm) });
  if (r.status !== 0) fail(`power generate (${arm}) failed: ${r.stderr.trim().split('\n').at(-1)}`);
  return JSON.parse(r.stdout) as GenerationResult;
}

const decode: Record<string, number[]> = {};
const record = (key: string, v: number) => (decode[key] ??= []).push(v);
for (let rep = 0; rep < reps; rep++) {
  for (const arm of Object.keys(ARMS) as Arm[]) {
    record(`${arm} ar`, generate(arm, ['--strategy', 'none']).stats.steadyDecodeTokensPerSecond ?? NaN);
    record(`${arm} spec`, generate(arm, spec).stats.steadyDecodeTokensPerSecond ?? NaN);
  }
  console.log(`rep ${rep + 1}/${reps} done`);
}

function audit(arm: Arm): string {
  const r = powerSync(['audit', ...base, ...spec], { env: env(arm) });
  if (r.status !== 0 && r.status !== 1) fail(`power audit (${arm}) failed: ${r.stderr.trim().split('\n').at(-1)}`);
  const a = JSON.parse(r.stdout) as AuditReport;
  const d = a.firstDivergence;
  if (!d) return `identical (${a.tokens} tokens)`;
  return `diverges at token ${d.index} (margin ${d.controlMargin.toPrecision(3)}, verify row off by ${d.rowMaxAbsDiff.toPrecision(3)})`;
}
const audits = { patched: audit('patched'), released: audit('released') };

const med = (key: string) => medianOf(decode[key] ?? []);
const fmt = (v: number | null) => (v === null ? '—' : v.toFixed(1));
const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? `${(a / b).toFixed(2)}×` : '—');
const label = `${values.strategy} K${values.k}`;
const md = `## Vulkan: the verify-rows patch

${machineLine()}; \`${basename(values.model)}\`${values.strategy === 'draft-model' ? ` with \`${basename(values.draft)}\`` : ''}, ${values.tokens} tokens, on the vulkan flavour's device (\`power devices\`), Flash Attention off, sampled on the CPU; the two arms interleaved request by request, ${reps} reps, medians. Command: \`${benchCommand(
  'vulkan-patch',
  process.argv.slice(2).filter((a) => a !== '--write'),
)}\`.

| | patched | released (\`GGML_VK_BATCH_VARIANT=1\`) | patched / released |
| --- | --- | --- | --- |
| decode tok/s, autoregressive | ${fmt(med('patched ar'))} | ${fmt(med('released ar'))} | ${ratio(med('patched ar'), med('released ar'))} |
| decode tok/s, ${label} | ${fmt(med('patched spec'))} | ${fmt(med('released spec'))} | ${ratio(med('patched spec'), med('released spec'))} |
| power audit, ${label} | ${audits.patched} | ${audits.released} | |
`;
console.log(md);
if (values.write)
  writeTail(join(ROOT, 'bench', 'RESULTS-gpu.md'), '## Vulkan: the verify-rows patch', md, '# GPU-class backends: measurements\n\n');
