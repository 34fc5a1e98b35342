// The engine host's end of its link to the main process, the one place that knows the two ways
// the host can be started: under child_process.fork it talks through process.send and
// process.on('message'), and the parent going away is 'disconnect'; in an Electron utility
// process it talks through process.parentPort (messages arrive as { data }), and since a
// parent port has no disconnect event, the launcher posts PARENT_GONE instead. Either way it is
// the port the host's channel server (app/contract/channel) runs on.
import type { ChannelPort } from '../contract/channel/port.js';

/** What a utility-process launcher posts to ask the host to exit (never a channel message). */
export const PARENT_GONE = Object.freeze({ kind: 'power:parent-gone' });

export function isParentGone(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === PARENT_GONE.kind;
}

/** Electron's process.parentPort, as much of it as the host uses. */
export interface ParentPortLike {
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  postMessage(message: unknown): void;
}

type HostProcess = Pick<NodeJS.Process, 'on' | 'send'> & { parentPort?: ParentPortLike };

export interface HostChannel extends ChannelPort {
  kind: 'utility-process' | 'fork';
  /** the main process went away or asked the host to stop */
  onClose(listener: () => void): void;
}

export function connectToParent(proc: HostProcess = process as HostProcess): HostChannel {
  const port = proc.parentPort;
  if (port) {
    const gone: (() => void)[] = [];
    const listeners: ((message: unknown) => void)[] = [];
    port.on('message', ({ data }) => {
      if (isParentGone(data)) for (const l of gone) l();
      else for (const l of listeners) l(data);
    });
    return {
      kind: 'utility-process',
      send: (message) => port.postMessage(message),
      onMessage: (listener) => void listeners.push(listener),
      onClose: (listener) => void gone.push(listener),
    };
  }
  if (!proc.send) throw new Error('the engine host must be started by Power (no IPC channel to a parent process)');
  return {
    kind: 'fork',
    send: (message) => void proc.send?.(message as object),
    onMessage: (listener) => void proc.on('message', listener),
    onClose: (listener) => void proc.on('disconnect', () => listener()),
  };
}
