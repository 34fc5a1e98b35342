// The engine host's contract: its methods and events, described once here as a concern
// (`engineApi`) and carried by the channel layer (app/contract/channel): app/engine-host/host.ts serves it
// over its link to the parent, EngineClient (app/engine/client.ts) connects to it. The client
// checks the params it sends and everything the host answers (ENGINE_CHECKS).
import { z } from 'zod';

import { concern } from '../contract/api/describe.js';
import { ModelFacts } from '../contract/api/models.js';
import { CHECKED_BY_CLIENT } from '../contract/channel/checks.js';

import type { EmittedToken, TokenLogprobs } from '../contract/engine-types.js';
import {
  CudaStatus,
  DeviceInfo,
  FlashAttn,
  NativeGenerateResult,
  SamplingOptions,
  SamplingPath,
  SamplingUsed,
  TokenOrigin,
  DraftSource,
  type RoundRecord,
} from '../contract/engine-types.js';
import { K_MAX } from '../contract/profile.js';
import { STRATEGIES } from '../contract/strategies.js';

export const SplitMode = z.enum(['layer', 'row', 'none']);
export type SplitMode = z.infer<typeof SplitMode>;

/** What llama.cpp's chat template application gives for a request with tools (native/src/model_chat.cpp). */
/** llama-server's reasoning_format values */
export const ReasoningFormat = z.enum(['none', 'deepseek', 'auto']);
export type ReasoningFormat = z.infer<typeof ReasoningFormat>;

export const ChatTemplateResult = z.object({
  prompt: z.string(),
  /** common_chat_format, as the parser takes it back */
  format: z.number().int().min(0),
  formatName: z.string(),
  /** the tool-call grammar ('' when none) */
  grammar: z.string(),
  grammarLazy: z.boolean(),
  triggerPatterns: z.array(z.string()),
  triggerTokens: z.array(z.number().int().min(0)),
  /** the generation prompt's tokens the grammar takes first (a grammar that is not lazy) */
  grammarPrefill: z.array(z.number().int().min(0)),
  generationPrompt: z.string(),
  /** the template's reply parser, serialized */
  parser: z.string(),
  preservedTokens: z.array(z.string()),
  additionalStops: z.array(z.string()),
  /** whether the template renders tool calls at all (llama.cpp's ChatML fallback does not) */
  templateToolCalls: z.boolean(),
  /** the template reads enable_thinking (common_chat_templates_support_enable_thinking) */
  supportsThinking: z.boolean(),
  /** the thinking's tags as llama.cpp found them for this template ('' and [] when it has none) */
  thinkingStartTag: z.string(),
  thinkingEndTags: z.array(z.string()),
});
export type ChatTemplateResult = z.infer<typeof ChatTemplateResult>;

export const ParsedChatReply = z.object({
  content: z.string(),
  reasoningContent: z.string(),
  toolCalls: z.array(z.object({ name: z.string(), arguments: z.string(), id: z.string() })),
  /** the reply's text as parsed (the template's preserved special tokens rendered) */
  text: z.string(),
});
export type ParsedChatReply = z.infer<typeof ParsedChatReply>;

/** What the engine reads of a loaded model: the facts `power info` shows, with what tokenizing and sizing it take. */
export const NativeModelInfo = ModelFacts.extend({
  description: z.string(),
  sizeBytes: z.number().nonnegative(),
  embeddingLength: z.number().int(),
  heads: z.number().int(),
  headsKv: z.number().int(),
  bos: z.number().int(),
  eos: z.number().int(),
  eot: z.number().int(),
  addBos: z.boolean(),
  /** the template itself (null: the GGUF has none) */
  chatTemplate: z.string().nullable(),
});
export type NativeModelInfo = z.infer<typeof NativeModelInfo>;

const ORIGINS = TokenOrigin.options;
/** a round's draft source by its code in RoundBatch.numbers (native/src/proposer.h, draft_evidence) */
const DRAFT_SOURCES = DraftSource.options;
/**
 * A prompt with images: the text with one MEDIA_MARKER per image,
 * tokenized by llama.cpp's multimodal library with special tokens parsed (addSpecial: a BOS
 * first where the model wants one), and the images' encoded files (PNG, JPEG, BMP, ...).
 */
/** where an image goes in a prompt's text: mtmd's default marker (native/src/media.h) */
export const MEDIA_MARKER = '<__media__>';

export const MediaPrompt = z.object({
  text: z.string().min(1),
  images: z.array(z.instanceof(Uint8Array)).min(1),
  addSpecial: z.boolean(),
});
export type MediaPrompt = z.infer<typeof MediaPrompt>;

/** fields per round in RoundBatch.numbers, in this order (native/src/generate.h, round_batch) */
const BATCH_FIELDS = [
  'proposed',
  'accepted',
  'replay',
  'clampedTo',
  'startUs',
  'endUs',
  'proposeUs',
  'verifyUs',
  'commitUs',
  'tokens',
  'member',
  'source',
  'expected',
] as const;
const NF = BATCH_FIELDS.length;

/**
 * Rounds as the engine streams them: coalesced batches in the native layer's flat layout (one
 * IPC message and no per-token objects for several rounds). `expandRoundBatch` turns a batch
 * back into round records, every one of them, in order.
 */
export const RoundBatch = z
  .object({
    rounds: z.number().int().min(0),
    /** per round: proposed, accepted, replay (0/1), clampedTo (-1: none), startUs, endUs, proposeUs, verifyUs, commitUs, tokens, member (-1: none), source (0 request, 1 store; -1: none), expected (-1: none) */
    numbers: z.instanceof(Float64Array),
    ids: z.instanceof(Int32Array),
    /** per token: index into TokenOrigin (target, accepted, correction, bonus) */
    origins: z.instanceof(Uint8Array),
    /** every token's piece, concatenated */
    bytes: z.instanceof(Uint8Array),
    /** per token: where its piece ends in `bytes` */
    pieceEnds: z.instanceof(Uint32Array),
    /** when the request asked for log-probabilities: per token its own */
    logprobs: z.instanceof(Float32Array).optional(),
    /** the same number of entries per token: the row's most likely tokens, their log-probabilities and pieces */
    topIds: z.instanceof(Int32Array).optional(),
    topLogprobs: z.instanceof(Float32Array).optional(),
    topBytes: z.instanceof(Uint8Array).optional(),
    topPieceEnds: z.instanceof(Uint32Array).optional(),
  })
  .superRefine((b, ctx) => {
    const bad = (message: string) => ctx.addIssue({ code: 'custom', message });
    const n = b.ids.length;
    if (b.numbers.length !== b.rounds * NF) return bad(`numbers: ${b.numbers.length} values for ${b.rounds} rounds`);
    if (b.origins.length !== n || b.pieceEnds.length !== n) return bad('origins and pieceEnds must have one entry per token');
    let tokens = 0;
    for (let r = 0; r < b.rounds; r++) {
      const row = b.numbers.subarray(r * NF, (r + 1) * NF);
      for (const i of [0, 1, 9]) if (!Number.isInteger(row[i]) || row[i]! < 0) return bad(`round ${r}: ${BATCH_FIELDS[i]} must be a count`);
      if (!Number.isInteger(row[3]) || row[3]! < -1) return bad(`round ${r}: bad clamp`);
      if (!Number.isInteger(row[10]) || row[10]! < -1) return bad(`round ${r}: bad member`);
      if (row[11] !== -1 && row[11] !== 0 && row[11] !== 1) return bad(`round ${r}: bad draft source`);
      if (!Number.isFinite(row[12]) || (row[12] !== -1 && !(row[12]! >= 0 && row[12]! <= row[0]!)))
        return bad(`round ${r}: bad expected count`);
      tokens += row[9]!;
    }
    if (tokens !== n) return bad(`rounds name ${tokens} tokens, the batch has ${n}`);
    let end = 0;
    for (let i = 0; i < n; i++) {
      if (b.origins[i]! >= ORIGINS.length) return bad(`token ${i}: unknown origin ${b.origins[i]}`);
      if (b.pieceEnds[i]! < end || b.pieceEnds[i]! > b.bytes.length) return bad(`token ${i}: piece out of range`);
      end = b.pieceEnds[i]!;
    }
    if (b.logprobs === undefined) return;
    const top = b.topIds?.length ?? -1;
    if (b.logprobs.length !== n || !b.topLogprobs || !b.topBytes || !b.topPieceEnds || n === 0 || top % n !== 0)
      return bad('logprobs: one per token, and the same number of top entries per token');
    if (b.topLogprobs.length !== top || b.topPieceEnds.length !== top) return bad('topLogprobs and topPieceEnds: one per top entry');
    end = 0;
    for (let i = 0; i < top; i++) {
      if (b.topPieceEnds[i]! < end || b.topPieceEnds[i]! > b.topBytes.length) return bad(`top entry ${i}: piece out of range`);
      end = b.topPieceEnds[i]!;
    }
  });
export type RoundBatch = z.infer<typeof RoundBatch>;

/** Token `t`'s log-probabilities in a validated batch that carries them. */
function tokenLogprobs(b: RoundBatch, t: number): TokenLogprobs {
  const n = b.topIds!.length / b.ids.length;
  const top: TokenLogprobs['top'] = [];
  for (let i = t * n; i < (t + 1) * n; i++) {
    const start = i === 0 ? 0 : b.topPieceEnds![i - 1]!;
    top.push({ id: b.topIds![i]!, logprob: b.topLogprobs![i]!, piece: b.topBytes!.subarray(start, b.topPieceEnds![i]!) });
  }
  const start = t === 0 ? 0 : b.pieceEnds[t - 1]!;
  return { piece: b.bytes.subarray(start, b.pieceEnds[t]!), logprob: b.logprobs![t]!, top };
}

/** The round records of a (validated) batch, in order; pieces are views into `bytes`. */
export function expandRoundBatch(b: RoundBatch): RoundRecord[] {
  const out: RoundRecord[] = [];
  let t = 0;
  for (let r = 0; r < b.rounds; r++) {
    const x = b.numbers.subarray(r * NF, (r + 1) * NF);
    const tokens: EmittedToken[] = [];
    for (const last = t + x[9]!; t < last; t++) {
      const start = t === 0 ? 0 : b.pieceEnds[t - 1]!;
      const token: EmittedToken = { id: b.ids[t]!, piece: b.bytes.subarray(start, b.pieceEnds[t]!), origin: ORIGINS[b.origins[t]!]! };
      if (b.logprobs) token.logprobs = tokenLogprobs(b, t);
      tokens.push(token);
    }
    out.push({
      type: 'round',
      proposed: x[0]!,
      accepted: x[1]!,
      replay: x[2] === 1,
      clampedTo: x[3]! >= 0 ? x[3]! : null,
      startUs: x[4]!,
      endUs: x[5]!,
      proposeUs: x[6]!,
      verifyUs: x[7]!,
      commitUs: x[8]!,
      // only a chain's rounds name their member: a one-strategy round's record is as it was
      ...(x[10]! >= 0 ? { member: x[10]! } : {}),
      // only a drafter that tells where its draft came from (`suffix`) names it
      ...(x[11]! >= 0 ? { draftSource: DRAFT_SOURCES[x[11]!]!, expectedAccepted: x[12]! } : {}),
      tokens,
    });
  }
  return out;
}

export const LiveHandles = z.object({ models: z.number(), contexts: z.number(), jobs: z.number(), projectors: z.number() });
/** one attention cache of a session's target: its cells, those in use, sequence 0's positions (-1: none) */
export const CacheCells = z.object({ size: z.number().int(), used: z.number().int(), posMin: z.number().int(), posMax: z.number().int() });

const Id = z.string().min(1);

/** Token ids as they cross process boundaries. */
export type Tokens = Int32Array<ArrayBuffer>;

/** One description per method: what goes in, what comes back. */
/** the largest store of earlier replies a session may ask for (native/src/session.cpp; about 200 bytes a token) */
export const SUFFIX_STORE_TOKENS_MAX = 1 << 22;

export const engineMethods = {
  hello: {
    input: z.object({}),
    output: z.object({
      llamaCppRelease: z.string(),
      flavour: z.string(),
      devices: z.array(DeviceInfo),
      /** null when the flavour has no CUDA backend at all */
      cuda: CudaStatus.nullable(),
      /** whether this flavour's llama.cpp has the RPC backend (addRpcServers, rpcServe) */
      rpc: z.boolean().optional(),
    }),
  },
  /**
   * Adds remote machines' devices (`power rpc` or llama.cpp's rpc-server at host:port, probed by
   * the caller first: app/engine/rpc.ts) to this engine's devices, named RPC0, RPC1, ... in the
   * order given; loadModel can then name them in `devices`
   */
  addRpcServers: {
    input: z.object({ endpoints: z.array(z.string().min(3).max(300)).min(1).max(16) }),
    output: z.array(z.object({ endpoint: z.string(), devices: z.array(DeviceInfo) })),
  },
  /**
   * Serves this machine's devices to other machines at host:port (llama.cpp's RPC server, no
   * authentication); resolves once it listens, and the engine host serves until it ends. Port 0:
   * a free one (the result says which). devices: names ([]: every GPU, else the CPU)
   */
  rpcServe: {
    input: z.object({
      host: z.string().min(1),
      port: z.number().int().min(0).max(65535),
      devices: z.array(z.string()).default([]),
      /** CPU threads of a served CPU device; 0: the engine's default */
      threads: z.number().int().min(0).max(1024).default(0),
    }),
    output: z.object({ endpoint: z.string(), devices: z.array(DeviceInfo) }),
  },
  /**
   * `power quantize`: llama.cpp's quantizer writes `output` from `input` (app/models/quant-recipes.ts
   * makes the plan); the caller writes to a temporary name and renames it
   */
  quantize: {
    input: z.object({
      input: z.string().min(1),
      output: z.string().min(1),
      /** llama_ftype: the base type and llama.cpp's mix */
      ftype: z.number().int().min(0).max(1023),
      /** the tensors no pattern names take the base type */
      pure: z.boolean().default(false),
      /** per-tensor types: an ECMAScript regex searched in the tensor's name, the first match wins */
      overrides: z.array(z.object({ pattern: z.string().min(1), type: z.string().min(1) })).default([]),
      /** 0: every core */
      threads: z.number().int().min(0).max(1024).default(0),
      /** quantize tensors that are already quantized (llama.cpp's --allow-requantize): their rounding error adds to the new type's */
      allowRequantize: z.boolean().default(false),
    }),
    output: z.null(),
  },
  loadModel: {
    input: z.object({
      path: z.string().min(1),
      /** progress events carry this id */
      requestId: Id.optional(),
      gpuLayers: z.number().int().min(-1).default(-1),
      loadMtp: z.boolean().default(false),
      /** devices by name (CUDA0, RPC0); [] keeps everything on the CPU; absent: llama.cpp's choice */
      devices: z.array(z.string()).optional(),
      /** llama.cpp's --split-mode over `devices` (absent: layer) */
      splitMode: SplitMode.optional(),
      /** llama.cpp's --main-gpu: an index into `devices` (split mode none: the one device; row: KV and intermediate results) */
      mainGpu: z.number().int().min(0).max(15).optional(),
      /** llama.cpp's --tensor-split: proportions per entry of `devices` (absent: by free memory) */
      tensorSplit: z.array(z.number().nonnegative().finite()).max(16).optional(),
      /** llama.cpp's --cpu-moe: every expert tensor (blk.N.ffn_(up|down|gate)_exps) in host memory */
      cpuMoe: z.boolean().optional(),
      /** llama.cpp's --n-cpu-moe N: the expert tensors of blocks 0..N-1 in host memory */
      nCpuMoe: z.number().int().min(0).max(100000).optional(),
    }),
    output: z.object({ modelId: Id, info: NativeModelInfo }),
  },
  tokenize: {
    input: z.object({ modelId: Id, text: z.string(), addSpecial: z.boolean(), parseSpecial: z.boolean() }),
    output: z.instanceof(Int32Array),
  },
  detokenize: {
    input: z.object({ modelId: Id, tokens: z.instanceof(Int32Array), renderSpecial: z.boolean() }),
    output: z.string(),
  },
  /** the chat prompt with tools as llama-server builds it (common_chat_templates_apply) and what its reply needs */
  applyChat: {
    input: z.object({
      modelId: Id,
      /** OpenAI's messages (tool results and assistant tool calls included), as llama-server reads them */
      messages: z.array(z.unknown()).min(1),
      tools: z.array(z.unknown()),
      toolChoice: z.enum(['auto', 'none', 'required']),
      parallelToolCalls: z.boolean().optional(),
      /** the template's enable_thinking (absent: true, as llama.cpp renders templates) */
      enableThinking: z.boolean().optional(),
      /** more variables for the template, as llama-server's chat_template_kwargs */
      chatTemplateKwargs: z.record(z.string(), z.unknown()).optional(),
      /** how the reply's reasoning is told apart (llama-server's reasoning_format; absent: auto) */
      reasoningFormat: ReasoningFormat.optional(),
    }),
    output: ChatTemplateResult,
  },
  /** a reply's tokens read with the template's parser (common_chat_parse): its text and tool calls */
  parseChat: {
    input: z.object({
      modelId: Id,
      tokens: z.instanceof(Int32Array),
      format: z.number().int().min(0),
      parser: z.string(),
      generationPrompt: z.string(),
      preservedTokens: z.array(z.string()),
      /** the request's stop strings: the text ends before the earliest */
      stops: z.array(z.string()),
      /** the reply so far (a call may be unfinished) */
      partial: z.boolean(),
      /** none: the reasoning stays in content; deepseek and auto: it goes to reasoningContent (absent: auto) */
      reasoningFormat: ReasoningFormat.optional(),
    }),
    output: ParsedChatReply,
  },
  createSession: {
    input: z.object({
      modelId: Id,
      strategy: z.enum(STRATEGIES).default('none'),
      /** a chain (llama.cpp's --spec-type list): the strategies asked after `strategy` when it drafts nothing, in order */
      fallbacks: z.array(z.enum(STRATEGIES)).default([]),
      /** p-min: greedy drafters stop under this top-1 probability (0: off) */
      pMin: z.number().min(0).max(1).default(0),
      /** adaptive K: shorter drafts after rejections, longer after full acceptances, up to k */
      adaptiveK: z.boolean().default(false),
      /** spec_draft_max */
      k: z.number().int().min(0).max(K_MAX).default(0),
      /** spec_mtp_recurrent_snapshots */
      s: z.number().int().min(0).max(K_MAX).default(0),
      draftModelId: Id.optional(),
      contextSize: z.number().int().min(16),
      batchSize: z.number().int().min(1).default(512),
      /** CPU threads; 0: the engine's default (physical cores; docs/cli.md "Threads") */
      threads: z.number().int().min(0).default(0),
      /** polling level of the session's threadpool (0-100); absent: the engine's default (bench/diagnostics) */
      threadpoolPoll: z.number().int().min(0).max(100).optional(),
      flashAttn: FlashAttn.default('auto'),
      /** how the proposer drafts: auto (the backend where the target is on a GPU), cpu, backend */
      proposerSampling: SamplingPath.default('auto'),
      /** FR (strategy mtp): the head drafts among the first frVocab tokens only; absent: all */
      frVocab: z.number().int().min(1).optional(),
      /** the model's mmproj-*.gguf: the session's prompts may hold images (native/src/media.h) */
      projector: z.string().min(1).optional(),
      /** `suffix`: the model's store of earlier replies, in tokens (0: off for this session); absent: the engine's 65,536 */
      suffixStoreTokens: z.number().int().min(0).max(SUFFIX_STORE_TOKENS_MAX).optional(),
      /** `suffix`: the store's file, read when the model's store is made and kept from then on; absent: in memory only */
      suffixStoreFile: z.string().min(1).optional(),
    }),
    output: z.object({
      sessionId: Id,
      contextSize: z.number().int(),
      /** CPU threads the session's graphs run on */
      threads: z.number().int(),
      k: z.number().int(),
      s: z.number().int().nullable(),
      recurrent: z.boolean(),
      /** what llama.cpp settled on (it resolves "auto" itself) */
      flashAttn: z.enum(['on', 'off', 'unknown']),
    }),
  },
  generate: {
    input: z.object({
      sessionId: Id,
      requestId: Id,
      prompt: z.instanceof(Int32Array),
      /** a prompt with images (a session with a projector): it replaces `prompt`, which is then empty */
      media: MediaPrompt.optional(),
      maxTokens: z.number().int().min(1),
      sampling: SamplingOptions,
    }),
    output: NativeGenerateResult.extend({ sampling: SamplingUsed }),
  },
  cancel: { input: z.object({ sessionId: Id }), output: z.null() },
  /**
   * `power audit`: the session's next requests keep the logits row the token at `position` is
   * sampled from; with otherRow, also what the sampler in that same state draws from it
   */
  captureRow: {
    input: z.object({ sessionId: Id, position: z.number().int().min(0), otherRow: z.instanceof(Float32Array).optional() }),
    output: z.null(),
  },
  /** the row captureRow asked for (null: that position was not sampled) */
  capturedRow: {
    input: z.object({ sessionId: Id }),
    output: z
      .object({
        row: z.instanceof(Float32Array),
        rowToken: z.number().int(),
        otherToken: z.number().int().nullable(),
        /** drawn on the backend: rowToken only, the row is empty */
        backend: z.boolean(),
        /** the candidates the CPU draw accumulated over, in order, and their probabilities (seeded chains) */
        drawnFromIds: z.instanceof(Int32Array),
        drawnFromP: z.instanceof(Float64Array),
      })
      .nullable(),
  },
  /** test hook: raise the runner-up of the row sampled at `position` above its top (hidden: capture the unperturbed row) */
  perturbRow: {
    input: z.object({ sessionId: Id, position: z.number().int().min(0), hidden: z.boolean().default(false) }),
    output: z.null(),
  },
  /** test hook (engine started with POWER_TEST_HOOKS=1): fail the verify of that round of the next request */
  injectFailure: { input: z.object({ sessionId: Id, round: z.number().int().min(1) }), output: z.null() },
  /**
   * test hook: every later request of this engine, once it has emitted `afterRound` rounds, waits
   * for its cancel instead of going on (a test that acts on a reply in flight never races its end); null: off
   */
  holdReplies: { input: z.object({ afterRound: z.number().int().min(1).nullable() }), output: z.null() },
  /** test hook: the host executes an illegal instruction and dies of it, as a build for another CPU would */
  trap: { input: z.object({}), output: z.null() },
  /** test hook: the step-4 sampling rule vs plain autoregressive sampling on the same logit rows */
  samplingOrderCheck: {
    input: z.object({
      modelId: Id,
      rows: z.instanceof(Float32Array),
      proposals: z.instanceof(Int32Array),
      sampling: SamplingOptions,
      extraDraws: z.number().int().min(0),
    }),
    output: z.object({
      spec: z.array(z.number().int()),
      accepted: z.number().int(),
      eog: z.boolean(),
      ar: z.array(z.number().int()),
      probeSpec: z.number().int(),
      probeAr: z.number().int(),
    }),
  },
  /**
   * what the target's KV cache holds between requests (llama.cpp's memory): sequence 0's
   * positions, and for attention caches (base, and the sliding-window cache of an iSWA memory)
   * their size and used cells
   */
  memoryCells: {
    input: z.object({ sessionId: Id }),
    output: z.object({
      kind: z.enum(['iswa', 'kv', 'other']),
      posMin: z.number().int(),
      posMax: z.number().int(),
      base: CacheCells.nullable(),
      swa: CacheCells.nullable(),
    }),
  },
  /**
   * the tokens the session's model keeps in its store of earlier replies (`suffix`; null: none)
   * and why its file is not in use (null: it is, or there is none); emptied first, its file too, with `clear`
   */
  suffixStore: {
    input: z.object({ sessionId: Id, clear: z.boolean().default(false) }),
    output: z.object({ tokens: z.number().int().min(0).nullable(), problem: z.string().nullable() }),
  },
  disposeSession: { input: z.object({ sessionId: Id }), output: z.null() },
  disposeModel: { input: z.object({ modelId: Id }), output: z.null() },
  liveHandles: { input: z.object({}), output: LiveHandles },
} as const;

export type EngineMethods = typeof engineMethods;
export type EngineMethod = keyof EngineMethods;
export type EngineParams<M extends EngineMethod> = z.input<EngineMethods[M]['input']>;
export type EngineResult<M extends EngineMethod> = z.output<EngineMethods[M]['output']>;

export const RoundsEvent = z.object({ requestId: Id, batch: RoundBatch });
export type RoundsEvent = z.infer<typeof RoundsEvent>;
export const ProgressEvent = z.object({ requestId: Id, progress: z.number() });

/** The engine host as a description: the methods above, and the rounds and load progress it streams by request id. */
export const engineApi = {
  engine: concern({ methods: engineMethods, events: { onRounds: RoundsEvent, onProgress: ProgressEvent } }),
};
export type EngineApi = typeof engineApi;

/**
 * The host runs native code on files from anywhere and is not trusted by its parent: the client
 * checks the params (filling in their defaults) and every result and payload; the host trusts
 * what its parent sends.
 */
export const ENGINE_CHECKS = CHECKED_BY_CLIENT;
