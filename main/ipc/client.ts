// The renderer end of PowerApi over Electron IPC: connectChannel over a minimal port (the
// preload wraps ipcRenderer in one, so the page never sees ipcRenderer itself and this runs
// under plain Node in tests). The main process checks inputs, outputs and payloads
// (CHECKED_BY_SERVER); a page checking them again would only trust itself.
import type { ApiOf, ConcernSpec } from '../../app/contract/api/describe.js';
import { CHECKED_BY_SERVER } from '../../app/contract/channel/checks.js';
import { connectChannel } from '../../app/contract/channel/connect.js';

/** What the client needs of ipcRenderer on POWER_CHANNEL (the preload adapts it; tests connect it to a dispatcher). */
export interface IpcRendererPort {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
}

export interface IpcClientOptions {
  /** a main-process message that breaks the protocol (it is dropped) */
  onProtocolError?: (message: string) => void;
  /**
   * Reject with plain `{ code, message }` objects instead of PowerError. The preload sets it:
   * contextBridge copies an Error with its message only, so the code would not reach the page;
   * a plain object crosses whole and `toApiError` reads it.
   */
  errorsAsData?: boolean;
}

export function createIpcClient<D extends Record<string, ConcernSpec>>(
  description: D,
  port: IpcRendererPort,
  options: IpcClientOptions = {},
): ApiOf<D> {
  const connection = connectChannel(
    description,
    // a page's IPC lasts as long as the page: nothing to hear of a close
    { send: (message) => port.send(message), onMessage: (listener) => port.onMessage(listener), onClose: () => {} },
    {
      checks: CHECKED_BY_SERVER,
      onProtocolError: options.onProtocolError ?? ((m) => console.warn(`power ipc: ${m}`)),
      ...(options.errorsAsData ? { toError: (error) => ({ code: error.code, message: error.message }) } : {}),
    },
  );
  return connection.api;
}
