// The performance report of `power bench` (and, later, of a chat session in the renderer's
// report view): one versioned JSON document from which every other format is derived.
// bench/REPORT.md documents it field by field; bump REPORT_SCHEMA_VERSION on any change that
// a reader of an older report would misread.
import { z } from 'zod';

import { StopReason } from '../engine-protocol.js';
import { STRATEGIES } from '../strategies.js';

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

export const CategorySummary = z.object({
  category: z.string(),
  requests: Count,
  steadyDecodeTokensPerSecond: Spread.nullable(),
  /** median of per-(task, repeat) steady-decode ratios to the control in this category */
  speedup: z.number().nullable(),
  acceptanceRate: z.number().nullable(),
});
export type CategorySummary = z.infer<typeof CategorySummary>;

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
  speedup: z.object({ steadyDecode: Speedup, request: Speedup }).nullable(),
  /** requests whose digest equals the control's (null for the control) */
  digestMatches: Count.nullable(),
  categories: z.array(CategorySummary),
});
export type ProfileSummary = z.infer<typeof ProfileSummary>;

export const ModelFile = z.object({
  role: z.enum(['target', 'draft']),
  /** file name (no folder: reports get shared) */
  name: z.string(),
  sizeBytes: Count,
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
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
  /** what actually ran the requests */
  backend: z.object({ device: z.string(), kind: z.enum(['cpu', 'cuda']), flavour: z.string(), note: z.string().nullable() }),
  llamaCppRelease: z.string(),
  powerVersion: z.string(),
  nodeVersion: z.string(),
  models: z.array(ModelFile),
  settings: z.object({
    /** layers offloaded ("all" or a count); null on the CPU */
    gpuLayers: z.union([z.literal('all'), Count]).nullable(),
    flashAttn: z.enum(['on', 'off', 'unknown']),
    contextSize: Count,
    threads: Count,
    batchSize: Count,
  }),
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

export const Report = z.object({
  schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
  kind: z.literal('power-bench-report'),
  run: RunInfo,
  environment: Environment,
  profiles: z.array(ProfileSummary),
  requests: z.array(RequestRecord),
});
export type Report = z.infer<typeof Report>;
