// The main-process side of the engine: starts the engine host and connects to engineApi over
// its process channel (connectChannel, checking the params it sends and everything the host
// answers: ENGINE_CHECKS), routes its events by request id, and turns a crash of the host into
// an EngineCrashedError for every pending call instead of taking the caller down with it.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { PowerError, type ApiErrorCode } from '../contract/api/errors.js';
import { connectChannel, type ChannelConnection } from '../contract/channel/connect.js';
import { type RoundRecord } from '../contract/engine-types.js';
import {
  engineApi,
  ENGINE_CHECKS,
  expandRoundBatch,
  type EngineApi,
  type EngineMethod,
  type EngineParams,
  type EngineResult,
} from './protocol.js';
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

/** An error the engine reported for one call (the engine itself is fine), with the code it was thrown with ('internal' for a plain Error). */
export class EngineCallError extends PowerError {
  constructor(
    readonly method: EngineMethod,
    message: string,
    code: ApiErrorCode = 'internal',
  ) {
    super(code, message);
    this.name = 'EngineCallError';
  }
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

/**
 * Windows has no signals: a process that a CPU exception kills ends with the exception's NTSTATUS
 * as its exit code. These are the ones that mean what SIGILL, SIGSEGV and SIGBUS mean on Linux.
 */
const WINDOWS_FAULTS = new Map<number, { status: string; like: NodeJS.Signals }>([
  [0xc000001d, { status: 'STATUS_ILLEGAL_INSTRUCTION', like: 'SIGILL' }],
  [0xc0000005, { status: 'STATUS_ACCESS_VIOLATION', like: 'SIGSEGV' }],
  // a page of a mapped file could not be read (the model's drive went away): Linux's SIGBUS
  [0xc0000006, { status: 'STATUS_IN_PAGE_ERROR', like: 'SIGBUS' }],
]);

/** the Windows exception an exit code is (Node may hand the code over signed) */
function windowsFault(code: number | null) {
  return code === null ? undefined : WINDOWS_FAULTS.get(code >>> 0);
}

/** The signal a host's end amounts to: its own on Linux, the one a Windows exception code means. */
export function faultOf(code: number | null, signal: NodeJS.Signals | null): NodeJS.Signals | null {
  return signal ?? windowsFault(code)?.like ?? null;
}

/** How the host ended, in words: a signal, a Windows exception by its name, or an exit code. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `signal ${signal}`;
  const fault = windowsFault(code);
  return fault ? `exit code 0x${(code! >>> 0).toString(16).toUpperCase()}, ${fault.status}` : `exit code ${code}`;
}

/** What the host was doing when it died, where that tells a broken build from a broken request. */
export type CrashStage = 'loading a model' | 'at its first decode' | null;

/**
 * What a user can do about a host that died of a signal a build for another CPU (or kernels the
 * CPU refuses) dies of: SIGILL at any time, SIGSEGV or SIGBUS while loading or at the first
 * decode. Names the flavour that died and the way around it; null for any other end.
 */
export function crashAdvice(flavour: string, signal: NodeJS.Signals | null, stage: CrashStage): string | null {
  const fault = signal === 'SIGILL' || ((signal === 'SIGSEGV' || signal === 'SIGBUS') && stage !== null);
  if (!fault) return null;
  const what =
    signal === 'SIGILL'
      ? `the ${flavour} flavour's llama.cpp ran an instruction this CPU does not execute${stage ? ` (${stage})` : ''}`
      : `the ${flavour} flavour's llama.cpp crashed ${stage === 'loading a model' ? 'while loading a model' : stage}`;
  const other =
    flavour === 'cpu-prebuilt' ? 'POWER_FLAVOUR=cpu (llama.cpp built here)' : "POWER_FLAVOUR=cpu-prebuilt (llama.cpp's prebuilt libraries)";
  return `${what}; if every model does this, try ${other}, or rebuild the engine for this CPU with npm run build:native`;
}
/** what ggml-rpc aborts with when a server it uses fails (ggml-rpc.cpp, RPC_STATUS_ASSERT) */
const RPC_LOST = /Remote RPC server crashed or returned malformed response|Failed to connect to .*:\d+/;

export class EngineClient {
  private readonly channel: ChannelConnection<EngineApi>;
  private readonly roundListeners = new Map<string, (round: RoundRecord) => void>();
  private readonly progressListeners = new Map<string, (progress: number) => void>();
  private readonly stderrTail: string[] = [];
  private exited: EngineCrashedError | null = null;
  /** what the host sent that broke the protocol (it is stopped for it) */
  private broken: string | null = null;
  private closing = false;

  private readonly exitListeners: (() => void)[] = [];
  /** calls in flight, by method, and whether a generation has finished (crashAdvice's stage) */
  private readonly inFlight = new Map<EngineMethod, number>();
  private decoded = false;

  private constructor(
    private readonly child: EngineHostProcess,
    private readonly echoLog: boolean,
    readonly flavour: string,
  ) {
    this.channel = connectChannel(
      engineApi,
      // the host's exit closes the channel, with the crash as the reason (onExit)
      { send: (message) => child.send(message), onMessage: (listener) => child.onMessage(listener), onClose: () => {} },
      {
        checks: ENGINE_CHECKS,
        toError: (error, _concern, method) => new EngineCallError(method as EngineMethod, error.message, error.code),
        onProtocolError: (message) => this.onBrokenProtocol(message),
      },
    );
    this.channel.api.engine.onRounds(({ requestId, batch }) => {
      const listener = this.roundListeners.get(requestId);
      if (listener) for (const round of expandRoundBatch(batch)) listener(round);
    });
    this.channel.api.engine.onProgress(({ requestId, progress }) => this.progressListeners.get(requestId)?.(progress));
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
    const hostFile = new URL(`../engine-host/host${extname(here)}`, import.meta.url);
    const env: NodeJS.ProcessEnv = { ...process.env, POWER_ADDON_FLAVOUR: options.flavour ?? 'cpu' };
    if (options.verbose) env.POWER_LLAMA_LOG = '1';
    env.POWER_TEST_HOOKS = options.testHooks ? '1' : '0';
    const launch = options.launcher ?? getDefaultEngineLauncher();
    return new EngineClient(
      launch({ hostFile: fileURLToPath(hostFile), env }),
      options.verbose === true || Boolean(process.env.POWER_LLAMA_LOG),
      env.POWER_ADDON_FLAVOUR!,
    );
  }

  /** Calls one engine method; params and result are validated against engineApi. */
  async call<M extends EngineMethod>(method: M, params: EngineParams<M>): Promise<EngineResult<M>> {
    const invoke = this.channel.api.engine[method] as unknown as (input: EngineParams<M>) => Promise<EngineResult<M>>;
    this.inFlight.set(method, (this.inFlight.get(method) ?? 0) + 1);
    try {
      const result = await invoke(params);
      if (method === 'generate') this.decoded = true;
      return result;
    } finally {
      this.inFlight.set(method, this.inFlight.get(method)! - 1);
    }
  }

  private crashStage(): CrashStage {
    if (this.inFlight.get('loadModel')) return 'loading a model';
    if (this.inFlight.get('generate') && !this.decoded) return 'at its first decode';
    return null;
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

  /** A host that breaks the protocol cannot be trusted with another call: it counts as a crash. */
  private onBrokenProtocol(message: string): void {
    if (this.broken || this.exited) return;
    this.broken = `engine sent a malformed message: ${message}`;
    this.channel.close(new EngineCrashedError(this.broken, { code: null, signal: null }));
    this.child.kill();
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
    const how = describeExit(code, signal);
    const said =
      this.broken ??
      this.stderrTail
        .filter((l) => !l.startsWith('WARNING'))
        .slice(-3)
        .join(' | ');
    // ggml-rpc aborts the host when a server it uses goes away mid-request (RPC_STATUS_ASSERT)
    const remote =
      !this.broken && this.stderrTail.some((l) => RPC_LOST.test(l))
        ? 'a remote machine (RPC server) went away or answered malformed data: '
        : '';
    const advice = this.broken ? null : crashAdvice(this.flavour, faultOf(code, signal), this.crashStage());
    this.exited = new EngineCrashedError(
      `the engine process stopped (${how})${advice ? `: ${advice}` : ''}${said ? `: ${remote}${said}` : ''}`,
      { code, signal },
    );
    this.channel.close(this.exited);
  }
}
