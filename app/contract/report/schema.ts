// The performance report of `power bench` and of a chat session (the app's Report tab): one
// versioned JSON document from which every other format is derived. docs/report.md documents
// it field by field; bump REPORT_SCHEMA_VERSION on any change that a reader of an older report
// would misread. A chat report is a documented variant of the same version (kind
// 'power-chat-report' with a `chat` section): a bench report reads exactly as before.
import { z } from 'zod';

import { DraftSource, StopReason } from '../engine-types.js';
import { STRATEGIES } from '../strategies.js';
import { ReplyParts } from './parts.js';

export const REPORT_SCHEMA_VERSION = 1;

const Rate = z.number().nonnegative().nullable();
const Count = z.number().int().nonnegative();

/** One round of a request as the engine recorded it (the raw samples behind every figure). */
export const RoundSample = z.object({
  proposed: Count,
  accepted: Count,
  /** tokens the round emitted (accepted + one correction/bonus, or 1 for a plain step) */
  emitted: Count,
  replay: z.boolean(),
  clampedTo: z.number().int().nullable(),
  /** microseconds since the request started, when the round's tokens were emitted */
  endUs: z.number().nonnegative(),
  proposeUs: z.number().nonnegative(),
  verifyUs: z.number().nonnegative(),
  commitUs: z.number().nonnegative(),
  /** a chain's verify round: which member (0-based, in the profile's chain order) drafted it; absent otherwise */
  member: Count.optional(),
  /** where the round's draft came from, for a drafter that tells (`suffix`: this request, or the model's store of earlier replies); absent otherwise */
  draftSource: DraftSource.optional(),
  /** with draftSource: the proposals the drafter expected accepted (against `accepted`) */
  expectedAccepted: z.number().nonnegative().optional(),
});
export type RoundSample = z.infer<typeof RoundSample>;

/** A profile as it ran: `control` is the autoregressive run (strategy none). */
export const ProfileRun = z.object({
  /** control, balanced, peak, k4, k7s6 ... */
  name: z.string().min(1),
  strategy: z.enum(STRATEGIES),
  k: z.number().int().nullable(),
  /** null for the control and for targets without recurrent state (S does not apply) */
  s: z.number().int().nullable(),
  /** a chain's members after `strategy`, asked in order when it drafts nothing (absent: one strategy) */
  fallbacks: z.array(z.enum(STRATEGIES)).min(1).optional(),
  /** p-min: a greedy drafter stopped under this top-1 probability (absent: off) */
  pMin: z.number().gt(0).max(1).optional(),
  /** adaptive K was on (absent: off) */
  adaptiveK: z.literal(true).optional(),
  /** FR: the MTP head drafted among the first frVocab tokens (absent: the whole vocabulary) */
  frVocab: z.number().int().positive().optional(),
});
export type ProfileRun = z.infer<typeof ProfileRun>;

export const RequestRecord = z.object({
  task: z.string().min(1),
  category: z.string().min(1),
  profile: z.string().min(1),
  /** 0-based repeat index */
  repeat: Count,
  /** sampler seed (null when greedy) */
  seed: z.number().int().nullable(),
  promptTokens: Count,
  /**
   * prompt tokens kept from the session's previous request, not evaluated again (promptTokens less
   * this is what the prefill evaluated); null where the engine did not say, absent in a report
   * written before it was recorded
   */
  reusedPromptTokens: Count.nullable().optional(),
  generatedTokens: Count,
  stopReason: StopReason,
  ttftMs: z.number().nonnegative().nullable(),
  prefillTokensPerSecond: Rate,
  /** tokens emitted after the warm-up rounds / the time they took */
  steadyDecodeTokensPerSecond: Rate,
  /** every generated token / the request's whole time (prefill included) */
  requestTokensPerSecond: Rate,
  proposed: Count,
  accepted: Count,
  /** verify rounds (rounds that carried proposals) */
  rounds: Count,
  acceptanceRate: z.number().min(0).max(1).nullable(),
  meanAcceptanceLength: z.number().nonnegative().nullable(),
  acceptancePerPosition: z.array(z.number().min(0).max(1)),
  replays: Count,
  clampedTo: z.number().int().nullable(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** digest equals the control's for the same task, repeat and seed; null for the control itself */
  matchesControl: z.boolean().nullable(),
  samples: z.array(RoundSample),
});
export type RequestRecord = z.infer<typeof RequestRecord>;

/** Median with the 10th and 90th percentiles over the requests that had the figure. */
export const Spread = z.object({ median: z.number(), p10: z.number(), p90: z.number(), n: z.number().int().positive() });
export type Spread = z.infer<typeof Spread>;

/** Speedup of a profile over the control on one figure. */
export const Speedup = z.object({
  /** median(profile) / median(control) */
  ratioOfMedians: z.number().nullable(),
  /** median over (task, repeat) pairs of profile / control */
  medianOfTaskRatios: z.number().nullable(),
  /** how many (task, repeat) pairs had the figure for both */
  pairs: Count,
});
export type Speedup = z.infer<typeof Speedup>;

/**
 * The request-wide speedup: over the pairs that prefilled alike only (prefillsAlike in
 * prefill.ts), since speculation does not speed up a prefill. `pairs` counts those.
 */
export const RequestSpeedup = Speedup.extend({
  /** pairs left out because their two requests prefilled unlike (absent in a report written before, whose pairs are every pair) */
  prefilledUnlike: Count.optional(),
});
export type RequestSpeedup = z.infer<typeof RequestSpeedup>;

export const CategorySummary = z.object({
  category: z.string(),
  requests: Count,
  steadyDecodeTokensPerSecond: Spread.nullable(),
  /** median of per-(task, repeat) steady-decode ratios to the control in this category */
  speedup: z.number().nullable(),
  acceptanceRate: z.number().nullable(),
});
export type CategorySummary = z.infer<typeof CategorySummary>;

/** A chain member's verify rounds, pooled over the profile's requests (memberStats in stats.ts). */
export const MemberSummary = z.object({
  strategy: z.enum(STRATEGIES),
  rounds: Count,
  proposed: Count,
  accepted: Count,
  acceptanceRate: z.number().min(0).max(1).nullable(),
});
export type MemberSummary = z.infer<typeof MemberSummary>;

/** The verify rounds whose draft came from one source (sourceStats in stats.ts), pooled over the profile's requests. */
export const SourceSummary = z.object({
  source: DraftSource,
  rounds: Count,
  /** tokens drafted (proposed) from this source */
  drafted: Count,
  accepted: Count,
  /** per round: the proposals the drafter expected accepted, and those accepted */
  meanExpected: z.number().nonnegative().nullable(),
  meanAccepted: z.number().nonnegative().nullable(),
});
export type SourceSummary = z.infer<typeof SourceSummary>;

export const ProfileSummary = ProfileRun.extend({
  requests: Count,
  generatedTokens: Count,
  ttftMs: Spread.nullable(),
  prefillTokensPerSecond: Spread.nullable(),
  steadyDecodeTokensPerSecond: Spread.nullable(),
  requestTokensPerSecond: Spread.nullable(),
  acceptanceRate: Spread.nullable(),
  meanAcceptanceLength: Spread.nullable(),
  /** pooled over the profile's verify rounds: accepted at position i / rounds that proposed i */
  acceptancePerPosition: z.array(z.number().min(0).max(1)),
  proposed: Count,
  accepted: Count,
  replays: Count,
  /** requests whose rounds were clamped after a replay */
  clampedRequests: Count,
  speedup: z.object({ steadyDecode: Speedup, request: RequestSpeedup }).nullable(),
  /** requests whose digest equals the control's (null for the control) */
  digestMatches: Count.nullable(),
  categories: z.array(CategorySummary),
  /** a chain's profile: each member's share of the verify rounds, in chain order (absent: one strategy) */
  members: z.array(MemberSummary).optional(),
  /** a drafter that tells where each draft came from (`suffix`): its rounds by source (absent: none told) */
  sources: z.array(SourceSummary).optional(),
});
export type ProfileSummary = z.infer<typeof ProfileSummary>;

export const ModelFile = z.object({
  role: z.enum(['target', 'draft']),
  /** file name (no folder: reports get shared) */
  name: z.string(),
  sizeBytes: Count,
  /** always present in a bench report; null in a chat report while the library is still hashing the file */
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  architecture: z.string(),
  /** GGUF file type (F32, F16, Q8_0, Q4_0, MOSTLY_Q4_K_M ...) */
  quantization: z.string(),
  parameters: z.number().nonnegative(),
});
export type ModelFile = z.infer<typeof ModelFile>;

export const Environment = z.object({
  os: z.object({ platform: z.string(), release: z.string(), arch: z.string() }),
  cpu: z.object({ model: z.string(), logicalCores: Count }),
  memoryBytes: Count,
  gpus: z.array(z.object({ name: z.string(), description: z.string(), memoryBytes: Count })),
  /** NVIDIA driver version (nvidia-smi), null where there is none */
  gpuDriver: z.string().nullable(),
  /** what actually ran the requests (null in a chat report whose replies predate its recording) */
  backend: z
    .object({ device: z.string(), kind: z.enum(['cpu', 'cuda', 'vulkan']), flavour: z.string(), note: z.string().nullable() })
    .nullable(),
  llamaCppRelease: z.string(),
  powerVersion: z.string(),
  nodeVersion: z.string(),
  models: z.array(ModelFile),
  /** null in a chat report whose replies predate their recording */
  settings: z
    .object({
      /** layers offloaded ("all" or a count); null on the CPU */
      gpuLayers: z.union([z.literal('all'), Count]).nullable(),
      flashAttn: z.enum(['on', 'off', 'unknown']),
      contextSize: Count,
      threads: Count,
      batchSize: Count,
    })
    .nullable(),
});
export type Environment = z.infer<typeof Environment>;

export const RunInfo = z.object({
  startedAt: z.string(),
  finishedAt: z.string(),
  /** the command line that produced the report */
  command: z.string(),
  strategy: z.enum(STRATEGIES),
  /** every profile in run order, the control first */
  profiles: z.array(ProfileRun).min(1),
  tasks: z.object({ name: z.string(), count: Count, categories: z.array(z.string()) }),
  repeat: z.number().int().positive(),
  maxTokens: z.number().int().positive().nullable(),
  temperature: z.number().nonnegative(),
  seed: z.number().int().nullable(),
  /** the steady-decode figure skips this many rounds at the start of each request */
  warmupRounds: Count,
  /** stopped early (Ctrl-C): the report holds the requests completed before */
  cancelled: z.boolean(),
});
export type RunInfo = z.infer<typeof RunInfo>;

/** One assistant reply of a chat report, in the order of `requests` (same index). */
export const ChatReply = z.object({
  messageId: z.string().min(1),
  /** the request's task: "turn N" (the N-th user message), "turn N (2)" for another sampling */
  task: z.string().min(1),
  createdAt: z.string(),
  /** replaced by Regenerate or by the A/B's control (kept for the report), not shown in the chat */
  superseded: z.boolean(),
  model: z.string(),
  draft: z.string().nullable(),
  /** the profile's name in the app (the request's `profile` is "control" for the autoregressive one) */
  appProfile: z.string().nullable(),
  status: z.enum(['done', 'stopped']),
  sampling: z.object({
    temperature: z.number(),
    seed: z.number().int().nullable(),
    topK: z.number(),
    topP: z.number(),
    minP: z.number(),
    repeatPenalty: z.number(),
    maxTokens: z.number().int(),
  }),
  /** a reply that thought: its thinking's and its answer's figures (parts.ts; absent: the reply did not think) */
  parts: ReplyParts.optional(),
});
export type ChatReply = z.infer<typeof ChatReply>;

/** What a chat report adds: which chat, and how each request maps to its reply. */
export const ChatSection = z.object({
  id: z.string().min(1),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** user messages in the chat */
  turns: Count,
  replies: z.array(ChatReply),
  /** replies not in `requests` (still streaming, failed), each with why */
  left: z.array(z.object({ messageId: z.string(), reason: z.string() })),
  /** what a reader should know about the figures (models gone from the library, backends mixed ...) */
  notes: z.array(z.string()),
});
export type ChatSection = z.infer<typeof ChatSection>;

export const REPORT_KINDS = ['power-bench-report', 'power-chat-report'] as const;

export const Report = z
  .object({
    schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
    kind: z.enum(REPORT_KINDS),
    run: RunInfo,
    environment: Environment,
    profiles: z.array(ProfileSummary),
    requests: z.array(RequestRecord),
    /** present exactly when kind is 'power-chat-report' */
    chat: ChatSection.optional(),
  })
  .superRefine((r, ctx) => {
    if ((r.kind === 'power-chat-report') !== (r.chat !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['chat'], message: 'a chat report (and only a chat report) has a chat section' });
    } else if (r.chat && r.chat.replies.length !== r.requests.length) {
      ctx.addIssue({ code: 'custom', path: ['chat', 'replies'], message: 'one reply per request' });
    }
  });
export type Report = z.infer<typeof Report>;
