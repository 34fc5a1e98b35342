// power bench: a task set against K/S profiles and the autoregressive control, interleaved in
// one engine, written as a report (JSON, and CSV / Markdown / HTML / PDF derived from it).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

import { FlashAttn } from '../contract/engine-types.js';
import { WARMUP_ROUNDS } from '../contract/generation-result.js';
import { parseProfileList, ProfileListError, PROFILE_SYNTAX } from '../report/bench-profiles.js';
import { buildReport } from '../contract/report/build.js';
import { fixed, memberShare, percent, ratio } from '../report/format.js';
import type { Report } from '../contract/report/schema.js';
import { TaskFileError } from '../report/tasks.js';
import { capThreads } from '../runtime/resource-limits.js';
import { environment, modelFile } from '../report/environment.js';
import { ChromiumError, findChromium } from '../report/pdf.js';
import { ProgressLine } from '../bench/progress.js';
import { BenchRun } from '../bench/runner.js';
import { loadTaskSet, TaskSetError, type TaskSet } from '../bench/tasks.js';
import { REPORT_FORMATS, TEXT_FORMATS, type ReportFormat } from '../contract/api/reports.js';
import { writeReport } from '../bench/write.js';
import { DEVICE_REQUESTS, describeDevice } from '../engine/device-select.js';
import { choice, int, parseFlags, str } from './args.js';
import { gpuLayers, TARGET_FLAGS } from './load-flags.js';
import { cliError, UsageError } from './errors.js';
import { SAMPLING_FLAGS, samplingFromFlags } from './sampling-flags.js';
import { DRAFTING_FLAGS, draftingFromFlags, type Drafting } from './drafting-flags.js';
import { frVocabFromFlags, KS_FLAGS } from './ks-flags.js';
import { SPLIT_USAGE, splitFromFlags } from './split-flags.js';
import type { Io } from './generate.js';
import { createProfileSessions, prepareTasks } from './bench-setup.js';
import { openTarget, sessionProblem } from '../runtime/target.js';

export const BENCH_USAGE = `power bench --model <model.gguf> [--draft <draft.gguf>] [--strategy S] [--profiles LIST]
  [--tasks calibration|matrix|FILE.jsonl] [--repeat N] [--max-tokens N] [--temperature T --seed N] [--sampling auto|cpu|backend]
  [--p-min P] [--adaptive-k] [--fr-vocab N]
  [--out DIR] [--formats json,csv,md,html,pdf] [--raw] [--ctx N] [--threads N]
  [--device auto|cuda|vulkan|cpu] [--gpu-layers N|all] [--flash-attn on|off|auto]
  ${SPLIT_USAGE}
  Runs every task with the autoregressive control and each profile (balanced = K7/S7,
  peak = K7/S6, k<K>, k<K>s<S>), interleaved in one engine, and writes report.<format> to --out.
  --strategy ngram,mtp benches a chain (the report counts each member's rounds); --p-min,
  --adaptive-k and --fr-vocab apply to every speculative profile, as in power generate.`;

const FLAGS = {
  ...TARGET_FLAGS,
  profiles: { type: 'string' },
  tasks: { type: 'string' },
  repeat: { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  sampling: SAMPLING_FLAGS.sampling,
  out: { type: 'string' },
  formats: { type: 'string' },
  raw: { type: 'boolean' },
  ...DRAFTING_FLAGS,
  'fr-vocab': KS_FLAGS['fr-vocab'],
} as const;

const DEFAULT_FORMATS: readonly ReportFormat[] = TEXT_FORMATS; // the PDF needs Chromium: asked for by name

function formatsOf(raw: string | undefined): readonly ReportFormat[] {
  if (raw === undefined) return DEFAULT_FORMATS;
  const list = raw.split(',').map((f) => f.trim().toLowerCase());
  const bad = list.find((f) => !(REPORT_FORMATS as readonly string[]).includes(f));
  if (bad !== undefined || list.length === 0) {
    throw new UsageError(`--formats takes a comma-separated list of ${REPORT_FORMATS.join(', ')} (got '${raw}')`);
  }
  return [...new Set(list)] as ReportFormat[];
}

/** --strategy (one or a chain), --p-min, --adaptive-k; without --strategy, draft-model with --draft, else ngram. */
function draftingOf(values: Record<string, string | boolean | undefined>): Drafting {
  const drafting = draftingFromFlags(values, undefined);
  if (str(values, 'strategy') === undefined) return { ...drafting, strategy: str(values, 'draft') ? 'draft-model' : 'ngram' };
  if (drafting.strategy === 'none') {
    throw new UsageError('--strategy none is the control, which always runs; choose a speculative strategy (ngram, draft-model, mtp)');
  }
  return drafting;
}

async function tasksOf(name: string): Promise<TaskSet> {
  try {
    return await loadTaskSet(name);
  } catch (error) {
    if (error instanceof TaskFileError || error instanceof TaskSetError) throw new UsageError(`--tasks: ${error.message}`);
    throw error;
  }
}

function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

function quoteArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

function summaryLines(report: Report): string[] {
  const control = report.profiles.find((p) => p.k === null);
  return report.profiles.map((p) => {
    const steady = `steady ${fixed(p.steadyDecodeTokensPerSecond?.median, 1)} tok/s`;
    if (!p.speedup) return `  ${p.name}: ${steady}, request ${fixed(p.requestTokensPerSecond?.median, 1)} tok/s (${p.requests} requests)`;
    return (
      `  ${p.name}: ${steady} (control ${fixed(control?.steadyDecodeTokensPerSecond?.median, 1)}), ` +
      `speedup ${ratio(p.speedup.steadyDecode.medianOfTaskRatios)} (median of task ratios; ratio of medians ${ratio(p.speedup.steadyDecode.ratioOfMedians)}), ` +
      `acceptance ${percent(p.proposed > 0 ? p.accepted / p.proposed : null)}${p.members ? ` (${memberShare(p.members)})` : ''}, ` +
      `outputs = control ${p.digestMatches}/${p.requests}`
    );
  });
}

export async function benchCommand(argv: string[], io: Io, stderr: NodeJS.WriteStream | null = null): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const modelPath = str(values, 'model');
  if (!modelPath) throw new UsageError('power bench needs --model <model.gguf>');
  const drafting = draftingOf(values);
  const { strategy, fallbacks } = drafting;
  const frVocab = frVocabFromFlags(values, [strategy, ...fallbacks]);
  let profiles;
  try {
    profiles = parseProfileList(str(values, 'profiles') ?? 'balanced,peak');
  } catch (error) {
    if (error instanceof ProfileListError) throw new UsageError(`--profiles: ${error.message}`);
    throw error;
  }
  if (profiles.length < 2) throw new UsageError(`--profiles: name at least one speculative profile (${PROFILE_SYNTAX})`);
  const formats = formatsOf(str(values, 'formats'));
  const taskSet = await tasksOf(str(values, 'tasks') ?? 'calibration');
  const repeat = int(values, 'repeat', { min: 1, max: 1000 }) ?? 1;
  const maxTokensFlag = int(values, 'max-tokens', { min: 1, max: 1_000_000 });
  // the temperature and seed flags; the rest of the sampling as the protocol's defaults
  const { sampling } = samplingFromFlags(values);
  const { temperature } = sampling;
  const ctxFlag = int(values, 'ctx', { min: 16, max: 16_777_216 });
  const threadsFlag = int(values, 'threads', { min: 1, max: 1024 });
  const threadsCap = threadsFlag === undefined ? undefined : capThreads(threadsFlag, availableParallelism());
  if (threadsCap?.warning) io.err(`warning: ${threadsCap.warning}\n`);
  const threads = threadsCap?.threads ?? 0; // 0: the engine's default (docs/cli.md "Threads")
  const flashFlag = choice(values, 'flash-attn', FlashAttn.options);
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';
  const layers = gpuLayers(values);
  const startedAt = new Date();
  const outDir = resolve(str(values, 'out') ?? `power-bench-${stamp(startedAt)}`);
  let chromium: string | undefined;
  if (formats.includes('pdf')) {
    try {
      chromium = findChromium();
    } catch (error) {
      if (error instanceof ChromiumError) throw new UsageError(`--formats pdf: ${error.message}`);
      throw error;
    }
  }
  const draftPath = str(values, 'draft');
  const maxS = Math.max(...profiles.map((p) => p.s ?? 0));
  const split = splitFromFlags(values);

  // the same load rules as power generate, audit and the service (app/runtime)
  const target = await openTarget({
    path: modelPath,
    device,
    gpuLayers: layers,
    strategy,
    fallbacks,
    ...(draftPath ? { draftPath } : {}),
    s: maxS,
    ...(ctxFlag !== undefined ? { contextSize: ctxFlag } : {}),
    ...(flashFlag ? { flashAttn: flashFlag } : {}),
    verbose: values.verbose === true,
    ...(split ? { split } : {}),
  }).catch((error: unknown) => {
    throw cliError(error);
  });
  const { engine, modelId, info, placement, contextSize, flashAttn } = target;
  const draftModel = target.draft ?? undefined;
  const progress = new ProgressLine(stderr);
  try {
    for (const p of profiles) {
      if (p.k === null) continue;
      const unschedulable = sessionProblem(target, { strategy, fallbacks, k: p.k, s: p.s ?? 0, frVocab });
      if (unschedulable) throw new UsageError(`profile ${p.name}: ${unschedulable}`);
    }
    const prepared = await prepareTasks(engine, { modelId, info, gguf: target.gguf }, taskSet.tasks, {
      raw: values.raw === true,
      contextSize,
      maxTokens: maxTokensFlag,
      warn: (l) => io.err(`warning: ${l}\n`),
    });

    const {
      sessions,
      runs,
      flashAttn: settledFlash,
      threads: settledThreads,
    } = await createProfileSessions(engine, profiles, {
      modelId,
      draftModelId: draftModel?.modelId,
      drafting: { ...drafting, frVocab },
      contextSize,
      threads,
      flashAttn,
    });
    if (!info.recurrent && !info.hybrid && profiles.some((p) => p.s !== null && p.k !== null && p.s < p.k)) {
      io.err('note: the target has no recurrent state, so S does not apply (profiles that differ only in S run alike)\n');
    }
    if (placement.note) io.err(`[${placement.note}]\n`);

    const bench = new BenchRun(engine, {
      tasks: prepared,
      sessions,
      repeat,
      sampling,
      stochastic: temperature > 0,
    });
    const stopInterrupt = io.onInterrupt(() => bench.cancel());
    let outcome;
    try {
      outcome = await bench.run((p) => progress.update(p));
    } finally {
      stopInterrupt();
      progress.clear();
    }

    const models = [await modelFile('target', modelPath, info)];
    if (draftPath && draftModel) models.push(await modelFile('draft', draftPath, draftModel.info));
    const report = buildReport(
      {
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        command: ['power', 'bench', ...argv].map(quoteArg).join(' '),
        strategy,
        profiles: runs,
        tasks: { name: taskSet.name, count: prepared.length, categories: [...new Set(prepared.map((t) => t.task.category))] },
        repeat,
        maxTokens: maxTokensFlag ?? null,
        temperature,
        seed: temperature > 0 ? sampling.seed : null,
        warmupRounds: WARMUP_ROUNDS,
        cancelled: outcome.cancelled,
      },
      environment(placement, describeDevice(placement.device), models, {
        gpuLayers: placement.kind === 'cpu' && placement.remote.length === 0 ? null : layers < 0 ? 'all' : layers,
        flashAttn: settledFlash,
        contextSize,
        threads: settledThreads,
        batchSize: 512,
      }),
      outcome.requests,
    );
    let written: string[];
    try {
      written = await writeReport(report, outDir, formats, chromium);
    } catch (error) {
      if (error instanceof ChromiumError) throw new UsageError(error.message);
      throw error;
    }
    if (outcome.cancelled) io.err(`cancelled: the report holds the ${outcome.requests.length} requests completed\n`);
    io.out(`${summaryLines(report).join('\n')}\n${written.map((w) => `wrote ${w}`).join('\n')}\n`);
    return outcome.cancelled ? 130 : 0;
  } catch (error) {
    throw cliError(error);
  } finally {
    progress.clear();
    await engine.close();
  }
}
