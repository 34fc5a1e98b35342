// engine: one loaded target (plus its draft method) in a supervised engine host process.
// K/S come from the active profile at each request; the load fixes the model set and options.
import { z } from 'zod';

import { CudaStatus, DeviceInfo, FlashAttn } from '../engine-types.js';
import { EngineEvidence } from '../generation-result.js';
import { concern } from './describe.js';
import { checkChain, DeviceRequest, Fallbacks, Id, None, StrategyName } from './common.js';

/** How proposals are made: a strategy (or a chain of them) and, for the ones that need it, a draft from the library. */
export const DraftMethod = z
  .object({
    strategy: StrategyName.default('none'),
    /** a chain: the strategies asked after `strategy` when it drafts nothing ([]: one strategy) */
    fallbacks: Fallbacks.default([]),
    draftId: Id.optional(),
  })
  .superRefine(checkChain);
export type DraftMethod = z.infer<typeof DraftMethod>;

export const LoadOptions = z.object({
  modelId: Id,
  device: DeviceRequest.default('auto'),
  /** -1: all layers (and the output head); ignored on the CPU */
  gpuLayers: z.number().int().min(-1).max(100000).default(-1),
  /** absent: on for CUDA, llama.cpp's choice on the CPU */
  flashAttn: FlashAttn.optional(),
  /** absent: min(trained, 4096) */
  contextSize: z.number().int().min(16).max(16_777_216).optional(),
  /** absent: the engine's default (physical cores); more than the logical cores is capped */
  threads: z.number().int().min(1).max(1024).optional(),
  draftMethod: DraftMethod.default({ strategy: 'none', fallbacks: [] }),
  /** remote machines (`power rpc`) whose devices join the split, as host:port (docs/devices.md) */
  rpc: z.array(z.string().min(3).max(300)).max(16).optional(),
  /** llama.cpp's --split-mode over the devices (absent: one local device, or layer with remote ones) */
  splitMode: z.enum(['layer', 'row', 'none']).optional(),
  /** llama.cpp's --tensor-split: proportions per device (remote ones first, then local GPUs) */
  tensorSplit: z.array(z.number().nonnegative().finite()).min(1).max(16).optional(),
  /** llama.cpp's --main-gpu: an index into the split's devices */
  mainGpu: z.number().int().min(0).max(15).optional(),
  /** every MoE expert tensor in host memory (llama.cpp's --cpu-moe) */
  cpuMoe: z.boolean().optional(),
  /** the MoE expert tensors of the first N blocks in host memory (llama.cpp's --n-cpu-moe) */
  nCpuMoe: z.number().int().min(0).max(100000).optional(),
});
export type LoadOptions = z.infer<typeof LoadOptions>;

export const EngineStatus = z.enum(['unloaded', 'loading', 'ready', 'generating']);

export const EngineState = z.object({
  status: EngineStatus,
  /** what was asked for (kept across a crash: the next request reloads it) */
  options: LoadOptions.nullable(),
  model: z.object({ id: Id, name: z.string(), path: z.string() }).nullable(),
  draft: z.object({ id: Id, name: z.string(), path: z.string() }).nullable(),
  /** the target's recurrent state: S applies (null: nothing loaded) */
  recurrent: z.boolean().nullable(),
  contextSize: z.number().int().nullable(),
  /** what ran the last load (device, flavour, Flash Attention, ...) */
  backend: EngineEvidence.nullable(),
  /** the engine host died and was restarted; the model reloads on the next request */
  reloadPending: z.boolean(),
  /** the last crash of the engine host, if any */
  lastCrash: z.object({ message: z.string(), at: z.string() }).nullable(),
  restarts: z.number().int().min(0),
});
export type EngineState = z.infer<typeof EngineState>;

export const DevicesReport = z.object({
  flavours: z.array(
    z.object({
      flavour: z.string(),
      dir: z.string(),
      gpu: z.string().nullable(),
      devices: z.array(DeviceInfo),
      cuda: CudaStatus.nullable(),
      /**
       * a flavour whose batch-invariance claim depends on the CUDA device (cuda-src): what it is
       * on each of its CUDA devices, by compute capability (app/engine/cuda-invariance.ts)
       */
      batchInvariance: z.array(z.object({ device: z.string(), claim: z.string() })).optional(),
    }),
  ),
  /** what --device auto uses, with the reason when it is the CPU */
  auto: z.string(),
  cuda: z.object({ usable: z.boolean(), use: z.string().nullable(), reason: z.string().nullable() }),
  /** what --device vulkan uses (a real GPU, else a CPU-type device such as lavapipe), or why it cannot */
  vulkan: z.object({ usable: z.boolean(), use: z.string().nullable(), reason: z.string().nullable() }),
});
export type DevicesReport = z.infer<typeof DevicesReport>;

/**
 * The loaded model's store of earlier replies, which `suffix` drafts from (docs/app.md, "Remember
 * earlier replies"): whether the app adds to it, how much it holds, its file's size.
 */
export const SuffixStoreState = z.object({
  /** the setting: replies are remembered (on by default); off, sessions neither read nor add */
  remember: z.boolean(),
  /** the loaded model (null: none loaded; the rest is then empty) */
  modelId: Id.nullable(),
  /** tokens in the engine's store (null: not read yet, which happens at the model's first `suffix` reply) */
  tokens: z.number().int().min(0).nullable(),
  /** the store's file in the data folder (0: none) */
  bytes: z.number().int().min(0),
  /** why the file is not in use or was not written (null: none) */
  problem: z.string().nullable(),
});
export type SuffixStoreState = z.infer<typeof SuffixStoreState>;

export const engine = concern({
  methods: {
    load: { input: LoadOptions, output: EngineState },
    unload: { input: None, output: EngineState },
    state: { input: None, output: EngineState },
    /** what `power devices` reports */
    devices: { input: None, output: DevicesReport },
    suffixStore: { input: None, output: SuffixStoreState },
    /** turns remembering on or off (kept in settings.json; the next reply's session follows it) and/or clears the loaded model's store, memory and file */
    setSuffixStore: {
      input: z.object({ remember: z.boolean().optional(), clear: z.boolean().default(false) }).strict(),
      output: SuffixStoreState,
    },
  },
  events: {
    onLoadProgress: z.object({ modelId: Id, role: z.enum(['target', 'draft']), progress: z.number().min(0).max(1) }),
    onStateChanged: EngineState,
  },
});
