// The main-process side of the engine: starts the engine host, calls it, routes its events,
// and turns a crash of the host into an EngineCrashedError for every pending call instead of
// taking the caller down with it.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type RoundRecord } from '../../contract/engine-types.js';
import { EngineMessage, engineMethods, expandRoundBatch, type EngineMethod, type EngineParams, type EngineResult } from '../../engine/protocol.js';
import { getDefaultEngineLauncher, type EngineHostProcess, type EngineLauncher } from './launcher.js';

export class EngineCrashedError extends Error {
  constructor(
    message: string,
    readonly exit: { code: number | null; signal: NodeJS.Signals | null },
  ) {
    super(message);
    this.name = 'EngineCrashedError';
  }
}

/** An error the engine reported for one call (the engine itself is fine). */
export class EngineCallError extends Error {
  constructor(
    readonly method: EngineMethod,
    message: string,
  ) {
    super(message);
    this.name = 'EngineCallError';
  }
}

interface Pending {
  method: EngineMethod;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export interface EngineOptions {
  /** addon flavour to load (build/addon-<flavour>) */
  flavour?: string;
  /** echo llama.cpp's log to this process's stderr */
  verbose?: boolean;
  /** enable test-only hooks in the engine (failure injection) */
  testHooks?: boolean;
  /** how the host process starts (default: getDefaultEngineLauncher(), child_process.fork unless the shell set one) */
  launcher?: EngineLauncher;
}

const STDERR_TAIL_LINES = 20;

export class EngineClient {
  private readonly pending = new Map<number, Pending>();
  private readonly roundListeners = new Map<string, (round: RoundRecord) => void>();
  private readonly progressListeners = new Map<string, (progress: number) => void>();
  private readonly stderrTail: string[] = [];
  private nextId = 1;
  private exited: EngineCrashedError | null = null;
  private closing = false;

  private readonly exitListeners: (() => void)[] = [];

  private constructor(
    private readonly child: EngineHostProcess,
    private readonly echoLog: boolean,
  ) {
    child.onMessage((message) => this.onMessage(message));
    child.onExit((code, signal) => {
      this.onExit(code, signal);
      for (const listener of this.exitListeners.splice(0)) listener();
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.onStderr(chunk));
  }

  /** Starts an engine host process. */
  static start(options: EngineOptions = {}): EngineClient {
    const here = fileURLToPath(import.meta.url);
    const hostFile = new URL(`../../engine/host${extname(here)}`, import.meta.url);
    const env: NodeJS.ProcessEnv = { ...process.env, POWER_ADDON_FLAVOUR: options.flavour ?? 'cpu' };
    if (options.verbose) env.POWER_LLAMA_LOG = '1';
    env.POWER_TEST_HOOKS = options.testHooks ? '1' : '0';
    const launch = options.launcher ?? getDefaultEngineLauncher();
    return new EngineClient(
      launch({ hostFile: fileURLToPath(hostFile), env }),
      options.verbose === true || Boolean(process.env.POWER_LLAMA_LOG),
    );
  }

  /** Calls one engine method; params and result are validated against the protocol. */
  call<M extends EngineMethod>(method: M, params: EngineParams<M>): Promise<EngineResult<M>> {
    if (this.exited) return Promise.reject(this.exited);
    const checked = engineMethods[method].params.parse(params);
    const id = this.nextId++;
    return new Promise<EngineResult<M>>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ kind: 'request', id, method, params: checked });
    });
  }

  /** Receives the rounds of generation request `requestId` until the returned function is called. */
  onRound(requestId: string, listener: (round: RoundRecord) => void): () => void {
    this.roundListeners.set(requestId, listener);
    return () => this.roundListeners.delete(requestId);
  }

  onProgress(requestId: string, listener: (progress: number) => void): () => void {
    this.progressListeners.set(requestId, listener);
    return () => this.progressListeners.delete(requestId);
  }

  /** The host's process id (supervision, the crash test). */
  get pid(): number | null {
    return this.child.pid;
  }

  /** Called once when the host exits for any reason other than close(). */
  onHostExit(listener: (error: EngineCrashedError) => void): void {
    this.exitListeners.push(() => {
      if (!this.closing && this.exited) listener(this.exited);
    });
  }

  /** Whether the host died; the error says how. */
  get crash(): EngineCrashedError | null {
    return this.closing ? null : this.exited;
  }

  /** Stops the host (it frees every native object on exit). */
  async close(): Promise<void> {
    if (this.exited) return;
    this.closing = true;
    const gone = new Promise<void>((resolve) => this.exitListeners.push(resolve));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill(), 5000);
    await gone;
    clearTimeout(timer);
  }

  private onMessage(raw: unknown): void {
    const parsed = EngineMessage.safeParse(raw);
    if (!parsed.success) {
      this.failAll(new EngineCrashedError(`engine sent a malformed message: ${parsed.error.message}`, { code: null, signal: null }));
      return;
    }
    const message = parsed.data;
    if (message.kind === 'event') {
      if (message.event === 'rounds') {
        const listener = this.roundListeners.get(message.requestId);
        if (listener) for (const round of expandRoundBatch(message.batch)) listener(round);
      } else this.progressListeners.get(message.requestId)?.(message.progress);
      return;
    }
    const call = this.pending.get(message.id);
    if (!call) return;
    this.pending.delete(message.id);
    if (!message.ok) {
      call.reject(new EngineCallError(call.method, message.error));
      return;
    }
    const result = engineMethods[call.method].result.safeParse(message.value);
    if (result.success) call.resolve(result.data);
    else call.reject(new EngineCallError(call.method, `engine answered ${call.method} with ${result.error.message}`));
  }

  private onStderr(chunk: string): void {
    if (this.echoLog) process.stderr.write(chunk);
    for (const line of chunk.split('\n')) {
      if (line.trim() === '') continue;
      this.stderrTail.push(line.trim());
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    const said = this.stderrTail.filter((l) => !l.startsWith('WARNING')).slice(-3).join(' | ');
    const error = new EngineCrashedError(`the engine process stopped (${how})${said ? `: ${said}` : ''}`, { code, signal });
    this.exited = error;
    this.failAll(error);
  }

  private failAll(error: Error): void {
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}
