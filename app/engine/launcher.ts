// How the engine host process is started. `power serve` and the CLI fork it with
// child_process.fork; the Electron shell supplies a launcher built on utilityProcess
// (main/engine-launcher.ts). EngineClient only sees this small interface, and the host
// side has its own one-file adapter for the difference (host-channel.ts).
import { fork } from 'node:child_process';

export interface EngineHostSpec {
  /** the engine-host entry (app/engine-host/host.js, or host.ts under tsx) */
  hostFile: string;
  env: NodeJS.ProcessEnv;
}

/** A started engine host, whichever way it was started. */
export interface EngineHostProcess {
  readonly pid: number | null;
  /** messages go by structured clone (typed arrays stay typed arrays) */
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /** once, whatever the reason; `signal` is null where the launcher cannot tell (utilityProcess) */
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  /** the host's stderr (llama.cpp's log, a native abort's last words) */
  readonly stderr: NodeJS.ReadableStream | null;
  /** asks the host to exit on its own (it frees its native objects first) */
  disconnect(): void;
  /** ends it now (the fallback when it does not exit in time) */
  kill(): void;
}

export type EngineLauncher = (spec: EngineHostSpec) => EngineHostProcess;

/** child_process.fork: the launcher of every Node front door. */
export const forkLauncher: EngineLauncher = ({ hostFile, env }) => {
  const child = fork(hostFile, [], {
    serialization: 'advanced', // typed arrays cross as typed arrays
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env,
    // its own process group: a terminal's Ctrl-C goes to the foreground group, and the host
    // must not die of it; the main process cancels or stops it instead (on Windows, where
    // detached means a new console, the host ignores SIGINT itself)
    detached: process.platform !== 'win32',
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  // a send to a host that has just died fails asynchronously (EPIPE) as an 'error' on the child;
  // its 'exit' fails every pending call, so the error itself has nothing left to say
  child.on('error', () => {});
  return {
    get pid() {
      return child.pid ?? null;
    },
    send: (message) => {
      // a send racing the host's exit would throw ERR_IPC_CHANNEL_CLOSED; the exit fails the call
      if (!exited && child.connected) child.send(message as object);
    },
    onMessage: (listener) => void child.on('message', listener),
    onExit: (listener) => void child.once('exit', listener),
    stderr: child.stderr,
    disconnect: () => {
      if (child.connected) child.disconnect();
    },
    kill: () => void child.kill('SIGKILL'),
  };
};

let defaultLauncher: EngineLauncher = forkLauncher;

/**
 * The launcher EngineClient.start uses when its options name none. The Electron shell sets it
 * once at start-up, so every engine the service starts (loads, the device report) is a utility
 * process without each call site having to carry the launcher along.
 */
export function setDefaultEngineLauncher(launcher: EngineLauncher): void {
  defaultLauncher = launcher;
}

export function getDefaultEngineLauncher(): EngineLauncher {
  return defaultLauncher;
}
