// power generate: one prompt through the engine, text streamed to stdout or one JSON object.
// A thin front door: the load rules (device, memory, strategy, draft) live in main/service/runtime.
import { randomInt } from 'node:crypto';
import { availableParallelism } from 'node:os';

import { PowerError } from '../../app/api/errors.js';
import type { SamplingOptions } from '../../app/engine-protocol.js';
import { GenerationResult } from '../../app/generation-result.js';
import { DEFAULT_K, FR_UNSUPPORTED, K_MAX } from '../../app/profile.js';
import { STRATEGIES, type Strategy } from '../../app/strategies.js';
import { DEVICE_REQUESTS, describeDevice } from '../engine/device-select.js';
import { runGeneration } from '../engine/generation.js';
import { buildPrompt, type PromptSource } from '../service/runtime/prompt.js';
import { asPowerError, createSession, openTarget } from '../service/runtime/target.js';
import { choice, int, num, parseFlags, str, tokenList } from './args.js';
import { UsageError } from './errors.js';
import { readProfile } from './profile.js';

export const GENERATE_USAGE = `power generate --model <model.gguf> (--prompt TEXT | --prompt-file PATH | --prompt-tokens 1,2,3)
  [--raw] [--max-tokens N] [--temperature T] [--seed N] [--top-k N] [--top-p P] [--min-p P]
  [--repeat-penalty R] [--ctx N] [--threads N] [--device auto|cuda|cpu] [--gpu-layers N|all]
  [--flash-attn on|off|auto]
  [--strategy ${STRATEGIES.join('|')}] [--draft <draft.gguf>] [--k N] [--s N]
  [--profile FILE.toml] [--json [--rounds]]
  Generates a reply. Text streams to stdout; --json prints one object with the tokens, their
  digest, the stop reason, the evidence and what ran it. --device auto (default) takes a CUDA
  device when one loads, else the CPU; --device cuda fails instead of running on the CPU.
  Ctrl-C cancels and keeps what was generated.`;

const FLAGS = {
  model: { type: 'string' },
  prompt: { type: 'string' },
  'prompt-file': { type: 'string' },
  'prompt-tokens': { type: 'string' },
  raw: { type: 'boolean' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  'min-p': { type: 'string' },
  'repeat-penalty': { type: 'string' },
  ctx: { type: 'string' },
  threads: { type: 'string' },
  device: { type: 'string' },
  'gpu-layers': { type: 'string' },
  'flash-attn': { type: 'string' },
  strategy: { type: 'string' },
  draft: { type: 'string' },
  k: { type: 'string' },
  s: { type: 'string' },
  profile: { type: 'string' },
  'fr-vocab': { type: 'string' },
  json: { type: 'boolean' },
  rounds: { type: 'boolean' },
  verbose: { type: 'boolean' },
} as const;

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /** registers a cancel handler (Ctrl-C); returns the unregister function */
  onInterrupt: (handler: () => void) => () => void;
}

function promptSource(values: Record<string, string | boolean | undefined>): PromptSource {
  const given = [
    str(values, 'prompt') !== undefined ? 'prompt' : null,
    str(values, 'prompt-file') !== undefined ? 'prompt-file' : null,
    str(values, 'prompt-tokens') !== undefined ? 'prompt-tokens' : null,
  ].filter((x) => x !== null);
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

function gpuLayers(values: Record<string, string | boolean | undefined>): number {
  const raw = str(values, 'gpu-layers');
  if (raw === undefined || raw === 'all') return -1;
  return int(values, 'gpu-layers', { min: 0, max: 100000 })!;
}

export async function generateCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const modelPath = str(values, 'model');
  if (!modelPath) throw new UsageError('power generate needs --model <model.gguf>');
  const source = promptSource(values);
  const profilePath = str(values, 'profile');
  const profile = profilePath ? await readProfile(profilePath) : undefined;
  // flags override the profile
  const strategy: Strategy = choice(values, 'strategy', STRATEGIES) ?? profile?.spec_mode ?? 'none';
  if (str(values, 'fr-vocab') !== undefined || profile?.spec_mtp_fr_vocab_size !== undefined) {
    throw new UsageError(FR_UNSUPPORTED);
  }
  const k = int(values, 'k', { min: 1, max: K_MAX }) ?? profile?.spec_draft_max ?? DEFAULT_K;
  const s = int(values, 's', { min: 0, max: K_MAX }) ?? profile?.spec_mtp_recurrent_snapshots ?? k;
  if (s > k) throw new UsageError(`--s must be from 0 to K (${k}) (got ${s})`);
  const maxTokens = int(values, 'max-tokens', { min: 1, max: 1_000_000 }) ?? 256;
  const temperature = num(values, 'temperature', { min: 0, max: 100 }) ?? 0;
  const seedFlag = int(values, 'seed', { min: 0, max: 0xffffffff });
  const sampling: SamplingOptions = {
    temperature,
    seed: seedFlag ?? (temperature > 0 ? randomInt(0, 0xffffffff) : 0),
    topK: int(values, 'top-k', { min: 0, max: 1_000_000 }) ?? 40,
    topP: num(values, 'top-p', { min: 0, max: 1, minExclusive: true }) ?? 0.95,
    minP: num(values, 'min-p', { min: 0, max: 1 }) ?? 0.05,
    repeatPenalty: num(values, 'repeat-penalty', { min: 0, max: 100, minExclusive: true }) ?? 1,
    repeatLastN: 64,
    presencePenalty: 0,
    frequencyPenalty: 0,
  };
  const ctxFlag = int(values, 'ctx', { min: 16, max: 16_777_216 });
  const threads = int(values, 'threads', { min: 1, max: 1024 }) ?? availableParallelism();
  const flashFlag = choice(values, 'flash-attn', ['on', 'off', 'auto'] as const);
  const device = choice(values, 'device', DEVICE_REQUESTS) ?? 'auto';
  const layers = gpuLayers(values);
  const draftPath = str(values, 'draft');
  const speculative = strategy !== 'none';

  const target = await openTarget({
    path: modelPath,
    device,
    gpuLayers: layers,
    strategy,
    ...(draftPath ? { draftPath } : {}),
    s,
    ...(ctxFlag !== undefined ? { contextSize: ctxFlag } : {}),
    ...(flashFlag ? { flashAttn: flashFlag } : {}),
    verbose: values.verbose === true,
  });
  const { engine, modelId, info, placement } = target;
  try {
    const prompt = await buildPrompt(engine, modelId, info, source, { raw: values.raw === true }, (l) => io.err(`warning: ${l}\n`));
    if (prompt.length + 1 > target.contextSize) {
      throw new UsageError(
        `the prompt is ${prompt.length} tokens but the context holds ${target.contextSize} (raise --ctx or shorten the prompt)`,
      );
    }
    const session = await createSession(target, { strategy, k, s, threads });

    if (!values.json && placement.note) io.err(`[${placement.note}]\n`);
    const stopInterrupt = io.onInterrupt(() => void engine.call('cancel', { sessionId: session.sessionId }).catch(() => {}));
    let outcome;
    try {
      outcome = await runGeneration(
        engine,
        { sessionId: session.sessionId, prompt, maxTokens, sampling },
        values.json ? undefined : io.out,
      );
    } finally {
      stopInterrupt();
    }

    const result = GenerationResult.parse({
      tokens: outcome.tokens,
      text: outcome.text,
      digest: outcome.digest,
      strategy,
      k: speculative ? session.k : null,
      s: speculative ? session.s : null,
      stopReason: outcome.stopReason,
      seed: temperature > 0 ? sampling.seed : null,
      stats: outcome.stats,
      backend: {
        device: describeDevice(placement.device),
        kind: placement.kind,
        flavour: placement.flavour,
        llamaCppRelease: placement.llamaCppRelease,
        gpuLayers: placement.kind === 'cpu' ? null : layers < 0 ? 'all' : layers,
        flashAttn: session.flashAttn,
        sampling: 'cpu',
        choice: placement.note,
        memoryEstimateBytes: target.memory?.estimate.total ?? null,
      },
    });
    if (values.json) {
      const rounds = values.rounds
        ? {
            rounds: outcome.rounds.map((r) => ({
              proposed: r.proposed,
              accepted: r.accepted,
              replay: r.replay,
              clampedTo: r.clampedTo,
              tokens: r.tokens.map((t) => t.id),
              origins: r.tokens.map((t) => t.origin),
              endUs: r.endUs,
              proposeUs: r.proposeUs,
              verifyUs: r.verifyUs,
              commitUs: r.commitUs,
            })),
          }
        : {};
      io.out(JSON.stringify({ ...result, ...rounds }) + '\n');
    } else {
      const s = result.stats;
      io.out('\n');
      io.err(
        `[${result.tokens.length} tokens, stop: ${result.stopReason}, ` +
          `ttft ${s.ttftMs?.toFixed(1) ?? '-'} ms, decode ${s.decodeTokensPerSecondMedian?.toFixed(1) ?? '-'} tok/s, ` +
          `on ${result.backend.device}]\n`,
      );
    }
    return result.stopReason === 'cancelled' ? 130 : 0;
  } catch (error) {
    const mapped = asPowerError(error);
    if (mapped instanceof PowerError) throw new UsageError(mapped.message);
    throw error;
  } finally {
    await engine.close();
  }
}
