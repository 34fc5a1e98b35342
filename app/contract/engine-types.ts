// What the engine reports, as both sides of the contract see it: the sampling options and their
// defaults, token origins, round records, stop reasons, devices and CUDA's status. The engine
// host's own protocol (app/engine/protocol.ts) builds its messages from these.
import { z } from 'zod';

export const FlashAttn = z.enum(['auto', 'on', 'off']);

/** where tokens are sampled: auto (the backend on a GPU, else the CPU), cpu, backend (llama.cpp's backend samplers) */
export const SamplingPath = z.enum(['auto', 'cpu', 'backend']);
export type SamplingPath = z.infer<typeof SamplingPath>;

/** the most top log-probabilities a request may ask for per token (OpenAI's and the engine's limit) */
export const LOGPROBS_MAX = 20;

/** the longest grammar or JSON schema a request may carry (characters) */
export const GRAMMAR_MAX_CHARS = 1_000_000;

export const SamplingOptions = z
  .object({
    temperature: z.number().min(0).max(100).default(0),
    seed: z.number().int().min(0).max(0xffffffff).default(0),
    topK: z.number().int().min(0).default(40),
    topP: z.number().gt(0).max(1).default(0.95),
    minP: z.number().min(0).max(1).default(0.05),
    repeatPenalty: z.number().gt(0).max(100).default(1),
    repeatLastN: z.number().int().min(0).default(64),
    presencePenalty: z.number().min(-100).max(100).default(0),
    frequencyPenalty: z.number().min(-100).max(100).default(0),
    path: SamplingPath.default('auto'),
    /** a GBNF grammar the reply follows (llama.cpp's grammar sampler, root rule `root`) */
    grammar: z.string().min(1).max(GRAMMAR_MAX_CHARS).optional(),
    /** log-probabilities of each emitted token: its own and those of the row's N most likely tokens (0–20) */
    logprobs: z.number().int().min(0).max(LOGPROBS_MAX).optional(),
    /** a JSON schema (as JSON text) the reply follows, turned into a grammar by llama.cpp's converter */
    jsonSchema: z.string().min(1).max(GRAMMAR_MAX_CHARS).optional(),
    /**
     * the grammar waits for a trigger (a tool call's opening, as the chat template's
     * tool-call grammar does): free text until a pattern matches the reply's text or a token
     * is emitted, the grammar from there on
     */
    grammarLazy: z
      .object({
        patterns: z.array(z.string().min(1).max(GRAMMAR_MAX_CHARS)).max(64),
        tokens: z.array(z.number().int().min(0)).max(64),
      })
      .optional(),
    /** tokens the grammar takes before the reply (the template's generation prompt, as llama-server feeds it) */
    grammarPrefill: z.array(z.number().int().min(0)).max(256).optional(),
    /**
     * llama.cpp's reasoning budget (common_reasoning_budget): once the thinking that `start`
     * opens has taken `tokens` tokens, the sampler forces `message` and the first of `ends`.
     * `prefill`: the generation prompt's tokens, which it reads first (a template whose
     * generation prompt opens the thinking starts it counting)
     */
    reasoningBudget: z
      .object({
        tokens: z.number().int().min(0).max(1_000_000),
        start: z.string().min(1).max(256),
        ends: z.array(z.string().min(1).max(256)).min(1).max(8),
        message: z.string().max(10_000).default(''),
        prefill: z.array(z.number().int().min(0)).max(256).default([]),
      })
      .optional(),
  })
  .refine((s) => s.grammar !== undefined || (s.grammarLazy === undefined && s.grammarPrefill === undefined), {
    error: 'grammarLazy and grammarPrefill go with a grammar',
  })
  .refine((s) => s.grammar === undefined || s.jsonSchema === undefined, { error: 'give a grammar or a JSON schema, not both' });
export type SamplingOptions = z.infer<typeof SamplingOptions>;

/** The sampling defaults, the one table of them: every front door and form starts from these. */
export const SAMPLING_DEFAULTS: SamplingOptions = SamplingOptions.parse({});

export const TokenOrigin = z.enum(['target', 'accepted', 'correction', 'bonus']);

/** a token's log-probability in the row it was drawn from, and the row's most likely tokens' (most likely first) */
export const TokenLogprobs = z.object({
  /** the token's own piece (as EmittedToken.piece), so the entry stands alone */
  piece: z.instanceof(Uint8Array),
  logprob: z.number(),
  top: z.array(z.object({ id: z.number().int(), logprob: z.number(), piece: z.instanceof(Uint8Array) })),
});
export type TokenLogprobs = z.infer<typeof TokenLogprobs>;

export const EmittedToken = z.object({
  id: z.number().int(),
  piece: z.instanceof(Uint8Array),
  origin: TokenOrigin,
  /** when the request asked for them (SamplingOptions.logprobs) */
  logprobs: TokenLogprobs.optional(),
});
export type EmittedToken = z.infer<typeof EmittedToken>;

/**
 * Where a round's draft came from, for a drafter that tells (`suffix`): this request (its prompt
 * holds a chat's earlier turns, so they count as the request) or the model's store of earlier replies.
 */
export const DraftSource = z.enum(['request', 'store']);
export type DraftSource = z.infer<typeof DraftSource>;

export const RoundRecord = z.object({
  type: z.literal('round'),
  proposed: z.number().int().min(0),
  accepted: z.number().int().min(0),
  /** the round restored its checkpoint and replayed the accepted prefix */
  replay: z.boolean(),
  /** proposals per round from now on, after a replay */
  clampedTo: z.number().int().nullable(),
  startUs: z.number(),
  endUs: z.number(),
  /** step times: propose (2), verify (3), sample + commit (4, 5) */
  proposeUs: z.number(),
  verifyUs: z.number(),
  commitUs: z.number(),
  /** a chain's round: which member (0-based, in the strategy list's order) drafted it; absent otherwise */
  member: z.number().int().min(0).optional(),
  /** where the draft came from (a drafter that tells: `suffix`); absent otherwise */
  draftSource: DraftSource.optional(),
  /** with draftSource: how many of the proposals the drafter expected accepted (the sum of its odds that each prefix survives) */
  expectedAccepted: z.number().min(0).optional(),
  tokens: z.array(EmittedToken),
});
export type RoundRecord = z.infer<typeof RoundRecord>;

/**
 * Why a reply ended. 'stop' never comes from the engine: the reply reached a stop string (a /v1
 * request's `stop`, or the end-of-turn marker of the ChatML fallback for a model without a chat
 * template) and app/service/request.ts ended it there.
 */
export const StopReason = z.enum(['max-tokens', 'eos', 'cancelled', 'context-full', 'stop']);
export type StopReason = z.infer<typeof StopReason>;

export const NativeGenerateResult = z.object({
  stopReason: StopReason.exclude(['stop']),
  replays: z.number().int().min(0),
  clampedTo: z.number().int().nullable(),
  promptTokens: z.number().int(),
  reusedTokens: z.number().int(),
  prefillUs: z.number(),
  totalUs: z.number(),
  generated: z.number().int(),
  /** proposals not verified because the request's grammar refused them (and the ones after them) */
  grammarCut: z.number().int().min(0),
  /** a prompt with images: the image chunks run through the projector (those not kept from the session's last request); absent without images */
  imagesEncoded: z.number().int().min(0).optional(),
  /** a request with a reasoning budget: the thinking blocks the budget ended (forced their end); absent without one */
  reasoningForced: z.number().int().min(0).optional(),
});
export type NativeGenerateResult = z.infer<typeof NativeGenerateResult>;

/** where a request was sampled, as the engine resolved its path */
export const SamplingUsed = z.object({
  path: z.enum(['cpu', 'backend']),
  /** why "auto" chose the CPU (null when it did not, or the path was asked for) */
  reason: z.string().nullable(),
});
export type SamplingUsed = z.infer<typeof SamplingUsed>;

export const DeviceInfo = z.object({
  name: z.string(),
  description: z.string(),
  type: z.string(),
  /** the ggml backend that registered it: CPU, CUDA, ... */
  backend: z.string(),
  freeBytes: z.number(),
  totalBytes: z.number(),
  /** what its backend was compiled for (the CPU's extensions: AVX2, AVX512, ...); absent for a remote device */
  features: z.array(z.string()).optional(),
  /** buffer types its weights may be moved into at load (repacked or AMX layouts), each with its own kernels */
  extraBufferTypes: z.array(z.string()).optional(),
  /**
   * a GPU-class device that runs on the CPU (a CPU-type Vulkan device such as Mesa's lavapipe):
   * used only when asked for by name of its backend (--device vulkan without a real GPU), never by auto
   */
  onCpu: z.boolean().optional(),
  /**
   * a CUDA device's compute capability as ggml's kernel choices see it ("8.6"; the cuda-src
   * flavour's patch reports it): which kernels a one-row decode takes, and so the batch-invariance claim
   */
  computeCapability: z
    .string()
    .regex(/^\d+\.\d$/)
    .optional(),
});
export type DeviceInfo = z.infer<typeof DeviceInfo>;

/** One shared library the CUDA backend needs, and whether the system loader finds it. */
export const RuntimeLibrary = z.object({
  name: z.string(),
  /** driver, runtime, cublas */
  role: z.string(),
  /** the loader's message; null when it loads */
  error: z.string().nullable(),
});
export type RuntimeLibrary = z.infer<typeof RuntimeLibrary>;

/** What the engine's flavour can do with CUDA, and why not when it cannot. */
export const CudaStatus = z.object({
  /** CUDA devices ggml registered */
  devices: z.number().int().min(0),
  /** why there is no usable CUDA device (null when there is one) */
  reason: z.string().nullable(),
  /** the backend library's own load error (null when it loads) */
  backendError: z.string().nullable(),
  libraries: z.array(RuntimeLibrary),
});
export type CudaStatus = z.infer<typeof CudaStatus>;
