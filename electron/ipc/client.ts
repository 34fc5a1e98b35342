// The renderer end of the PowerApi IPC protocol (ipc-protocol.ts), generated from a
// description; the preload bundles it and hands the result to contextBridge as `window.power`.
// It takes a minimal port (the preload wraps ipcRenderer in one), so the page never sees
// ipcRenderer itself and the whole thing runs under plain Node in tests. Inputs are checked
// before they leave, results and payloads against the description before anyone sees them.
import type { ApiOf, ConcernSpec } from '../../contract/api/describe.js';
import { PowerError, toApiError } from '../../contract/api/errors.js';
import { apiShape, IpcReply, SUBSCRIBE_CHANNEL, UNSUBSCRIBE_CHANNEL } from './protocol.js';
import { describeIssues, eventSpec, methodSpec } from '../../contract/transport/ws-protocol.js';

/** What the bridge needs of ipcRenderer (the preload adapts it; tests connect it to a dispatcher). */
export interface IpcRendererPort {
  invoke(channel: string, arg: unknown): Promise<unknown>;
  /** listens on a channel; returns the function that stops listening */
  on(channel: string, listener: (payload: unknown) => void): () => void;
}

export interface IpcClientOptions {
  /** a main-process message that breaks the protocol or the description (it is dropped) */
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
  const protocolError = options.onProtocolError ?? ((m: string) => console.warn(`power ipc: ${m}`));
  const shape = apiShape(description);
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const detach = new Map<string, () => void>();

  async function invoke(channel: string, arg: unknown, what: string): Promise<unknown> {
    const raw = await port.invoke(channel, arg);
    const reply = IpcReply.safeParse(raw);
    if (!reply.success) throw new PowerError('internal', `${what}: malformed reply (${describeIssues(reply.error)})`);
    if (!reply.data.ok) throw new PowerError(reply.data.error.code, reply.data.error.message);
    return reply.data.value;
  }

  async function call(concern: string, method: string, channel: string, input: unknown): Promise<unknown> {
    const spec = methodSpec(description, concern, method)!;
    const checked = spec.input.safeParse(input ?? {});
    if (!checked.success) throw new PowerError('bad-input', `${concern}.${method}: ${describeIssues(checked.error)}`);
    const value = await invoke(channel, input ?? {}, `${concern}.${method}`);
    const out = spec.output.safeParse(value);
    if (!out.success) throw new PowerError('internal', `${concern}.${method} answered with a result that does not match the description: ${describeIssues(out.error)}`);
    return out.data;
  }

  function subscribe(name: string, channel: string, listener: (payload: unknown) => void): () => void {
    let set = listeners.get(name);
    if (!set) {
      const schema = eventSpec(description, name)!;
      const fresh = new Set<(payload: unknown) => void>();
      set = fresh;
      listeners.set(name, fresh);
      detach.set(
        name,
        port.on(channel, (payload) => {
          const checked = schema.safeParse(payload);
          if (!checked.success) {
            protocolError(`${name} payload does not match the description: ${describeIssues(checked.error)}`);
            return;
          }
          for (const l of [...fresh]) l(checked.data);
        }),
      );
      invoke(SUBSCRIBE_CHANNEL, name, name).catch((error: Error) => protocolError(`cannot subscribe to ${name}: ${error.message}`));
    }
    const own = set;
    own.add(listener);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      own.delete(listener);
      if (own.size === 0 && listeners.get(name) === own) {
        listeners.delete(name);
        detach.get(name)?.();
        detach.delete(name);
        invoke(UNSUBSCRIBE_CHANNEL, name, name).catch(() => {});
      }
    };
  }

  const api: Record<string, Record<string, unknown>> = {};
  for (const { concern, method, channel } of shape.calls) {
    api[concern] ??= {};
    api[concern][method] = options.errorsAsData
      ? (input: unknown) => call(concern, method, channel, input).catch((error: unknown) => Promise.reject(toApiError(error)))
      : (input: unknown) => call(concern, method, channel, input);
  }
  for (const { name, channel } of shape.events) {
    const [concern, event] = name.split('.') as [string, string];
    api[concern] ??= {};
    api[concern][event] = (listener: (payload: unknown) => void) => subscribe(name, channel, listener);
  }
  return api as ApiOf<D>;
}
