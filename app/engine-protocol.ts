// The engine host protocol: every message between the main process and the engine host (the
// process that loads the native addon) is described once here and validated at both ends.
import { z } from 'zod';

import { STRATEGIES } from './strategies.js';

export const FlashAttn = z.enum(['auto', 'on', 'off']);

export const NativeModelInfo = z.object({
  architecture: z.string(),
  name: z.string(),
  description: z.string(),
  parameters: z.number().nonnegative(),
  sizeBytes: z.number().nonnegative(),
  fileType: z.string(),
  contextLength: z.number().int(),
  layers: z.number().int(),
  nextnLayers: z.number().int(),
  embeddingLength: z.number().int(),
  heads: z.number().int(),
  headsKv: z.number().int(),
  recurrent: z.boolean(),
  hybrid: z.boolean(),
  vocabType: z.string(),
  vocabSize: z.number().int(),
  bos: z.number().int(),
  eos: z.number().int(),
  eot: z.number().int(),
  addBos: z.boolean(),
  chatTemplate: z.string().nullable(),
});
export type NativeModelInfo = z.infer<typeof NativeModelInfo>;

export const SamplingOptions = z.object({
  temperature: z.number().min(0).max(100).default(0),
  seed: z.number().int().min(0).max(0xffffffff).default(0),
  topK: z.number().int().min(0).default(40),
  topP: z.number().gt(0).max(1).default(0.95),
  minP: z.number().min(0).max(1).default(0.05),
  repeatPenalty: z.number().gt(0).max(100).default(1),
  repeatLastN: z.number().int().min(0).default(64),
  presencePenalty: z.number().min(-100).max(100).default(0),
  frequencyPenalty: z.number().min(-100).max(100).default(0),
});
export type SamplingOptions = z.infer<typeof SamplingOptions>;

export const TokenOrigin = z.enum(['target', 'accepted', 'correction', 'bonus']);

export const EmittedToken = z.object({ id: z.number().int(), piece: z.instanceof(Uint8Array), origin: TokenOrigin });
export type EmittedToken = z.infer<typeof EmittedToken>;

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
  tokens: z.array(EmittedToken),
});
export type RoundRecord = z.infer<typeof RoundRecord>;

export const StopReason = z.enum(['max-tokens', 'eos', 'cancelled', 'context-full']);
export type StopReason = z.infer<typeof StopReason>;

export const NativeGenerateResult = z.object({
  stopReason: StopReason,
  replays: z.number().int().min(0),
  clampedTo: z.number().int().nullable(),
  promptTokens: z.number().int(),
  reusedTokens: z.number().int(),
  prefillUs: z.number(),
  totalUs: z.number(),
  generated: z.number().int(),
});
export type NativeGenerateResult = z.infer<typeof NativeGenerateResult>;

export const DeviceInfo = z.object({
  name: z.string(),
  description: z.string(),
  type: z.string(),
  /** the ggml backend that registered it: CPU, CUDA, ... */
  backend: z.string(),
  freeBytes: z.number(),
  totalBytes: z.number(),
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

export const LiveHandles = z.object({ models: z.number(), contexts: z.number(), jobs: z.number() });

const Id = z.string().min(1);

/** Token ids as they cross process boundaries. */
export type Tokens = Int32Array<ArrayBuffer>;

/** One description per method: what goes in, what comes back. */
export const engineMethods = {
  hello: {
    params: z.object({}),
    result: z.object({
      llamaCppRelease: z.string(),
      flavour: z.string(),
      devices: z.array(DeviceInfo),
      /** null when the flavour has no CUDA backend at all */
      cuda: CudaStatus.nullable(),
    }),
  },
  loadModel: {
    params: z.object({
      path: z.string().min(1),
      /** progress events carry this id */
      requestId: Id.optional(),
      gpuLayers: z.number().int().min(-1).default(-1),
      loadMtp: z.boolean().default(false),
      /** devices by name (CUDA0); [] keeps everything on the CPU; absent: llama.cpp's choice */
      devices: z.array(z.string()).optional(),
    }),
    result: z.object({ modelId: Id, info: NativeModelInfo }),
  },
  tokenize: {
    params: z.object({ modelId: Id, text: z.string(), addSpecial: z.boolean(), parseSpecial: z.boolean() }),
    result: z.instanceof(Int32Array),
  },
  detokenize: {
    params: z.object({ modelId: Id, tokens: z.instanceof(Int32Array), renderSpecial: z.boolean() }),
    result: z.string(),
  },
  createSession: {
    params: z.object({
      modelId: Id,
      strategy: z.enum(STRATEGIES).default('none'),
      /** spec_draft_max */
      k: z.number().int().min(0).max(16).default(0),
      /** spec_mtp_recurrent_snapshots */
      s: z.number().int().min(0).max(16).default(0),
      draftModelId: Id.optional(),
      contextSize: z.number().int().min(16),
      batchSize: z.number().int().min(1).default(512),
      threads: z.number().int().min(0).default(0),
      flashAttn: FlashAttn.default('auto'),
    }),
    result: z.object({
      sessionId: Id,
      contextSize: z.number().int(),
      k: z.number().int(),
      s: z.number().int().nullable(),
      recurrent: z.boolean(),
      /** what llama.cpp settled on (it resolves "auto" itself) */
      flashAttn: z.enum(['on', 'off', 'unknown']),
    }),
  },
  generate: {
    params: z.object({
      sessionId: Id,
      requestId: Id,
      prompt: z.instanceof(Int32Array),
      maxTokens: z.number().int().min(1),
      sampling: SamplingOptions,
    }),
    result: NativeGenerateResult,
  },
  cancel: { params: z.object({ sessionId: Id }), result: z.null() },
  /**
   * `power audit`: the session's next requests keep the logits row the token at `position` is
   * sampled from; with otherRow, also what the sampler in that same state draws from it
   */
  captureRow: {
    params: z.object({ sessionId: Id, position: z.number().int().min(0), otherRow: z.instanceof(Float32Array).optional() }),
    result: z.null(),
  },
  /** the row captureRow asked for (null: that position was not sampled) */
  capturedRow: {
    params: z.object({ sessionId: Id }),
    result: z
      .object({ row: z.instanceof(Float32Array), rowToken: z.number().int(), otherToken: z.number().int().nullable() })
      .nullable(),
  },
  /** test hook: raise the runner-up of the row sampled at `position` above its top (hidden: capture the unperturbed row) */
  perturbRow: {
    params: z.object({ sessionId: Id, position: z.number().int().min(0), hidden: z.boolean().default(false) }),
    result: z.null(),
  },
  /** test hook (engine started with POWER_TEST_HOOKS=1): fail the verify of that round of the next request */
  injectFailure: { params: z.object({ sessionId: Id, round: z.number().int().min(1) }), result: z.null() },
  /** test hook: the step-4 sampling rule vs plain autoregressive sampling on the same logit rows */
  samplingOrderCheck: {
    params: z.object({
      modelId: Id,
      rows: z.instanceof(Float32Array),
      proposals: z.instanceof(Int32Array),
      sampling: SamplingOptions,
      extraDraws: z.number().int().min(0),
    }),
    result: z.object({
      spec: z.array(z.number().int()),
      accepted: z.number().int(),
      eog: z.boolean(),
      ar: z.array(z.number().int()),
      probeSpec: z.number().int(),
      probeAr: z.number().int(),
    }),
  },
  disposeSession: { params: z.object({ sessionId: Id }), result: z.null() },
  disposeModel: { params: z.object({ modelId: Id }), result: z.null() },
  liveHandles: { params: z.object({}), result: LiveHandles },
} as const;

export type EngineMethods = typeof engineMethods;
export type EngineMethod = keyof EngineMethods;
export type EngineParams<M extends EngineMethod> = z.input<EngineMethods[M]['params']>;
export type EngineResult<M extends EngineMethod> = z.infer<EngineMethods[M]['result']>;

export const EngineRequest = z.object({
  kind: z.literal('request'),
  id: z.number().int(),
  method: z.enum(Object.keys(engineMethods) as [EngineMethod, ...EngineMethod[]]),
  params: z.unknown(),
});
export type EngineRequest = z.infer<typeof EngineRequest>;

export const EngineResponse = z.discriminatedUnion('ok', [
  z.object({ kind: z.literal('response'), id: z.number().int(), ok: z.literal(true), value: z.unknown() }),
  z.object({ kind: z.literal('response'), id: z.number().int(), ok: z.literal(false), error: z.string() }),
]);
export type EngineResponse = z.infer<typeof EngineResponse>;

export const EngineEvent = z.discriminatedUnion('event', [
  z.object({ kind: z.literal('event'), event: z.literal('round'), requestId: Id, round: RoundRecord }),
  z.object({ kind: z.literal('event'), event: z.literal('progress'), requestId: Id, progress: z.number() }),
]);
export type EngineEvent = z.infer<typeof EngineEvent>;

export const EngineMessage = z.union([EngineResponse, EngineEvent]);
