// The GPU check (test/gpu/check.sh runs it): on a machine with an NVIDIA GPU and no network,
// in one go and under 8 minutes, it checks the link, writes larger synthetic models, runs the
// exactness contract on CUDA (speculative digests equal the autoregressive ones), audits F16,
// Q8_0 and Q4_0 verify rows against one-row decodes for K 1, 4, 7 (power audit), audits as the
// dispatch of Turing and Ampere would choose (POWER_CUDA_AS_CC: the claim per architecture), measures
// AR vs K7/S7 vs K7/S6 decode speed, compares with the CPU, and writes OUT_DIR/summary.md
// plus the raw JSON. With --device cpu it runs the same steps that do not need a GPU on
// small models, and marks the GPU-only ones SKIPPED.
//
//   node --import tsx test/gpu/check.ts OUT_DIR [--device cuda|cpu] [--scale full|small] [--threads N]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';

import { GenerationResult } from '../../app/contract/generation-result.js';
import { makeModelFiles } from '../../tools/models/synthetic.js';
import { ROOT } from '../../app/paths.js';
import { AUDIT_TYPES, auditPair, gpuModels, type Scale } from './models.js';
import {
  auditTable,
  contractTable,
  section,
  speedTable,
  stepTable,
  type AuditRow,
  type ContractRow,
  type SpeedRow,
  type Step,
} from './report.js';
import { estimateSplit } from '../../app/engine/memory-estimate.js';
import { readGgufInfo } from '../../app/gguf/reader.js';

/** One split of the several-GPU step. */
interface SplitRow {
  mode: 'layer' | 'row';
  ratio: string;
  /** first token that differs from the one-GPU run (null: none) */
  sameAsOneGpu: number | null;
  /** speculative (draft-model K7) digest = AR digest on the same split */
  specMatch: boolean;
  perDevice: string;
}

const BUDGET_S = 8 * 60;
const PROMPTS = [
  'The quick brown fox jumps over the lazy dog. The quick brown fox',
  'one two three four five six seven eight nine ten one two three',
  'Power checks every proposed token with the target model in one pass, so',
];

function fail(message: string): never {
  console.error(`gpu check: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
const outDir =
  args[0] && !args[0].startsWith('--')
    ? resolve(args[0])
    : fail('usage: check.sh OUT_DIR [--device cuda|cpu] [--scale full|small] [--threads N]');
const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const device = flag('--device') ?? 'cuda';
if (device !== 'cuda' && device !== 'cpu') fail(`--device must be cuda or cpu (got '${device}')`);
const scale = (flag('--scale') ?? (device === 'cuda' ? 'full' : 'small')) as Scale;
if (scale !== 'full' && scale !== 'small') fail(`--scale must be full or small (got '${scale}')`);
// CPU threads for llama.cpp's CPU work; by default the engine's own (physical cores, never every
// logical CPU: docs/cli.md "Threads")
const threads = flag('--threads');
if (threads !== undefined && !/^[1-9]\d*$/.test(threads)) fail(`--threads must be a positive integer (got '${threads}')`);
const started = Date.now();
const steps: Step[] = [];
mkdirSync(join(outDir, 'runs'), { recursive: true });

function power(argv: string[], env?: Record<string, string>) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'power.js'), ...argv], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function step<T>(name: string, run: () => T | Promise<T>): Promise<T | undefined> {
  const t0 = Date.now();
  try {
    const value = await run();
    steps.push({ name, status: 'ok', seconds: (Date.now() - t0) / 1000, detail: '' });
    return value;
  } catch (error) {
    steps.push({ name, status: 'FAIL', seconds: (Date.now() - t0) / 1000, detail: (error as Error).message.split('\n')[0]! });
    return undefined;
  }
}

function skip(name: string, why: string): void {
  steps.push({ name, status: 'SKIPPED', seconds: 0, detail: why });
}

/** The argv every run here shares: `power <command> --json` on one device, a raw prompt, one model. */
function runArgv(command: 'generate' | 'audit', on: string, model: string, prompt: string, maxTokens: number, extra: string[]): string[] {
  return [
    command,
    '--json',
    '--device',
    on,
    ...(threads ? ['--threads', threads] : []),
    '--raw',
    '--prompt',
    prompt,
    '--max-tokens',
    String(maxTokens),
    '--model',
    model,
    ...extra,
  ];
}

let runNo = 0;
/**
 * Runs power and keeps what it did as runs/NNN<suffix>.json; `result`: its JSON output when it
 * exited with one of `resultCodes` (else null); `stderrTail`: how much of stderr the record keeps.
 */
function recordedRun(
  argv: string[],
  suffix: string,
  resultCodes: readonly number[] = [0],
  stderrTail?: number,
  env?: Record<string, string>,
) {
  const r = power(argv, env);
  const result: unknown = r.code !== null && resultCodes.includes(r.code) ? JSON.parse(r.stdout) : null;
  const stderr = stderrTail === undefined ? r.stderr : r.stderr.slice(-stderrTail);
  const file = join(outDir, 'runs', `${String(++runNo).padStart(3, '0')}${suffix}.json`);
  writeFileSync(file, JSON.stringify({ argv, code: r.code, stderr, result }, null, 2));
  return { ...r, result };
}

function generate(model: string, on: string, prompt: string, maxTokens: number, extra: string[]): GenerationResult {
  const argv = runArgv('generate', on, model, prompt, maxTokens, extra);
  const r = recordedRun(argv, '');
  if (r.code !== 0) throw new Error(`power ${argv.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  return GenerationResult.parse(r.result);
}

/** A CUDA run with llama.cpp's log (--verbose): the result and the log. */
function generateWithLog(model: string, prompt: string, maxTokens: number, extra: string[]): { result: GenerationResult; log: string } {
  const argv = runArgv('generate', 'cuda', model, prompt, maxTokens, extra);
  const r = recordedRun(argv, '-split', [0], 20000);
  if (r.code !== 0) throw new Error(`power ${argv.join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
  return { result: GenerationResult.parse(r.result), log: r.stderr };
}

/** What `power audit` said about the engine's claim (absent when the audit could not run). */
interface AuditClaim {
  batchInvariant?: boolean;
  batchInvariantWhy?: string | null;
  verdict?: string;
}

/**
 * One `power audit` run as a row of the audit table: exit 0 (identical) and 1 (a divergence)
 * carry a result; any other exit is an audit that could not run, its error in the row.
 */
function auditRow(
  row: Pick<AuditRow, 'type' | 'k' | 'prompt'>,
  argv: string[],
  suffix: string,
  env?: Record<string, string>,
): AuditRow & AuditClaim {
  const r = recordedRun(argv, suffix, [0, 1], undefined, env);
  if (r.result === null) {
    return {
      ...row,
      identical: null,
      index: null,
      margin: null,
      diff: null,
      explained: null,
      flavour: '-',
      error: r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`,
    };
  }
  const a = r.result as {
    identical: boolean;
    flavour: string;
    firstDivergence: null | { index: number; controlMargin: number; rowMaxAbsDiff: number; explained: boolean };
  } & AuditClaim;
  const d = a.firstDivergence;
  return {
    ...row,
    batchInvariant: a.batchInvariant,
    batchInvariantWhy: a.batchInvariantWhy,
    verdict: a.verdict,
    identical: a.identical,
    index: d?.index ?? null,
    margin: d?.controlMargin ?? null,
    diff: d?.rowMaxAbsDiff ?? null,
    explained: d ? d.explained : null,
    flavour: a.flavour,
    error: null,
  };
}

/** What llama.cpp allocated on each device: its "CUDA0 model buffer size = 12.34 MiB" lines (model, KV, compute; a row split's "CUDA_Split"). */
function allocatedPerDevice(log: string): Map<string, number> {
  const out = new Map<string, number>();
  // a row split's matrices sit in one "CUDA_Split" buffer over every card: reported under that name
  for (const m of log.matchAll(/\b(CUDA\d+|CUDA_Split)\s+(?:model|KV|compute|RS) buffer size =\s+([\d.]+) MiB/g)) {
    out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]) * 2 ** 20);
  }
  return out;
}

function firstDivergence(a: readonly number[], b: readonly number[]): number | null {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return null;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((p, q) => p - q);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

// 1. what this machine can do; --device cuda fails closed like the product does
const devices = await step('devices (power devices --json)', () => {
  const r = power(['devices', '--json']);
  writeFileSync(join(outDir, 'devices.json'), r.stdout);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return JSON.parse(r.stdout) as {
    cuda: { usable: boolean; use: string | null; reason: string | null };
    flavours: { devices: { name: string; backend: string; freeBytes: number }[] }[];
  };
});
if (device === 'cuda' && !devices?.cuda.usable) {
  fail(`no usable CUDA device: ${devices?.cuda.reason ?? 'power devices failed'}; run with --device cpu for the CPU-side parts`);
}
const gpu = spawnSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'], { encoding: 'utf8' });
const machine = gpu.status === 0 ? gpu.stdout.trim() : `no nvidia-smi; ${availableParallelism()} CPU threads`;

// 2. the flavours link (the driver and CUDA runtime must resolve here when on a GPU)
await step('link check (scripts/check-cuda-link.ts)', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'check-cuda-link.ts')], { encoding: 'utf8', cwd: ROOT });
  writeFileSync(join(outDir, 'link-check.txt'), r.stdout + r.stderr);
  if (r.status !== 0) throw new Error(r.stderr.trim());
  if (device === 'cuda' && /reported: \S+ => not found/.test(r.stdout))
    throw new Error('a CUDA library does not resolve on this GPU machine');
});

// 3. models (cached in .cache/gpu-models/<scale>; F16, and the target and draft in Q8_0, Q4_0)
const models = await step(`models (${scale}, F16 + Q8_0/Q4_0 pairs)`, () =>
  makeModelFiles(join(ROOT, '.cache', 'gpu-models', scale), gpuModels(scale), { onLog: (l) => console.log(`gpu check: ${l}`) }),
);
if (!models) fail('could not write the models');

// memory: the estimate `power generate` checks before loading, against the device's free memory
let memoryLine = '';
if (device === 'cuda') {
  await step('CUDA memory estimate (power info --device cuda)', () => {
    const r = power(['info', models['gpu-target.gguf'], '--device', 'cuda', '--json']);
    if (r.code !== 0) throw new Error(r.stderr.trim());
    const m = (JSON.parse(r.stdout) as { device: { name: string; memory: { total: number; freeBytes: number; fits: boolean } | null } })
      .device;
    if (!m.memory) throw new Error('no estimate on CUDA');
    memoryLine = `gpu-target at 4096 ctx: estimate ${(m.memory.total / 2 ** 30).toFixed(2)} GiB, ${(m.memory.freeBytes / 2 ** 30).toFixed(1)} GiB free on ${m.name}: ${m.memory.fits ? 'fits' : 'does not fit'}`;
  });
} else {
  skip('CUDA memory estimate (power info --device cuda)', 'needs a CUDA device');
}

// 4. exactness contract on the device: greedy speculative digests equal the AR digest
const contract: ContractRow[] = [];
const n = scale === 'full' ? 64 : 32;
const draftArgs = ['--strategy', 'draft-model', '--draft', models['gpu-draft.gguf'], '--k', '7'];
const cases: { model: keyof typeof models; label: string; extra: string[] }[] = [
  { model: 'gpu-target.gguf', label: 'ngram K7', extra: ['--strategy', 'ngram', '--k', '7'] },
  { model: 'gpu-target.gguf', label: 'draft-model K7', extra: draftArgs },
  { model: 'gpu-hybrid.gguf', label: 'ngram K7/S7', extra: ['--strategy', 'ngram', '--k', '7', '--s', '7'] },
  { model: 'gpu-hybrid.gguf', label: 'ngram K7/S6', extra: ['--strategy', 'ngram', '--k', '7', '--s', '6'] },
];
await step(`exactness contract on ${device} (${PROMPTS.length} prompts, ${n} tokens)`, () => {
  for (const [p, prompt] of PROMPTS.entries()) {
    const ar = new Map<string, GenerationResult>();
    for (const c of cases) {
      const base = ar.get(c.model) ?? generate(models[c.model], device, prompt, n, []);
      ar.set(c.model, base);
      const spec = generate(models[c.model], device, prompt, n, c.extra);
      contract.push({
        prompt: p + 1,
        model: c.model,
        strategy: c.label,
        match: spec.digest === base.digest,
        divergence: firstDivergence(spec.tokens, base.tokens),
        acceptance: spec.stats.acceptanceRate,
        replays: spec.stats.replays,
        device: spec.backend.device,
      });
    }
  }
  const bad = contract.filter((r) => !r.match);
  if (bad.length) throw new Error(`${bad.length} of ${contract.length} speculative runs differ from AR (see the table)`);
});

// 4b. power audit on each weight type, K in {1, 4, 7}: does a verify row on this device equal a
// one-row decode? Where not, the first divergence, its margin and whether the rows explain it
// (CUDA's matrix kernels change with the number of rows; the CPU engine is batch-invariant)
const audits: AuditRow[] = [];
const auditTokens = scale === 'full' ? 64 : 32;
await step(`audit on ${device} (F16, Q8_0, Q4_0 × K 1, 4, 7; ${auditTokens} tokens)`, () => {
  for (const type of AUDIT_TYPES) {
    const pair = auditPair(type);
    for (const k of [1, 4, 7]) {
      for (const [p, prompt] of PROMPTS.slice(0, 1).entries()) {
        const extra = ['--draft', models[pair.draft], '--strategy', 'draft-model', '--k', String(k)];
        const argv = runArgv('audit', device, models[pair.target], prompt, auditTokens, extra);
        audits.push(auditRow({ type, k, prompt: p + 1 }, argv, '-audit'));
      }
    }
  }
  // a divergence on CUDA is a finding to report (with its margin), not a failure; an unexplained
  // one, or an audit that could not run, is
  const bad = audits.filter((a) => a.error !== null || a.explained === false);
  if (bad.length) throw new Error(`${bad.length} of ${audits.length} audits failed or found an unexplained divergence (see the table)`);
});

// 4c. the crossings: replies past 256, 512 and 1,024 positions (where the CPU's Flash Attention
// once changed how it sums a one-row decode), Flash Attention on and off, through power audit;
// on a batch-invariant engine any divergence fails, elsewhere an explained one is a finding
const crossingTokens = scale === 'full' ? 1100 : 600;
const crossingRows: AuditRow[] = [];
await step(`audit past 256/512/1024 positions on ${device} (Flash Attention on and off, ${crossingTokens} tokens)`, () => {
  const crossings: { label: string; model: keyof typeof models; extra: string[] }[] = [
    {
      label: 'draft-model K4',
      model: auditPair('f16').target,
      extra: ['--draft', models[auditPair('f16').draft], '--strategy', 'draft-model', '--k', '4'],
    },
    { label: 'hybrid ngram K7/S6', model: 'gpu-hybrid.gguf', extra: ['--strategy', 'ngram', '--k', '7', '--s', '6'] },
  ];
  for (const fa of ['on', 'off']) {
    for (const c of crossings) {
      const extra = ['--ctx', '2048', '--flash-attn', fa, ...c.extra];
      const argv = runArgv('audit', device, models[c.model], PROMPTS[0]!, crossingTokens, extra);
      const type = `${c.label}, FA ${fa}, ${crossingTokens} tok`;
      crossingRows.push(auditRow({ type, k: 0, prompt: 1 }, argv, '-audit-crossing'));
    }
  }
  audits.push(...crossingRows);
  const bad = crossingRows.filter((a) => a.error !== null || a.explained === false);
  if (bad.length) throw new Error(`${bad.length} crossing audits failed or found a divergence the engine cannot explain (see the table)`);
});

// 4d. older GPUs' dispatch on this one (POWER_CUDA_AS_CC, the CUDA patch's switch: Flash
// Attention's kernel choice as on Turing and Ampere, the kernels themselves this GPU's). As
// released, a one-row decode with grouped-query attention takes the tensor-core kernel there;
// the patch gives it the vector kernel, and its verify rows too, row by row. The engine reports
// the pretended capability, so the claim follows it: claimed, and every audit identical
const olderTokens = scale === 'full' ? 300 : 128;
const olderRows: AuditRow[] = [];
if (device === 'cuda') {
  await step(`older architectures' dispatch on cuda (POWER_CUDA_AS_CC 750, 860; GQA F16 pair, FA on, K4, ${olderTokens} tokens)`, () => {
    const pair = auditPair('f16');
    const problems: string[] = [];
    for (const [cc, arch] of [
      ['750', 'Turing (sm_75)'],
      ['860', 'Ampere (sm_86)'],
    ] as const) {
      const extra = ['--ctx', '2048', '--flash-attn', 'on', '--draft', models[pair.draft], '--strategy', 'draft-model', '--k', '4'];
      const argv = runArgv('audit', 'cuda', models[pair.target], PROMPTS[0]!, olderTokens, extra);
      const row = auditRow({ type: `as ${arch}: GQA F16, FA on, ${olderTokens} tok`, k: 4, prompt: 1 }, argv, '-audit-as-cc', {
        POWER_CUDA_AS_CC: cc,
      });
      olderRows.push(row);
      if (row.error !== null) problems.push(`${arch}: ${row.error}`);
      else if (row.batchInvariant !== true) problems.push(`${arch}: not claimed (${row.batchInvariantWhy})`);
      else if (row.verdict !== 'identical') problems.push(`${arch}: verdict ${row.verdict}`);
    }
    audits.push(...olderRows);
    if (problems.length) throw new Error(problems.join('; '));
  });
} else {
  skip("older architectures' dispatch (POWER_CUDA_AS_CC)", 'needs a CUDA device');
}

/** one row of a speed table: medians over the runs of one configuration */
function speedRow(model: string, config: string, runs: readonly ReturnType<typeof generate>[]): SpeedRow {
  return {
    model,
    config,
    decode: median(runs.map((r) => r.stats.steadyDecodeTokensPerSecond ?? 0)),
    request: median(runs.map((r) => r.stats.requestTokensPerSecond ?? 0)),
    acceptance: runs[0]!.stats.acceptanceRate,
    replays: runs[0]!.stats.replays,
    flashAttn: runs[0]!.backend.flashAttn,
  };
}

// 5. decode speed: AR vs K7/S7 vs K7/S6 (hybrid) and AR vs the draft (llama), medians of 3
const speed: SpeedRow[] = [];
const long = scale === 'full' ? 256 : 64;
await step(`decode speed on ${device} (${long} tokens, median of 3)`, () => {
  const configs: { model: keyof typeof models; label: string; extra: string[] }[] = [
    { model: 'gpu-hybrid.gguf', label: 'AR', extra: [] },
    { model: 'gpu-hybrid.gguf', label: 'K7/S7 (ngram)', extra: cases[2]!.extra },
    { model: 'gpu-hybrid.gguf', label: 'K7/S6 (ngram)', extra: cases[3]!.extra },
    { model: 'gpu-target.gguf', label: 'AR', extra: [] },
    { model: 'gpu-target.gguf', label: 'K7 (draft-model)', extra: draftArgs },
  ];
  for (const c of configs) {
    const runs = [0, 1, 2].map(() => generate(models[c.model], device, PROMPTS[0]!, long, c.extra));
    speed.push(speedRow(c.model, c.label, runs));
  }
});

// 6. GPU vs CPU: the same AR request on both (digests may differ by rounding: reported)
let cpuVsGpu = '';
if (device === 'cuda') {
  await step('CPU vs CUDA (AR, target)', () => {
    const g = generate(models['gpu-target.gguf'], 'cuda', PROMPTS[0]!, Math.min(n, 32), []);
    const c = generate(models['gpu-target.gguf'], 'cpu', PROMPTS[0]!, Math.min(n, 32), []);
    const at = firstDivergence(g.tokens, c.tokens);
    cpuVsGpu =
      `CUDA ${g.stats.steadyDecodeTokensPerSecond?.toFixed(1)} tok/s vs CPU ${c.stats.steadyDecodeTokensPerSecond?.toFixed(1)} tok/s; ` +
      (at === null ? 'same tokens' : `tokens differ from position ${at} (CPU and GPU kernels round differently)`);
  });
} else {
  skip('CPU vs CUDA (AR, target)', 'needs a CUDA device');
}
// 6b. several GPUs (llama.cpp's --split-mode layer|row, --tensor-split across cards): tokens per
// split against the one-GPU run, the exactness contract on each split, and the memory estimate's
// per-device share against what llama.cpp allocated (its "CUDAn model/KV/compute buffer size" lines)
const splits: SplitRow[] = [];
const cudaDevices = (devices?.flavours ?? []).flatMap((f) => f.devices).filter((d) => d.backend === 'CUDA');
const cardNames = [...new Set(cudaDevices.map((d) => d.name))];
if (device === 'cuda' && cardNames.length >= 2) {
  await step(
    `several GPUs (${cardNames.length} cards: layer and row split, tensor split 1:1 and 3:1; ${Math.min(n, 32)} tokens)`,
    async () => {
      const tokens = Math.min(n, 32);
      const model = models['gpu-target.gguf'];
      const one = generate(model, 'cuda', PROMPTS[0]!, tokens, []);
      const gguf = await readGgufInfo(model);
      const ratios = [cardNames.map(() => 1), cardNames.map((_, i) => (i === 0 ? 3 : 1))];
      for (const mode of ['layer', 'row'] as const) {
        for (const ratio of ratios) {
          const extra = ['--split-mode', mode, '--tensor-split', ratio.join(','), '--verbose'];
          const ar = generateWithLog(model, PROMPTS[0]!, tokens, extra);
          const spec = generate(model, 'cuda', PROMPTS[0]!, tokens, [...extra.filter((x) => x !== '--verbose'), ...draftArgs]);
          // the estimate of each card's share, as the memory check computes it before loading
          const shares = estimateSplit(
            { target: gguf, contextSize: 4096, batchSize: 512, gpuLayers: -1, s: 0, flashAttn: true },
            cardNames.map((name) => ({
              name,
              description: name,
              freeBytes: cudaDevices.find((d) => d.name === name)!.freeBytes,
              remote: false,
              cuda: true,
            })),
            { splitMode: mode, tensorSplit: ratio },
          );
          const allocated = allocatedPerDevice(ar.log);
          splits.push({
            mode,
            ratio: ratio.join(':'),
            sameAsOneGpu: firstDivergence(ar.result.tokens, one.tokens),
            specMatch: spec.digest === ar.result.digest,
            perDevice:
              cardNames
                .map((name) => {
                  const est = shares.find((x) => x.device?.name === name);
                  return `${name} est ${((est?.total ?? 0) / 2 ** 20).toFixed(0)} MiB / llama.cpp ${((allocated.get(name) ?? 0) / 2 ** 20).toFixed(0)} MiB`;
                })
                .join('; ') +
              (allocated.has('CUDA_Split')
                ? `; row-split buffer ${((allocated.get('CUDA_Split') ?? 0) / 2 ** 20).toFixed(0)} MiB over the cards`
                : ''),
          });
        }
      }
      // the split's own exactness contract (speculative = AR on the same split) must hold; a
      // different token than the one-GPU run is a rounding finding of CUDA's kernels, reported
      const bad = splits.filter((r) => !r.specMatch);
      if (bad.length) throw new Error(`${bad.length} of ${splits.length} speculative runs on a split differ from AR on that split`);
    },
  );
} else {
  skip(
    'several GPUs (layer and row split, tensor split, per-device memory)',
    device === 'cuda' ? 'needs two or more CUDA devices' : 'needs CUDA devices',
  );
}
// 6b. the sampling paths (--sampling cpu | backend): AR and draft-model K7 on each, medians of 3;
// speculative = AR on each path, and greedy the same across the paths (a difference is reported:
// a GPU's argmax need not take the lowest id on a tie, `power audit --compare-sampling` says which)
const samplingRows: SpeedRow[] = [];
const samplingNotes: string[] = [];
await step(`sampling paths on ${device} (${long} tokens, median of 3)`, () => {
  const digests = new Map<string, string>();
  for (const path of ['cpu', 'backend'] as const) {
    for (const c of [
      { label: 'AR', extra: [] as string[] },
      { label: 'K7 (draft-model)', extra: draftArgs },
    ]) {
      const runs = [0, 1, 2].map(() => generate(models['gpu-target.gguf'], device, PROMPTS[0]!, long, [...c.extra, '--sampling', path]));
      const ran = runs[0]!.backend.sampling;
      if (ran !== path) throw new Error(`asked for --sampling ${path}, the engine sampled on ${ran}`);
      digests.set(`${path} ${c.label}`, runs[0]!.digest);
      samplingRows.push(speedRow(`gpu-target.gguf, ${path} sampling`, c.label, runs));
    }
    if (digests.get(`${path} AR`) !== digests.get(`${path} K7 (draft-model)`))
      throw new Error(`${path} sampling: draft-model K7 differs from AR`);
  }
  samplingNotes.push(
    digests.get('cpu AR') === digests.get('backend AR')
      ? '- Greedy AR is identical on the CPU and backend sampling paths.'
      : '- Greedy AR differs between the CPU and backend sampling paths: run `power audit --compare-sampling` for the cause.',
  );
});

// 7. the summary
const total = (Date.now() - started) / 1000;
const lines = [
  `# Power GPU check — ${device === 'cuda' ? 'CUDA' : 'CPU-side parts only'}`,
  '',
  `- date: ${new Date().toISOString()}`,
  `- machine: ${machine}`,
  `- device: ${device}${devices?.cuda.use ? ` (${devices.cuda.use})` : ''}${device === 'cpu' && devices?.cuda.reason ? `; CUDA: ${devices.cuda.reason}` : ''}`,
  `- models: ${scale} scale, F16 (the audit also on Q8_0 and Q4_0 copies of the target and draft); CPU threads: ${threads ?? 'the engine default'}`,
  `- total: ${total.toFixed(0)} s (budget ${BUDGET_S} s)${total > BUDGET_S ? ' — OVER BUDGET' : ''}`,
  '',
  ...section('Steps', stepTable(steps)),
  ...section('Exactness contract (greedy: speculative digest = AR digest)', contractTable(contract)),
  ...section('Audit: verify rows vs one-row decodes (power audit, draft-model, greedy)', auditTable(audits)),
  ...section('Decode speed', speedTable(speed)),
  ...section('Sampling paths (CPU vs llama.cpp backend samplers)', [...speedTable(samplingRows), ...samplingNotes]),
  ...(cpuVsGpu ? section('CPU vs CUDA', [cpuVsGpu]) : []),
  ...(splits.length > 0
    ? section('Several GPUs (target, AR and draft-model K7 per split)', [
        '| split | tensor split | first token unlike one GPU | spec = AR on the split | memory: estimate / llama.cpp per card |',
        '| --- | --- | --- | --- | --- |',
        ...splits.map((r) => `| ${r.mode} | ${r.ratio} | ${r.sameAsOneGpu ?? 'none'} | ${r.specMatch ? 'yes' : 'NO'} | ${r.perDevice} |`),
      ])
    : []),
  ...(memoryLine ? section('Memory', [memoryLine]) : []),
  '## Notes',
  '',
  '- S applies to the recurrent (hybrid) target only; the MTP proposer is not run by the engine yet, so K/S is exercised with ngram proposals on the hybrid target.',
  '- Sampling: every run but the sampling-path rows uses --sampling auto (the backend where the target is on a GPU); each JSON says what ran (backend.sampling).',
  '- Raw results: runs/*.json (one per power generate), devices.json, link-check.txt.',
];
writeFileSync(join(outDir, 'summary.md'), lines.join('\n') + '\n');
console.log(lines.join('\n'));
const failed = steps.some((s) => s.status === 'FAIL') || total > BUDGET_S;
process.exit(failed ? 1 : 0);
