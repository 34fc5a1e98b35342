// power audit: does the speculative run emit exactly what the autoregressive control emits, and
// where it does not, is the difference the rounding of a verify row (explained) or a bug?
import { availableParallelism } from 'node:os';

import { FlashAttn } from '../contract/engine-types.js';
import { DEFAULT_K } from '../contract/profile.js';
import { capThreads } from '../runtime/resource-limits.js';
import { STRATEGIES, type Strategy } from '../contract/strategies.js';
import { auditVerdict, compareSamplingPaths, runAudit, type PathComparison, type AuditVerdict, type Divergence } from '../service/audit.js';
import { DEVICE_REQUESTS } from '../engine/device-select.js';
import { buildPrompt } from '../runtime/prompt.js';
import { batchInvarianceOf, openTarget, sessionProblem } from '../runtime/target.js';
import { choice, int, parseFlags, str } from './args.js';
import { cliError, UsageError } from './errors.js';
import { DRAFTING_FLAGS, draftingFromFlags } from './drafting-flags.js';
import { frVocabFromFlags, KS_FLAGS, ksFromFlags } from './ks-flags.js';
import { gpuLayers, TARGET_FLAGS } from './load-flags.js';
import { PROMPT_FLAGS, promptSource } from './prompt-flags.js';
import { SAMPLING_FLAGS, samplingFromFlags } from './sampling-flags.js';
import { SPLIT_USAGE, splitFromFlags } from './split-flags.js';
import type { Io } from './generate.js';

export const AUDIT_USAGE = `power audit --model <model.gguf> [--draft <draft.gguf>] --strategy S[,...] [--k K] [--s S] [--fr-vocab N]
  [--p-min P] [--adaptive-k]
  (--prompt TEXT | --prompt-file PATH | --prompt-tokens 1,2,3) [--raw] [--max-tokens N]
  [--temperature T --seed N] [--top-k N] [--top-p P] [--min-p P] [--repeat-penalty R]
  [--sampling auto|cpu|backend | --compare-sampling] [--grammar FILE | --json-schema FILE]
  [--ctx N] [--threads N] [--device auto|cuda|vulkan|cpu] [--gpu-layers N|all]
  [--flash-attn on|off|auto] [--json]
  ${SPLIT_USAGE}
  Runs the autoregressive control and the speculative run and compares their tokens. At the
  first difference it compares the verify row the speculative run sampled with the control's
  one-row decode. Exit 0: identical, or (on an engine that is not batch-invariant) the rows
  explain the difference; 1: any difference on a batch-invariant engine, or an unexplained one.
  --strategy ngram,mtp audits a chain, --p-min and --adaptive-k as in power generate.`;

const FLAGS = {
  ...TARGET_FLAGS,
  ...KS_FLAGS,
  ...PROMPT_FLAGS,
  'max-tokens': { type: 'string' },
  ...SAMPLING_FLAGS,
  ...DRAFTING_FLAGS,
  json: { type: 'boolean' },
  'compare-sampling': { type: 'boolean' },
} as const;

export interface AuditReport {
  /** what was audited, as power generate --json names it */
  strategy: Strategy;
  fallbacks?: Strategy[];
  k: number;
  /** the snapshots of a recurrent target (null: attention only, S does not apply) */
  s: number | null;
  identical: boolean;
  controlDigest: string;
  specDigest: string;
  tokens: number;
  flavour: string;
  /** what ran: the flavour with the Flash Attention setting of these sessions */
  flashAttn: 'on' | 'off' | 'unknown';
  batchInvariant: boolean;
  /** why batchInvariant is false (null when it is true) */
  batchInvariantWhy: string | null;
  verdict: AuditVerdict;
  /** explained: the rows account for it and the engine does not claim batch invariance */
  firstDivergence: (Divergence & { explained: boolean }) | null;
}

function describe(report: AuditReport): string {
  const audited = `${[report.strategy, ...(report.fallbacks ?? [])].join(',')} K${report.k}${report.s === null ? '' : `/S${report.s}`}`;
  const head = `${audited} against the control\ncontrol ${report.controlDigest}\nspec    ${report.specDigest}\n`;
  const engine =
    `engine: flavour ${report.flavour}, Flash Attention ${report.flashAttn}, ` +
    (report.batchInvariant ? 'batch-invariant' : `not batch-invariant: ${report.batchInvariantWhy}`);
  const d = report.firstDivergence;
  if (!d) return `${head}identical: ${report.tokens} tokens (${engine})\n`;
  const lines = {
    'not-invariant': `  FAILED: this engine claims batch invariance, so no verify row may differ from the one-row decode (${engine})`,
    explained: `  explained: the verify row rounds differently enough to move that choice (${engine})`,
    unexplained: `  NOT explained: the rows do not account for the different tokens; this is a bug (${engine})`,
    identical: '',
  };
  return (
    `${head}first divergence at token ${d.index}: control ${d.controlToken}, spec ${d.specToken}\n` +
    `  control margin (top-1 minus top-2 logit) ${d.controlMargin.toPrecision(4)}, ` +
    `verify row vs one-row decode max |diff| ${d.rowMaxAbsDiff.toPrecision(4)}` +
    `${d.rowsAccount ? ' (the rows account for both tokens)' : ''}\n` +
    `${lines[report.verdict]}\n`
  );
}

function pathReport(ar: PathComparison, spec: PathComparison) {
  const one = (c: PathComparison) => ({
    identical: c.identical,
    cpuDigest: c.cpu.digest,
    backendDigest: c.backend.digest,
    tokens: c.cpu.tokens.length,
    firstDivergence: c.firstDivergence,
  });
  return { autoregressive: one(ar), speculative: one(spec) };
}

function describePaths(ar: PathComparison, spec: PathComparison): string {
  const one = (name: string, c: PathComparison) => {
    const d = c.firstDivergence;
    if (!d) return `${name}: cpu and backend sampling identical over ${c.cpu.tokens.length} tokens\n`;
    const where =
      d.draw !== null
        ? `, draw ${d.draw.toPrecision(9)}, cpu [${d.cpuCumulative?.before.toPrecision(9)}, ${d.cpuCumulative?.after.toPrecision(9)}), backend [${d.backendCumulative?.before.toPrecision(9)}, ${d.backendCumulative?.after.toPrecision(9)})`
        : `, logits ${d.cpuLogit} vs ${d.backendLogit}`;
    return `${name}: first difference at token ${d.index}: cpu drew ${d.cpuToken}, backend ${d.backendToken}${where}: ${d.cause}\n`;
  };
  return one('autoregressive', ar) + one('speculative', spec);
}

export async function auditCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const modelPath = str(values, 'model');
  if (!modelPath) throw new UsageError('power audit needs --model <model.gguf>');
  if (str(values, 'strategy') === undefined) {
    throw new UsageError(`power audit needs --strategy (${STRATEGIES.filter((s) => s !== 'none').join(', ')}, or a list of them)`);
  }
  const drafting = draftingFromFlags(values, undefined);
  const { strategy, fallbacks, pMin, adaptiveK } = drafting;
  if (strategy === 'none') throw new UsageError('--strategy none is the control itself: give the speculative strategy to audit');
  const source = promptSource(values);
  const ks = ksFromFlags(values);
  const frVocab = frVocabFromFlags(values, [strategy, ...fallbacks]);
  const k = ks.k ?? DEFAULT_K;
  const s = ks.s ?? k;
  if (s > k) throw new UsageError(`--s must be from 0 to K (${k}) (got ${s})`);
  const maxTokens = int(values, 'max-tokens', { min: 1, max: 1_000_000 }) ?? 256;
  const { sampling, seedGiven } = samplingFromFlags(values);
  // the audit reruns both requests: a sampled run must be reproducible
  if (sampling.temperature > 0 && !seedGiven) throw new UsageError('--temperature above 0 needs --seed N (the audit reruns both requests)');
  const ctxFlag = int(values, 'ctx', { min: 16, max: 16_777_216 });
  const threadsFlag = int(values, 'threads', { min: 1, max: 1024 });
  const threadsCap = threadsFlag === undefined ? undefined : capThreads(threadsFlag, availableParallelism());
  if (threadsCap?.warning) io.err(`warning: ${threadsCap.warning}\n`);
  const threads = threadsCap?.threads ?? 0; // 0: the engine's default (docs/cli.md "Threads")
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';
  const flashAttn = choice(values, 'flash-attn', FlashAttn.options);
  const draftPath = str(values, 'draft');
  const split = splitFromFlags(values);

  // the same load rules as power generate and the service (app/runtime)
  const target = await openTarget({
    path: modelPath,
    device,
    gpuLayers: gpuLayers(values),
    ...(split ? { split } : {}),
    strategy,
    fallbacks,
    ...(draftPath ? { draftPath } : {}),
    s,
    ...(ctxFlag !== undefined ? { contextSize: ctxFlag } : {}),
    ...(flashAttn ? { flashAttn } : {}),
    verbose: values.verbose === true,
  }).catch((error: unknown) => {
    throw cliError(error);
  });
  const { engine, modelId, info, placement, contextSize } = target;
  try {
    const unschedulable = sessionProblem(target, { strategy, fallbacks, k, s, frVocab });
    if (unschedulable) throw new UsageError(unschedulable);
    const prompt = await buildPrompt(engine, modelId, info, target.gguf, source, { raw: values.raw === true, contextSize }, (l: string) =>
      io.err(`warning: ${l}\n`),
    );
    if (prompt.length + 1 > contextSize) {
      throw new UsageError(
        `the prompt is ${prompt.length} tokens but the context holds ${contextSize} (raise --ctx or shorten the prompt)`,
      );
    }
    if (!values.json && placement.note) io.err(`[${placement.note}]\n`);

    const auditRequest = {
      modelId,
      ...(target.draft ? { draftModelId: target.draft.modelId } : {}),
      strategy,
      fallbacks,
      pMin,
      adaptiveK,
      k,
      s,
      ...(frVocab !== undefined ? { frVocab } : {}),
      contextSize,
      threads,
      flashAttn: target.flashAttn,
      prompt,
      maxTokens,
      sampling,
    };
    if (values['compare-sampling']) {
      // the two sampling paths against each other, autoregressive and speculative
      const ar = await compareSamplingPaths(engine, auditRequest, false);
      const spec = await compareSamplingPaths(engine, auditRequest, true);
      io.out(values.json ? JSON.stringify(pathReport(ar, spec)) + '\n' : describePaths(ar, spec));
      const explained = (c: PathComparison) => c.identical || c.firstDivergence?.cause !== 'unexplained';
      return explained(ar) && explained(spec) ? 0 : 1;
    }
    const outcome = await runAudit(engine, auditRequest);
    const claim = batchInvarianceOf(target, { flashAttn: outcome.flashAttn, k });
    const verdict = auditVerdict(outcome, claim.claimed);
    const d = outcome.firstDivergence;
    const report: AuditReport = {
      strategy,
      ...(fallbacks.length > 0 ? { fallbacks } : {}),
      k,
      s: info.recurrent || info.hybrid ? s : null,
      identical: outcome.identical,
      controlDigest: outcome.control.digest,
      specDigest: outcome.spec.digest,
      tokens: outcome.control.tokens.length,
      flavour: placement.flavour,
      flashAttn: outcome.flashAttn,
      batchInvariant: claim.claimed,
      batchInvariantWhy: claim.why,
      verdict,
      firstDivergence: d ? { ...d, explained: verdict === 'explained' } : null,
    };
    io.out(values.json ? JSON.stringify(report) + '\n' : describe(report));
    return verdict === 'identical' || verdict === 'explained' ? 0 : 1;
  } catch (error) {
    throw cliError(error);
  } finally {
    await engine.close();
  }
}
