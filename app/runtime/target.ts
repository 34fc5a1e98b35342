// The rules of a load, in one place for every front door: a target on a device, the strategy
// it must serve (refused with the reason when it cannot: no NextN layers, no or an
// incompatible draft, a proposer this engine does not run), the draft loaded next to it, and
// the session with K/S (refused when the context cannot schedule them). A load can be
// cancelled at any moment through `signal` (Ctrl-C): it ends with a ModelLoadCancelled.
import { availableParallelism } from 'node:os';

import type { z } from 'zod';

import { PowerError } from '../contract/api/errors.js';
import type { FlashAttn, SamplingUsed } from '../contract/engine-types.js';
import type { EngineResult, NativeModelInfo } from '../engine/protocol.js';
import { capThreads } from './resource-limits.js';
import { scheduleProblem } from './spec-schedule.js';
import { DRAFT_STRATEGIES, strategyAvailability, strategyLabel, takesDraft, type Strategy } from '../contract/strategies.js';
import { frProblem } from '../contract/profile.js';
import type { EngineEvidence } from '../contract/generation-result.js';
import { batchInvarianceClaim, readBuildInfo, type InvarianceClaim } from '../engine/build-info.js';
import { abortable, CancelledError } from '../engine/cancellation.js';
import { EngineCallError, EngineCrashedError } from '../engine/client.js';
import { attentionHeads } from '../engine/cuda-invariance.js';
import { defaultFlashAttn, describeDevice, type DeviceRequest } from '../engine/device-select.js';
import { attentionShape } from '../engine/memory-estimate.js';
import type { SplitRequest } from '../engine/split.js';
import type { GgufInfo } from '../gguf/types.js';
import { checkDraftCompatibility, checkDraftK, draftKind, type DraftCompatibility } from '../models/draft-compat.js';
import { checkFile, defaultContextSize, ModelLoadCancelled, openModel, type OpenedModel, type OpenOptions } from './open-model.js';

type FlashAttnMode = z.infer<typeof FlashAttn>;

export interface TargetRequest {
  path: string;
  device: DeviceRequest;
  /** -1: all */
  gpuLayers: number;
  strategy: Strategy;
  /** a chain: the strategies asked after `strategy` when it drafts nothing (strategyListProblem has passed the list) */
  fallbacks?: readonly Strategy[];
  draftPath?: string;
  /** the S the sessions will use (memory estimate) */
  s: number;
  contextSize?: number;
  flashAttn?: FlashAttnMode;
  verbose?: boolean;
  engine?: OpenOptions['engine'];
  onProgress?: (role: 'target' | 'draft', progress: number) => void;
  /** cancels the load (Ctrl-C): the engine is stopped and a ModelLoadCancelled thrown */
  signal?: AbortSignal;
  /** remote machines (--rpc), split mode, tensor split, main GPU, MoE offload */
  split?: SplitRequest;
}

export interface OpenedTarget extends OpenedModel {
  strategy: Strategy;
  /** the rest of the chain it was opened for ([]: one strategy) */
  fallbacks: readonly Strategy[];
  /** the draft next to the target, with what its header check found (kind, declared facts) */
  draft: { modelId: string; info: NativeModelInfo; gguf: GgufInfo; path: string; check: DraftCompatibility } | null;
  /** what the sessions ask llama.cpp for: what the request said, else defaultFlashAttn */
  flashAttn: FlashAttnMode;
  contextSize: number;
}

/** Opens the target, checks that it can serve the strategy, and loads the draft. */
export async function openTarget(request: TargetRequest): Promise<OpenedTarget> {
  const { strategy } = request;
  const fallbacks = request.fallbacks ?? [];
  const members = [strategy, ...fallbacks];
  const label = strategyLabel(strategy, fallbacks);
  const speculative = strategy !== 'none';
  // mtp drafts with the draft file (an assistant or a sidecar) where no other member needs it, as the engine decides
  const mtpTakesDraft = members.includes('mtp') && request.draftPath !== undefined && !members.some((m) => DRAFT_STRATEGIES.has(m));
  if (request.draftPath && speculative && !members.some((m) => takesDraft(m))) {
    throw new PowerError(
      'bad-input',
      `strategy '${label}' proposes from the token history and takes no draft (drop --draft ${request.draftPath})`,
    );
  }
  const draftGguf = request.draftPath ? await checkFile(request.draftPath, readBuildInfo()) : undefined;
  const opened = await openModel(request.path, {
    device: request.device,
    gpuLayers: request.gpuLayers,
    // the MTP proposer drafts with the target's own NextN layers (llama.cpp loads them only when
    // asked), unless a Gemma 4 assistant or an MTP sidecar drafts beside it
    loadMtp: members.includes('mtp') && !mtpTakesDraft,
    verbose: request.verbose ?? false,
    ...(request.engine ? { engine: request.engine } : {}),
    ...(request.onProgress ? { onProgress: (p: number) => request.onProgress!('target', p) } : {}),
    plan: {
      ...(request.contextSize !== undefined ? { contextSize: request.contextSize } : {}),
      ...(speculative && draftGguf ? { draft: draftGguf } : {}),
      s: speculative ? request.s : 0,
      // absent: the device's default (defaultFlashAttn), which the memory check assumes too
      ...(request.flashAttn === 'on' || request.flashAttn === 'off' ? { flashAttn: request.flashAttn === 'on' } : {}),
    },
    enforceFit: true,
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.split ? { split: request.split } : {}),
  });
  const { engine, info, placement } = opened;
  try {
    const draftCheck = draftGguf ? checkDraftCompatibility(opened.gguf, draftGguf) : undefined;
    const table = strategyAvailability({
      nextnLayers: info.nextnLayers,
      draftOnly: draftKind(opened.gguf) === 'mtp',
      ...(draftCheck ? { draft: draftCheck } : {}),
    });
    // each member of a chain as the strategy alone would be checked
    for (const member of members) {
      const availability = table[member];
      if (!availability.available) {
        throw new PowerError('unsupported', `strategy '${member}' is not available for ${request.path}: ${availability.reason}`);
      }
    }
    let draft: OpenedTarget['draft'] = null;
    if (speculative && request.draftPath && draftGguf) {
      const requestId = `load:${request.draftPath}`;
      const stop = request.onProgress ? engine.onProgress(requestId, (p) => request.onProgress!('draft', p)) : () => {};
      try {
        const loaded = await abortable(
          // the draft on the local main GPU, or the CPU: its many small steps never wait on the network
          // an MTP sidecar's NextN layers load only when asked
          engine.call('loadModel', {
            path: request.draftPath,
            requestId,
            gpuLayers: -1,
            devices: opened.draftDevices,
            ...(mtpTakesDraft ? { loadMtp: true } : {}),
          }),
          request.signal,
          'loading the draft',
        );
        draft = { modelId: loaded.modelId, info: loaded.info, gguf: draftGguf, path: request.draftPath, check: draftCheck! };
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        throw new PowerError('bad-input', `cannot load the draft ${request.draftPath}: ${(error as Error).message}`);
      } finally {
        stop();
      }
    }
    return {
      ...opened,
      strategy,
      fallbacks,
      draft,
      flashAttn: request.flashAttn ?? defaultFlashAttn(placement.kind, attentionShape(opened.gguf)),
      contextSize: request.contextSize ?? defaultContextSize(info.contextLength),
    };
  } catch (error) {
    await engine.close();
    if (error instanceof CancelledError) throw new ModelLoadCancelled(error.stage, placement);
    throw asPowerError(error);
  }
}

export interface SessionRequest {
  /** the strategy of this session: the target's, or 'none' (the control) */
  strategy: Strategy;
  /** the rest of the chain: the target's, when the session speculates */
  fallbacks?: readonly Strategy[];
  k: number;
  s: number;
  /** 0: the engine's default */
  threads: number;
  /** FR (strategy mtp): the head drafts among the first frVocab tokens; absent: the whole vocabulary */
  frVocab?: number | undefined;
  /** p-min (0..1; 0: off) */
  pMin?: number;
  /** adaptive K */
  adaptiveK?: boolean;
  /** the model's projector (mmproj-*.gguf): the session's prompts may hold images */
  projector?: string;
  /** `suffix`: the file of the model's store of earlier replies (absent: in memory only) */
  suffixStoreFile?: string;
  /** `suffix`: the model's store in tokens (0: off for this session, neither read nor added to); absent: the engine's default */
  suffixStoreTokens?: number;
}

export type OpenedSession = EngineResult<'createSession'>;

/**
 * null when the context can schedule this strategy's K/S (verify batch, rollback depth), else
 * why not; the front doors check it before tokenising a prompt.
 */
export function sessionProblem(
  target: OpenedTarget,
  request: Pick<SessionRequest, 'strategy' | 'fallbacks' | 'k' | 's' | 'frVocab'>,
): string | null {
  const frRefused = request.frVocab !== undefined ? frProblem([request.strategy, ...(request.fallbacks ?? [])]) : null;
  if (frRefused) return frRefused;
  if (request.strategy === 'none') return null;
  const recurrent = target.info.recurrent || target.info.hybrid;
  // a DFlash/DSpark block bounds K (llama.cpp would clamp it silently)
  const artifact = target.draft ? (checkDraftK(target.draft.check, request.k) ?? null) : null;
  return artifact ?? scheduleProblem({ k: request.k, s: request.s, contextSize: target.contextSize, batchSize: 512, recurrent });
}

/** A session on an opened target. `none` runs on any target; another strategy must be the one it was opened for. */
export async function createSession(target: OpenedTarget, request: SessionRequest): Promise<OpenedSession> {
  const speculative = request.strategy !== 'none';
  const asked = strategyLabel(request.strategy, request.fallbacks);
  const loaded = strategyLabel(target.strategy, target.fallbacks);
  if (speculative && asked !== loaded) {
    throw new PowerError(
      'unsupported',
      `strategy '${asked}' needs the model loaded for it (it is loaded for '${loaded}'): load it again with that strategy`,
    );
  }
  const unschedulable = sessionProblem(target, request);
  if (unschedulable) throw new PowerError('bad-input', unschedulable);
  try {
    return await target.engine.call('createSession', {
      modelId: target.modelId,
      contextSize: target.contextSize,
      // 0: the engine's default; more than the machine's logical cores is capped (the CLI warns)
      threads: request.threads === 0 ? 0 : capThreads(request.threads, availableParallelism()).threads,
      flashAttn: target.flashAttn,
      strategy: request.strategy,
      ...(speculative && request.fallbacks?.length ? { fallbacks: [...request.fallbacks] } : {}),
      ...(speculative && request.pMin ? { pMin: request.pMin } : {}),
      ...(speculative && request.adaptiveK ? { adaptiveK: true } : {}),
      k: speculative ? request.k : 0,
      s: speculative ? request.s : 0,
      ...(speculative && request.frVocab !== undefined ? { frVocab: request.frVocab } : {}),
      ...(speculative && target.draft ? { draftModelId: target.draft.modelId } : {}),
      ...(request.projector ? { projector: request.projector } : {}),
      ...(speculative && request.suffixStoreFile ? { suffixStoreFile: request.suffixStoreFile } : {}),
      ...(speculative && request.suffixStoreTokens !== undefined ? { suffixStoreTokens: request.suffixStoreTokens } : {}),
    });
  } catch (error) {
    throw asPowerError(error);
  }
}

/** Engine failures as PowerErrors: a dead host is engine-crashed, a refused call bad input. */
export function asPowerError(error: unknown): unknown {
  if (error instanceof EngineCrashedError) return new PowerError('engine-crashed', `the engine crashed: ${error.message}`);
  // the host's plain errors (llama.cpp refusing a file, the addon refusing a value) are about
  // what the request asked for; a code the host gave (cancelled, unsupported, …) is kept
  if (error instanceof EngineCallError) return new PowerError(error.code === 'internal' ? 'bad-input' : error.code, error.message);
  return error;
}

/**
 * Whether a loaded model's verify pass computes each row exactly as a one-row decode does, in a
 * session (none yet: nothing is claimed) with the Flash Attention setting llama.cpp settled on
 * and its K: the flavour's claim for those, for the model's kind and attention and for the CUDA
 * devices it runs on (app/engine/build-info.ts), with the reason when it is withheld. What a
 * remote machine runs is not known here, and a row split sums each product across GPUs: neither
 * is vouched for.
 */
export function batchInvarianceOf(
  loaded: Pick<OpenedModel, 'placement' | 'experts' | 'split' | 'gguf' | 'loadDevices'>,
  session: Pick<OpenedSession, 'flashAttn' | 'k'> | null | undefined,
): InvarianceClaim {
  const remote = loaded.placement.remote ?? [];
  if (session == null) return { claimed: false, why: 'no session has run' };
  if (remote.length > 0)
    return { claimed: false, why: 'the model is split over remote machines (--rpc), and what they run is not known here' };
  if (loaded.split.splitMode === 'row')
    return { claimed: false, why: 'a row split (--split-mode row) sums each matrix product across GPUs' };
  const { placement } = loaded;
  const used = placement.devices.filter((d) => d.backend === 'CUDA' && loaded.loadDevices.includes(d.name));
  const cudaDevices = used.length > 0 ? used : placement.device.backend === 'CUDA' ? [placement.device] : [];
  return batchInvarianceClaim(placement.flavour, {
    flashAttn: session.flashAttn,
    experts: loaded.experts,
    k: session.k,
    cudaDevices,
    attention: attentionHeads(loaded.gguf),
  });
}

/** batchInvarianceOf, claimed or not. */
export function claimsBatchInvariance(
  loaded: Pick<OpenedModel, 'placement' | 'experts' | 'split' | 'gguf' | 'loadDevices'>,
  session: Pick<OpenedSession, 'flashAttn' | 'k'> | null | undefined,
): boolean {
  return batchInvarianceOf(loaded, session).claimed;
}

/** batchInvarianceOf as the evidence of a request carries it (backendOf). */
export function invarianceEvidence(
  loaded: Pick<OpenedModel, 'placement' | 'experts' | 'split' | 'gguf' | 'loadDevices'>,
  session: Pick<OpenedSession, 'flashAttn' | 'k'> | null | undefined,
): { batchInvariant: boolean; batchInvariantWhy: string | null } {
  const claim = batchInvarianceOf(loaded, session);
  return { batchInvariant: claim.claimed, batchInvariantWhy: claim.why };
}

/**
 * What ran a request, as every front door reports it (`power generate --json`, the engine's
 * state, a chat reply's runtime): the device and flavour, the offload, Flash Attention as
 * llama.cpp settled it, and whether the verify pass is batch-invariant with that.
 */
export function backendOf(
  placement: OpenedTarget['placement'],
  run: {
    /** invarianceEvidence for this load and Flash Attention setting */
    batchInvariant: boolean;
    batchInvariantWhy: string | null;
    gpuLayers: number;
    flashAttn: 'on' | 'off' | 'unknown';
    memoryEstimateBytes: number | null;
    sampling: SamplingUsed;
  },
): EngineEvidence {
  const remote = placement.remote ?? [];
  return {
    // with remote machines: "cpu (AMD EPYC) + RPC0 (10.0.0.2:50052), RPC1 (10.0.0.3:50052)"
    device: describeDevice(placement.device) + (remote.length > 0 ? ` + ${remote.map((d) => `${d.name} (${d.endpoint})`).join(', ')}` : ''),
    kind: placement.kind,
    flavour: placement.flavour,
    batchInvariant: run.batchInvariant,
    batchInvariantWhy: run.batchInvariant ? null : run.batchInvariantWhy,
    llamaCppRelease: placement.llamaCppRelease,
    gpuLayers: placement.kind === 'cpu' && remote.length === 0 ? null : run.gpuLayers < 0 ? 'all' : run.gpuLayers,
    flashAttn: run.flashAttn,
    sampling: run.sampling.path,
    samplingReason: run.sampling.reason,
    choice: placement.note,
    memoryEstimateBytes: run.memoryEstimateBytes,
  };
}
