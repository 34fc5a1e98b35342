// power audit: does the speculative run emit exactly what the autoregressive control emits, and
// where it does not, is the difference the rounding of a verify row (explained) or a bug?
import { availableParallelism } from 'node:os';

import { SamplingOptions } from '../../app/engine-protocol.js';
import { DEFAULT_K, K_MAX } from '../../app/profile.js';
import { capThreads } from '../../app/resource-limits.js';
import { STRATEGIES, type Strategy } from '../../app/strategies.js';
import { runAudit, type Divergence } from '../engine/audit.js';
import { readBuildInfo } from '../engine/build-info.js';
import { DEVICE_REQUESTS } from '../engine/device-select.js';
import { buildPrompt, type PromptSource } from '../service/runtime/prompt.js';
import { openTarget, sessionProblem } from '../service/runtime/target.js';
import { choice, int, num, parseFlags, str, tokenList } from './args.js';
import { cliError, UsageError } from './errors.js';
import type { Io } from './generate.js';

export const AUDIT_USAGE = `power audit --model <model.gguf> [--draft <draft.gguf>] --strategy S [--k K] [--s S]
  (--prompt TEXT | --prompt-file PATH | --prompt-tokens 1,2,3) [--raw] [--max-tokens N]
  [--temperature T --seed N] [--ctx N] [--threads N] [--device auto|cuda|cpu] [--json]
  Runs the autoregressive control and the speculative run and compares their tokens. At the
  first difference it compares the verify row the speculative run sampled with the control's
  one-row decode. Exit 0: identical, or the rows explain the difference; 1: unexplained.`;

const FLAGS = {
  model: { type: 'string' },
  draft: { type: 'string' },
  strategy: { type: 'string' },
  k: { type: 'string' },
  s: { type: 'string' },
  prompt: { type: 'string' },
  'prompt-file': { type: 'string' },
  'prompt-tokens': { type: 'string' },
  raw: { type: 'boolean' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  ctx: { type: 'string' },
  threads: { type: 'string' },
  device: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
} as const;

export interface AuditReport {
  identical: boolean;
  controlDigest: string;
  specDigest: string;
  tokens: number;
  flavour: string;
  batchInvariant: boolean;
  firstDivergence: Divergence | null;
}

function promptSource(values: Record<string, string | boolean | undefined>): PromptSource {
  const given = (['prompt', 'prompt-file', 'prompt-tokens'] as const).filter((k) => str(values, k) !== undefined);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? 'give a prompt with --prompt, --prompt-file or --prompt-tokens'
        : `give only one of --prompt, --prompt-file, --prompt-tokens (got ${given.map((g) => `--${g}`).join(', ')})`,
    );
  }
  if (given[0] === 'prompt') return { kind: 'text', text: str(values, 'prompt')! };
  if (given[0] === 'prompt-file') return { kind: 'file', path: str(values, 'prompt-file')! };
  return { kind: 'tokens', tokens: tokenList(values, 'prompt-tokens')! };
}

function describe(report: AuditReport): string {
  const head = `control ${report.controlDigest}\nspec    ${report.specDigest}\n`;
  const engine = `engine: flavour ${report.flavour}, ${report.batchInvariant ? 'batch-invariant' : 'not batch-invariant'}`;
  const d = report.firstDivergence;
  if (!d) return `${head}identical: ${report.tokens} tokens (${engine})\n`;
  return (
    `${head}first divergence at token ${d.index}: control ${d.controlToken}, spec ${d.specToken}\n` +
    `  control margin (top-1 minus top-2 logit) ${d.controlMargin.toPrecision(4)}, ` +
    `verify row vs one-row decode max |diff| ${d.rowMaxAbsDiff.toPrecision(4)}\n` +
    (d.explained
      ? `  explained: the verify row rounds differently enough to move that choice (${engine})\n`
      : `  NOT explained: the rows do not account for the different tokens; this is a bug (${engine})\n`)
  );
}

export async function auditCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const modelPath = str(values, 'model');
  if (!modelPath) throw new UsageError('power audit needs --model <model.gguf>');
  const strategy: Strategy | undefined = choice(values, 'strategy', STRATEGIES);
  if (!strategy) throw new UsageError(`power audit needs --strategy (${STRATEGIES.filter((s) => s !== 'none').join(', ')})`);
  if (strategy === 'none') throw new UsageError('--strategy none is the control itself: give the speculative strategy to audit');
  const source = promptSource(values);
  const k = int(values, 'k', { min: 1, max: K_MAX }) ?? DEFAULT_K;
  const s = int(values, 's', { min: 0, max: K_MAX }) ?? k;
  if (s > k) throw new UsageError(`--s must be from 0 to K (${k}) (got ${s})`);
  const maxTokens = int(values, 'max-tokens', { min: 1, max: 1_000_000 }) ?? 256;
  const temperature = num(values, 'temperature', { min: 0, max: 100 }) ?? 0;
  const seed = int(values, 'seed', { min: 0, max: 0xffffffff });
  // the audit reruns both requests: a seeded run must be reproducible
  if (temperature > 0 && seed === undefined) throw new UsageError('--temperature above 0 needs --seed N (the audit reruns both requests)');
  // the protocol's defaults (top-k 40, top-p 0.95, min-p 0.05, no penalties), as power generate's
  const sampling = SamplingOptions.parse({ temperature, seed: seed ?? 0 });
  const ctxFlag = int(values, 'ctx', { min: 16, max: 16_777_216 });
  const threadsFlag = int(values, 'threads', { min: 1, max: 1024 });
  const threadsCap = threadsFlag === undefined ? undefined : capThreads(threadsFlag, availableParallelism());
  if (threadsCap?.warning) io.err(`warning: ${threadsCap.warning}\n`);
  const threads = threadsCap?.threads ?? 0; // 0: the engine's default (README "Threads")
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';
  const draftPath = str(values, 'draft');

  // the same load rules as power generate and the service (main/service/runtime)
  const target = await openTarget({
    path: modelPath,
    device,
    gpuLayers: -1,
    strategy,
    ...(draftPath ? { draftPath } : {}),
    s,
    ...(ctxFlag !== undefined ? { contextSize: ctxFlag } : {}),
    verbose: values.verbose === true,
  }).catch((error: unknown) => {
    throw cliError(error);
  });
  const { engine, modelId, info, placement, contextSize } = target;
  try {
    const unschedulable = sessionProblem(target, { strategy, k, s });
    if (unschedulable) throw new UsageError(unschedulable);
    const prompt = await buildPrompt(engine, modelId, info, target.gguf, source, { raw: values.raw === true, contextSize }, (l: string) => io.err(`warning: ${l}\n`));
    if (prompt.length + 1 > contextSize) {
      throw new UsageError(`the prompt is ${prompt.length} tokens but the context holds ${contextSize} (raise --ctx or shorten the prompt)`);
    }
    if (!values.json && placement.note) io.err(`[${placement.note}]\n`);

    const outcome = await runAudit(engine, {
      modelId,
      ...(target.draft ? { draftModelId: target.draft.modelId } : {}),
      strategy,
      k,
      s,
      contextSize,
      threads,
      ...(placement.kind === 'cuda' ? { flashAttn: 'on' as const } : {}),
      prompt,
      maxTokens,
      sampling,
    });
    const report: AuditReport = {
      identical: outcome.identical,
      controlDigest: outcome.control.digest,
      specDigest: outcome.spec.digest,
      tokens: outcome.control.tokens.length,
      flavour: placement.flavour,
      batchInvariant: readBuildInfo(placement.flavour).batchInvariant === true,
      firstDivergence: outcome.firstDivergence,
    };
    io.out(values.json ? JSON.stringify(report) + '\n' : describe(report));
    return report.identical || report.firstDivergence?.explained ? 0 : 1;
  } catch (error) {
    throw cliError(error);
  } finally {
    await engine.close();
  }
}

