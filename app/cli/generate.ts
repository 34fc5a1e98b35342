// power generate: one prompt through the engine, text streamed to stdout or one JSON object.
// A thin front door: the load rules (device, memory, strategy, draft) live in app/runtime.
import { availableParallelism } from 'node:os';

import { FlashAttn, type RoundRecord, type SamplingOptions } from '../contract/engine-types.js';
import { GenerationResult } from '../contract/generation-result.js';
import { memberStats } from '../contract/report/stats.js';
import { memberShare } from '../report/format.js';
import { resolveKS } from '../contract/profile.js';
import { apiRound, cancelledOutcome, runRequest, type GenerationOutcome } from '../service/request.js';
import { capThreads } from '../runtime/resource-limits.js';
import { noProposalsNote, STRATEGIES, type Strategy } from '../contract/strategies.js';
import { CancelledError } from '../engine/cancellation.js';
import { DEVICE_REQUESTS } from '../engine/device-select.js';
import { ModelLoadCancelled } from '../runtime/open-model.js';
import { buildMediaPrompt, buildPrompt } from '../runtime/prompt.js';
import { explainRemoteLoss } from '../runtime/remote.js';
import {
  asPowerError,
  backendOf,
  createSession,
  invarianceEvidence,
  openTarget,
  sessionProblem,
  type OpenedTarget,
} from '../runtime/target.js';
import { choice, int, parseFlags, str } from './args.js';
import { cliError, FailureError, UsageError } from './errors.js';
import { readProfile } from './profile.js';
import { DRAFTING_FLAGS, draftingFromFlags, type Drafting } from './drafting-flags.js';
import { frVocabFromFlags, KS_FLAGS, ksFromFlags } from './ks-flags.js';
import { IMAGE_FLAGS, imagePaths, imageProjector, readImages } from './image-flags.js';
import { gpuLayers, TARGET_FLAGS } from './load-flags.js';
import { PROMPT_FLAGS, promptSource } from './prompt-flags.js';
import { SAMPLING_FLAGS, samplingFromFlags } from './sampling-flags.js';
import { SPLIT_USAGE, splitFromFlags } from './split-flags.js';

export const GENERATE_USAGE = `power generate --model <model.gguf> (--prompt TEXT | --prompt-file PATH | --prompt-tokens 1,2,3)
  [--image FILE]... [--mmproj <mmproj.gguf>] [--raw] [--max-tokens N] [--temperature T] [--seed N] [--top-k N] [--top-p P] [--min-p P]
  [--repeat-penalty R] [--sampling auto|cpu|backend] [--grammar FILE | --json-schema FILE] [--ctx N] [--threads N]
  [--device auto|cuda|vulkan|cpu] [--gpu-layers N|all] [--flash-attn on|off|auto]
  ${SPLIT_USAGE}
  [--strategy ${STRATEGIES.join('|')}[,...]] [--draft <draft.gguf>] [--k N] [--s N] [--p-min P] [--adaptive-k] [--fr-vocab N]
  [--profile FILE.toml] [--json [--rounds]]
  Generates a reply. Text streams to stdout; --json prints one object with the tokens, their
  digest, the stop reason, the evidence and what ran it. --device auto (default) takes a CUDA
  device when one loads, else the CPU; --device cuda fails instead of running on the CPU.
  --strategy ngram,mtp chains proposers: each round the first that drafts wins. --p-min P stops
  a greedy drafter (draft-model, mtp, eagle3, dflash, dspark) under top-1 probability P;
  --adaptive-k shortens K after rejections and grows it back after full acceptances.
  --image FILE (PNG, JPEG, BMP, GIF, ...; repeatable) puts images before the prompt's text, read
  through the model's projector: the mmproj-*.gguf beside it, or --mmproj.
  Ctrl-C cancels at any moment and prints what was generated (exit code 130).`;

const FLAGS = {
  ...TARGET_FLAGS,
  ...PROMPT_FLAGS,
  ...IMAGE_FLAGS,
  'max-tokens': { type: 'string' },
  ...SAMPLING_FLAGS,
  ...KS_FLAGS,
  ...DRAFTING_FLAGS,
  profile: { type: 'string' },
  json: { type: 'boolean' },
  rounds: { type: 'boolean' },
} as const;

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** registers a cancel handler (Ctrl-C); returns the unregister function */
  onInterrupt: (handler: () => void) => () => void;
}

export async function generateCommand(argv: string[], io: Io, interruptedAlready = false): Promise<number> {
  // warnings wait until the generation starts, so that an error is always the first line
  const warnings: string[] = [];
  const flushWarnings = (): void => {
    for (const w of warnings.splice(0)) io.err(`warning: ${w}\n`);
  };
  // Ctrl-C from the very start: before the generation runs it ends the request as cancelled
  const interrupt = new AbortController();
  const stopInterrupt = io.onInterrupt(() => interrupt.abort());
  if (interruptedAlready) interrupt.abort();
  try {
    return await generate(argv, io, { warn: (w) => warnings.push(w), flushWarnings, signal: interrupt.signal });
  } catch (error) {
    const mapped = cliError(error);
    if (mapped instanceof UsageError || mapped instanceof FailureError) mapped.warnings.push(...warnings);
    throw mapped;
  } finally {
    stopInterrupt();
  }
}

interface Run {
  warn: (line: string) => void;
  flushWarnings: () => void;
  signal: AbortSignal;
}

async function generate(argv: string[], io: Io, run: Run): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const modelPath = str(values, 'model');
  if (!modelPath) throw new UsageError('power generate needs --model <model.gguf>');
  const source = promptSource(values);
  const images = imagePaths(values);
  if (images.length > 0 && source.kind === 'tokens')
    throw new UsageError('--image goes with --prompt or --prompt-file, not --prompt-tokens');
  // read before the model loads: a missing file fails at once
  const imageFiles = await readImages(images);
  const profilePath = str(values, 'profile');
  const profile = profilePath ? await readProfile(profilePath) : undefined;
  // flags override the profile
  const drafting = draftingFromFlags(values, profile);
  const { strategy, fallbacks } = drafting;
  const frVocab = frVocabFromFlags(values, [strategy, ...fallbacks], profile?.spec_mtp_fr_vocab_size);
  const inProfile = (key: string) => `${key} in the profile ${profilePath}`;
  const { k, s } = resolveKS([
    { ...ksFromFlags(values), kName: '--k', sName: '--s' },
    {
      k: profile?.spec_draft_max,
      s: profile?.spec_mtp_recurrent_snapshots,
      kName: inProfile('spec_draft_max'),
      sName: inProfile('spec_mtp_recurrent_snapshots'),
    },
  ]);
  const maxTokens = int(values, 'max-tokens', { min: 1, max: 1_000_000 }) ?? 256;
  const { sampling } = samplingFromFlags(values);
  const { temperature } = sampling;
  const ctxFlag = int(values, 'ctx', { min: 16, max: 16_777_216 });
  const threadsFlag = int(values, 'threads', { min: 1, max: 1024 });
  const threadsCap = threadsFlag === undefined ? undefined : capThreads(threadsFlag, availableParallelism());
  if (threadsCap?.warning) run.warn(threadsCap.warning);
  const threads = threadsCap?.threads ?? 0; // 0: the engine's default (docs/cli.md "Threads")
  const flashFlag = choice(values, 'flash-attn', FlashAttn.options);
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';
  const layers = gpuLayers(values);
  const draftPath = str(values, 'draft');
  const speculative = strategy !== 'none';
  const split = splitFromFlags(values);

  let target: OpenedTarget;
  try {
    target = await openTarget({
      path: modelPath,
      device,
      gpuLayers: layers,
      strategy,
      fallbacks,
      ...(draftPath ? { draftPath } : {}),
      s,
      ...(ctxFlag !== undefined ? { contextSize: ctxFlag } : {}),
      ...(flashFlag ? { flashAttn: flashFlag } : {}),
      verbose: values.verbose === true,
      signal: run.signal,
      ...(split ? { split } : {}),
    });
  } catch (error) {
    if (!(error instanceof ModelLoadCancelled)) throw error;
    // Ctrl-C while the engine started or the models loaded: nothing was generated
    const outcome = await cancelledOutcome(0);
    return report(io, values, outcome, {
      strategy,
      drafting,
      k: speculative ? k : null,
      s: null,
      frVocab: frVocab ?? null,
      temperature,
      sampling,
      layers,
      placement: error.placement,
      batchInvariant: false,
      batchInvariantWhy: 'the load was cancelled: nothing ran',
      flashAttn: 'unknown',
      memory: null,
    });
  }
  const { engine, modelId, info, placement } = target;
  try {
    const contextSize = target.contextSize;
    const recurrent = info.recurrent || info.hybrid;
    const unschedulable = sessionProblem(target, { strategy, k, s, frVocab });
    if (unschedulable) throw new UsageError(unschedulable);
    const projector = images.length > 0 ? await imageProjector(modelPath, target.gguf, str(values, 'mmproj')) : undefined;
    const promptOptions = { raw: values.raw === true, contextSize, signal: run.signal };
    // null: Ctrl-C while the chat template rendered
    const cancelledToNull = (error: unknown) => {
      if (error instanceof CancelledError) return null;
      throw error;
    };
    const media = projector
      ? await buildMediaPrompt(engine, modelId, info, target.gguf, source, imageFiles, promptOptions, run.warn).catch(cancelledToNull)
      : undefined;
    // a prompt with images is tokenized in the engine (the request then carries no tokens)
    const prompt =
      media === undefined
        ? await buildPrompt(engine, modelId, info, target.gguf, source, promptOptions, run.warn).catch(cancelledToNull)
        : media && new Int32Array(0);
    if (prompt && prompt.length + 1 > contextSize) {
      throw new UsageError(
        `the prompt is ${prompt.length} tokens but the context holds ${target.contextSize} (raise --ctx or shorten the prompt)`,
      );
    }
    const session =
      !prompt || run.signal.aborted
        ? undefined
        : await createSession(target, {
            strategy,
            fallbacks,
            k,
            s,
            threads,
            pMin: drafting.pMin,
            adaptiveK: drafting.adaptiveK,
            frVocab,
            ...(projector ? { projector } : {}),
          });

    run.flushWarnings();
    if (!values.json && placement.note) io.err(`[${placement.note}]\n`);
    let outcome: GenerationOutcome;
    if (!prompt || !session || run.signal.aborted) {
      outcome = await cancelledOutcome(prompt?.length ?? 0);
    } else {
      const cancel = (): void => void engine.call('cancel', { sessionId: session.sessionId }).catch(() => {});
      run.signal.addEventListener('abort', cancel, { once: true });
      try {
        outcome = await runRequest(
          engine,
          { sessionId: session.sessionId, prompt, ...(media ? { media } : {}), maxTokens, sampling },
          values.json ? {} : { sink: (batch) => batch.text && io.out(batch.text) },
        );
      } finally {
        run.signal.removeEventListener('abort', cancel);
      }
    }
    return report(io, values, outcome, {
      strategy,
      drafting,
      k: speculative ? (session?.k ?? k) : null,
      s: speculative && recurrent ? (session?.s ?? s) : null,
      frVocab: frVocab ?? null,
      temperature,
      sampling,
      layers,
      placement,
      ...invarianceEvidence(target, session),
      flashAttn: session?.flashAttn ?? 'unknown',
      memory: target.memory?.estimate.total ?? null,
    });
  } catch (error) {
    // a machine of the split that went away is named (the streamed text stays on stdout)
    throw cliError(await explainRemoteLoss(asPowerError(error), placement.remote));
  } finally {
    await engine.close();
  }
}

interface ReportContext {
  strategy: Strategy;
  /** the rest of the chain, p-min and adaptive K as the request asked */
  drafting: Drafting;
  k: number | null;
  s: number | null;
  frVocab: number | null;
  temperature: number;
  sampling: SamplingOptions;
  layers: number;
  placement: OpenedTarget['placement'];
  /** invarianceEvidence (false when the load was cancelled: nothing ran) */
  batchInvariant: boolean;
  batchInvariantWhy: string | null;
  flashAttn: 'on' | 'off' | 'unknown';
  memory: number | null;
}

/** A chain's verify rounds by member, " (ngram 30/40 in 12 rounds, mtp 9/12 in 3 rounds)"; "" for one strategy. */
function chainShare(drafting: Drafting, rounds: readonly RoundRecord[]): string {
  if (drafting.fallbacks.length === 0) return '';
  return ` (${memberShare(memberStats([drafting.strategy, ...drafting.fallbacks], rounds))})`;
}

/** Prints the result (the JSON object, or the summary line after the streamed text); the exit code. */
function report(io: Io, values: Record<string, string | boolean | undefined>, outcome: GenerationOutcome, c: ReportContext): number {
  const { placement } = c;
  const result = GenerationResult.parse({
    tokens: outcome.tokens,
    text: outcome.text,
    digest: outcome.digest,
    strategy: c.strategy,
    // only when asked for: a one-strategy reply's object stays as it was
    ...(c.drafting.fallbacks.length > 0 ? { fallbacks: c.drafting.fallbacks } : {}),
    ...(c.strategy !== 'none' && c.drafting.pMin > 0 ? { pMin: c.drafting.pMin } : {}),
    ...(c.strategy !== 'none' && c.drafting.adaptiveK ? { adaptiveK: true } : {}),
    k: c.k,
    s: c.s,
    frVocab: c.frVocab,
    stopReason: outcome.stopReason,
    seed: c.temperature > 0 ? c.sampling.seed : null,
    stats: outcome.stats,
    backend: backendOf(placement, {
      batchInvariant: c.batchInvariant,
      batchInvariantWhy: c.batchInvariantWhy,
      gpuLayers: c.layers,
      flashAttn: c.flashAttn,
      memoryEstimateBytes: c.memory,
      // a request cancelled before the engine saw it sampled nothing: say where it would have
      sampling: outcome.sampling ?? { path: c.sampling.path === 'backend' ? 'backend' : 'cpu', reason: 'cancelled before sampling' },
    }),
  });
  if (values.json) {
    const rounds = values.rounds
      ? {
          // the service's round mapper, in the CLI's names (tokens for tokenIds, no index or start)
          rounds: outcome.rounds.map((r, i) => {
            const { index, startUs, tokenIds, ...round } = apiRound(r, i + 1);
            return { ...round, tokens: tokenIds };
          }),
        }
      : {};
    io.out(JSON.stringify({ ...result, ...rounds }) + '\n');
  } else {
    const s = result.stats;
    const acceptance =
      c.strategy === 'none' || s.proposed === 0
        ? ''
        : `accepted ${s.accepted} of ${s.proposed} proposed in ${s.rounds} rounds${chainShare(c.drafting, outcome.rounds)}, `;
    io.out('\n');
    io.err(
      `[${result.tokens.length} tokens, stop: ${result.stopReason}, ` +
        `ttft ${s.ttftMs?.toFixed(1) ?? '-'} ms, decode ${s.steadyDecodeTokensPerSecond?.toFixed(1) ?? '-'} tok/s, ${acceptance}` +
        `on ${result.backend.device}]\n`,
    );
    const silent = result.stopReason === 'cancelled' ? null : noProposalsNote(c.strategy, s.proposed, c.drafting.fallbacks);
    if (silent) io.err(`note: ${silent}\n`);
  }
  return result.stopReason === 'cancelled' ? 130 : 0;
}
