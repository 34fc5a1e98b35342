// The supervised engine: one engine host process holding the loaded target (and its draft).
// If the host dies, every call in flight fails with engine-crashed, the state says so, and
// the next request starts a fresh host and reloads the same model set (reloadPending). Loads,
// reloads and session changes run one at a time.

import { join } from 'node:path';

import type { EngineState, LoadOptions } from '../contract/api/engine.js';
import { PowerError } from '../contract/api/errors.js';
import { SAMPLING_DEFAULTS, type SamplingUsed } from '../contract/engine-types.js';
import { resolveSamplingPath, VULKAN_NO_BACKEND_SAMPLING } from '../engine/sampling-path.js';
import { strategyLabel, type Strategy } from '../contract/strategies.js';
import type { EngineOptions } from '../engine/client.js';
import { parseEndpoint, RpcEndpointError } from '../engine/rpc.js';
import type { SplitRequest } from '../engine/split.js';
import { Emitter } from './events.js';
import type { ModelLibrary } from './library.js';
import {
  backendOf,
  createSession,
  invarianceEvidence,
  openTarget,
  type OpenedSession,
  type OpenedTarget,
  type SessionRequest,
} from '../runtime/target.js';

export interface ActiveSession extends OpenedSession {
  /** the strategy, K/S, FR and policy it was opened for */
  key: string;
  strategy: Strategy;
  /** the projector it reads images with (null: text only) */
  projector: string | null;
}

/** The split a load asks for (remote machines, split mode, tensor split, main GPU, MoE offload), in the runtime's terms. */
function splitOf(options: LoadOptions): { split?: SplitRequest } {
  let rpc: string[] | undefined;
  try {
    rpc = options.rpc?.length ? options.rpc.map((e) => parseEndpoint(e).endpoint) : undefined;
  } catch (error) {
    if (error instanceof RpcEndpointError) throw new PowerError('bad-input', `rpc: ${error.message}`);
    throw error;
  }
  const split: SplitRequest = {
    ...(rpc ? { rpc } : {}),
    ...(options.splitMode ? { splitMode: options.splitMode } : {}),
    ...(options.tensorSplit ? { tensorSplit: options.tensorSplit } : {}),
    ...(options.mainGpu !== undefined ? { mainGpu: options.mainGpu } : {}),
    ...(options.cpuMoe ? { cpuMoe: true } : {}),
    ...(options.nCpuMoe ? { nCpuMoe: options.nCpuMoe } : {}),
  };
  return Object.keys(split).length > 0 ? { split } : {};
}

export class EngineSupervisor {
  readonly stateChanged = new Emitter<EngineState>();
  readonly loadProgress = new Emitter<{ modelId: string; role: 'target' | 'draft'; progress: number }>();
  private target: OpenedTarget | null = null;
  private session: ActiveSession | null = null;
  private options: LoadOptions | null = null;
  private status: EngineState['status'] = 'unloaded';
  private reloadPending = false;
  private lastCrash: EngineState['lastCrash'] = null;
  private restarts = 0;
  private holdAfterRound: number | null = null;
  /** off: sessions open with `suffixStoreTokens: 0` (they neither read nor add to the model's store) */
  private rememberReplies = true;
  private queue: Promise<unknown> = Promise.resolve();
  /** bumped at every load/unload/crash: a session handed out before is stale after it */
  private generation = 0;

  constructor(
    private readonly library: ModelLibrary,
    private readonly engineOptions: EngineOptions = {},
    /** where `suffix` keeps each library model's store of earlier replies (absent: in memory only) */
    private readonly suffixStoreDir?: string,
  ) {}

  state(): EngineState {
    const entry = (id: string | undefined) => {
      if (!id) return null;
      try {
        const e = this.library.get(id);
        return { id: e.id, name: e.name, path: e.path };
      } catch {
        return null;
      }
    };
    const t = this.target;
    return {
      status: this.status,
      options: this.options,
      model: entry(this.options?.modelId),
      draft: entry(this.options?.draftMethod.draftId),
      recurrent: t ? t.info.recurrent : null,
      contextSize: t ? t.contextSize : null,
      backend: t
        ? backendOf(t.placement, {
            ...invarianceEvidence(t, this.session),
            gpuLayers: this.options?.gpuLayers ?? -1,
            flashAttn: this.session?.flashAttn ?? 'unknown',
            memoryEstimateBytes: t.memory?.estimate.total ?? null,
            sampling: this.samplingOfLoad(t),
          })
        : null,
      reloadPending: this.reloadPending,
      lastCrash: this.lastCrash,
      restarts: this.restarts,
    };
  }

  /** Where a request with the default sampling runs on this load (its own path may differ). */
  private samplingOfLoad(t: OpenedTarget): SamplingUsed {
    const onGpu = t.placement.kind !== 'cpu' && (this.options?.gpuLayers ?? -1) !== 0;
    const noBackend = t.placement.kind === 'vulkan' ? VULKAN_NO_BACKEND_SAMPLING : null;
    const resolved = resolveSamplingPath('auto', SAMPLING_DEFAULTS, { onGpu, k: this.session?.k ?? 0, noBackend });
    return resolved.problem === undefined ? { path: resolved.path, reason: resolved.reason } : { path: 'cpu', reason: resolved.problem };
  }

  /** The loaded target (null when nothing is loaded or a reload is pending). */
  loaded(): OpenedTarget | null {
    return this.target;
  }

  loadedOptions(): LoadOptions | null {
    return this.options;
  }

  pid(): number | null {
    return this.target?.engine.pid ?? null;
  }

  /** the engine host's holdReplies test hook, kept for the hosts that later loads start */
  async holdRepliesForTest(afterRound: number | null): Promise<void> {
    this.holdAfterRound = afterRound;
    await this.target?.engine.call('holdReplies', { afterRound });
  }

  setStatus(status: EngineState['status']): void {
    this.status = status;
    this.stateChanged.emit(this.state());
  }

  load(options: LoadOptions): Promise<EngineState> {
    return this.serial(async () => {
      await this.dropTarget();
      this.options = options;
      this.reloadPending = false;
      await this.open();
      return this.state();
    });
  }

  unload(): Promise<EngineState> {
    return this.serial(async () => {
      await this.dropTarget();
      this.options = null;
      this.reloadPending = false;
      this.setStatus('unloaded');
      return this.state();
    });
  }

  /** A session for this strategy (or chain), K/S, FR and drafting policy on the loaded target, reloading it after a crash. */
  sessionFor(spec: Omit<SessionRequest, 'threads'>): Promise<{ target: OpenedTarget; session: ActiveSession; fresh: boolean }> {
    return this.serial(async () => {
      if (!this.options) throw new PowerError('bad-input', 'no model is loaded: load one first (engine.load)');
      if (!this.target) await this.open();
      const target = this.target!;
      const { strategy, fallbacks = [], k, s, frVocab, pMin = 0, adaptiveK = false, projector } = spec;
      const key = `${strategyLabel(strategy, fallbacks)}/${k}/${s}/${frVocab ?? 'all'}/${pMin}/${adaptiveK}/${this.rememberReplies}`;
      // a session reads images only when opened with the projector, which text-only replies need
      // not load; one that has it serves text too, so a conversation that had an image keeps its
      // state for the text-only turns after it
      const serves = this.session?.key === key && (projector === undefined || this.session.projector === projector);
      if (serves) return { target, session: this.session!, fresh: false };
      if (this.session) {
        await target.engine.call('disposeSession', { sessionId: this.session.sessionId }).catch(() => {});
        this.session = null;
      }
      const threads = this.options.threads ?? 0; // 0: the engine's default (docs/cli.md "Threads")
      const storeFile = this.suffixStoreFile(this.options.modelId);
      const created = await createSession(target, {
        strategy,
        fallbacks,
        k,
        s,
        threads,
        frVocab,
        pMin,
        adaptiveK,
        ...(projector ? { projector } : {}),
        ...(storeFile && [strategy, ...fallbacks].includes('suffix') ? { suffixStoreFile: storeFile } : {}),
        ...(this.rememberReplies ? {} : { suffixStoreTokens: 0 }),
      });
      this.session = { ...created, key, strategy, projector: projector ?? null };
      return { target, session: this.session, fresh: true };
    });
  }

  /**
   * Remembering earlier replies on or off for the sessions opened from now on: the next reply
   * opens a session that follows it (the one before adds its last reply, made while it was on).
   */
  setRememberReplies(on: boolean): void {
    this.rememberReplies = on;
  }

  /** where the model's store of earlier replies is kept (null: in memory only) */
  suffixStoreFile(modelId: string): string | null {
    return this.suffixStoreDir ? join(this.suffixStoreDir, `${modelId}.bin`) : null;
  }

  /**
   * The loaded model's store in the engine, emptied first (memory and file) with `clear`: null
   * when the engine holds none (nothing loaded, or no `suffix` session on this load yet). Runs
   * in turn with loads and session changes, so the store it reads is the loaded model's.
   */
  suffixStore(clear: boolean): Promise<{ tokens: number | null; problem: string | null } | null> {
    return this.serial(async () => {
      if (!this.target || !this.session) return null;
      const store = await this.target.engine.call('suffixStore', { sessionId: this.session.sessionId, clear });
      return store.tokens === null ? null : store;
    });
  }

  /** Called when a call failed with engine-crashed: forget the dead host, reload on the next request. */
  crashed(message: string): void {
    if (!this.target) return;
    this.generation++;
    this.target = null;
    this.session = null;
    this.reloadPending = true;
    this.lastCrash = { message, at: new Date().toISOString() };
    this.restarts++;
    this.setStatus('unloaded');
  }

  async close(): Promise<void> {
    await this.serial(() => this.dropTarget());
  }

  private async open(): Promise<void> {
    const options = this.options!;
    const entry = this.library.get(options.modelId);
    const draft = options.draftMethod.draftId ? this.library.get(options.draftMethod.draftId) : null;
    if (draft && options.draftMethod.strategy === 'none') {
      throw new PowerError(
        'bad-input',
        "a draft needs a speculative strategy (draft-model, dflash, eagle3, dspark, or mtp for a Gemma 4 assistant or MTP sidecar), not 'none'",
      );
    }
    this.setStatus('loading');
    try {
      const target = await openTarget({
        path: entry.path,
        device: options.device,
        gpuLayers: options.gpuLayers,
        strategy: options.draftMethod.strategy,
        fallbacks: options.draftMethod.fallbacks,
        ...(draft ? { draftPath: draft.path } : {}),
        s: 7,
        ...(options.contextSize !== undefined ? { contextSize: options.contextSize } : {}),
        ...(options.flashAttn ? { flashAttn: options.flashAttn } : {}),
        verbose: this.engineOptions.verbose ?? false,
        engine: { ...(this.engineOptions.testHooks ? { testHooks: true } : {}) },
        onProgress: (role, progress) => this.loadProgress.emit({ modelId: role === 'target' ? entry.id : draft!.id, role, progress }),
        ...splitOf(options),
      });
      if (this.holdAfterRound !== null) await target.engine.call('holdReplies', { afterRound: this.holdAfterRound });
      const generation = ++this.generation;
      target.engine.onHostExit((error) => {
        if (this.generation === generation) this.crashed(error.message);
      });
      this.target = target;
      this.reloadPending = false;
      this.setStatus('ready');
    } catch (error) {
      this.setStatus('unloaded');
      throw error;
    }
  }

  private async dropTarget(): Promise<void> {
    const target = this.target;
    this.generation++;
    this.target = null;
    this.session = null;
    if (target) await target.engine.close();
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}
