// models: the library of GGUF files the user added (never a copy: the entry points at the
// user's file, and removing it from the library never deletes the file).
import { z } from 'zod';

import { K_MAX } from '../profile.js';
import { concern } from './describe.js';
import { Id, None, Ok, StrategyTable, Time } from './common.js';

/** What `power info` says about a model, read from its GGUF header. */
export const ModelFacts = z.object({
  architecture: z.string(),
  /** general.name, '' when absent */
  name: z.string(),
  parameters: z.number().nonnegative(),
  /** llama.cpp's file type name: "all F32", "F16", "Q4_0", ... */
  fileType: z.string(),
  /** trained context length (0: unknown) */
  contextLength: z.number().int(),
  layers: z.number().int(),
  nextnLayers: z.number().int(),
  /** has recurrent state: S (rollback snapshots) applies */
  recurrent: z.boolean(),
  /** recurrent + attention layers */
  hybrid: z.boolean(),
  vocabType: z.string(),
  vocabSize: z.number().int(),
  /** the GGUF carries a chat template (otherwise the documented fallback is used) */
  chatTemplate: z.boolean(),
});
export type ModelFacts = z.infer<typeof ModelFacts>;

/**
 * A multimodal projector (llama.cpp's clip format, `mmproj-*.gguf`) paired with a model: what it
 * accepts, what an image costs, and whether it fits the model (the reason when not).
 */
export const ProjectorPairing = z.object({
  path: z.string(),
  /** clip.projector_type (gemma3, mlp, ...) */
  projectorType: z.string(),
  accepts: z.object({ image: z.boolean(), audio: z.boolean() }),
  /** the image side the encoder takes, in pixels (null: no vision encoder) */
  imageSize: z.number().int().nullable(),
  patchSize: z.number().int().nullable(),
  /** prompt tokens one image costs, as llama.cpp's clip computes it; null when it depends on the image */
  tokensPerImage: z.number().int().nullable(),
  /** the width of the embeddings it writes into the model's input (null: unknown for this projector type) */
  outputWidth: z.number().int().nullable(),
  /** bytes of its weights (all of them go to the device with the model) */
  weightsBytes: z.number().nonnegative(),
  compatible: z.boolean(),
  /** why it does not fit the model, when not compatible */
  reason: z.string().optional(),
});
export type ProjectorPairing = z.infer<typeof ProjectorPairing>;

export const Sha256 = z.discriminatedUnion('state', [
  z.object({ state: z.literal('pending') }),
  z.object({ state: z.literal('done'), hex: z.string().regex(/^[0-9a-f]{64}$/), ofSize: z.number(), ofMtimeMs: z.number() }),
  z.object({ state: z.literal('error'), message: z.string() }),
]);

export const ModelEntry = z.object({
  id: Id,
  /** file name without .gguf (made unique in the library with a suffix) */
  name: z.string(),
  path: z.string(),
  sizeBytes: z.number().nonnegative(),
  addedAt: Time,
  /** computed in the background after the entry is added; recomputed when the file changes */
  sha256: Sha256,
  facts: ModelFacts.nullable(),
  /** the `mmproj-*.gguf` beside the file, with whether it fits (absent in libraries saved before projectors) */
  projector: ProjectorPairing.nullable().optional(),
  /** why the entry cannot be used right now (file gone, no longer a GGUF); null when fine */
  problem: z.string().nullable(),
});
export type ModelEntry = z.infer<typeof ModelEntry>;

export const DraftCandidate = z.object({
  modelId: Id,
  name: z.string(),
  /** draft-model, or the artifact's strategy (dflash, eagle3, dspark; mtp for a Gemma 4 assistant) */
  strategy: z.string(),
  compatible: z.boolean(),
  /** why not, when not compatible */
  reason: z.string().optional(),
});

export const MemoryEstimate = z.object({
  weights: z.number(),
  kv: z.number(),
  recurrent: z.number(),
  draft: z.number(),
  /** the paired multimodal projector's weights */
  projector: z.number(),
  compute: z.number(),
  reserve: z.number(),
  total: z.number(),
  contextSize: z.number().int(),
  /** one line: the total and its parts */
  description: z.string(),
});
export type MemoryEstimate = z.infer<typeof MemoryEstimate>;

const ModelRef = z.object({ modelId: Id });

export const models = concern({
  methods: {
    list: { input: None, output: z.object({ entries: z.array(ModelEntry) }) },
    get: { input: ModelRef, output: ModelEntry },
    /** a GGUF file, or a folder: every *.gguf directly inside it */
    add: {
      input: z.object({ path: z.string().min(1) }),
      output: z.object({
        added: z.array(ModelEntry),
        /** files already in the library or not usable, each with the reason */
        skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
      }),
    },
    /** removes the entry; the file stays where it is */
    remove: { input: ModelRef, output: Ok },
    /** every other library entry as a draft for this target, with the reason when incompatible */
    drafts: { input: z.object({ targetId: Id }), output: z.object({ drafts: z.array(DraftCandidate) }) },
    /** which strategies the target can serve (with this draft), each with the reason when not */
    strategies: { input: z.object({ targetId: Id, draftId: Id.optional() }), output: StrategyTable },
    /** device memory for a load: weights, KV at the context, recurrent snapshots for S, draft */
    estimate: {
      input: z.object({
        targetId: Id,
        draftId: Id.optional(),
        contextSize: z.number().int().min(16).optional(),
        gpuLayers: z.number().int().min(-1).default(-1),
        s: z.number().int().min(0).max(K_MAX).default(0),
        flashAttn: z.boolean().default(true),
        loadMtp: z.boolean().default(false),
      }),
      output: MemoryEstimate,
    },
  },
  events: {
    onLibraryChanged: z.object({ entries: z.array(ModelEntry) }),
  },
});
