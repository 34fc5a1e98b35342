// The client end of the PowerApi WebSocket protocol (ws-protocol.ts), generated from a
// description: every method becomes a call, every onX event a subscription. Browser-safe (no
// Node): it takes any WebSocket-like object (the browser's WebSocket, or `ws` in Node). Inputs
// are checked before they are sent; results and event payloads are checked against the
// description before anyone sees them.
import type { ApiOf, ConcernSpec } from '../api/describe.js';
import { PowerError, toApiError } from '../api/errors.js';
import { describeIssues, eventSpec, methodSpec, WsServerMessage } from './ws-protocol.js';

/** What the client needs of a WebSocket (the browser's and `ws`'s both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'open' | 'close' | 'error', listener: (event: unknown) => void): void;
}

const OPEN = 1;
const CLOSING = 2;

export interface ApiClient<D extends Record<string, ConcernSpec>> {
  api: ApiOf<D>;
  /** resolves when the socket is open (calls made earlier are queued until then) */
  ready: Promise<void>;
  /** resolves when the socket has closed (pending calls fail with code 'internal') */
  closed: Promise<void>;
  close(): void;
}

export interface ApiClientOptions {
  /** a server message that breaks the protocol or the description (it is dropped) */
  onProtocolError?: (message: string) => void;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: PowerError) => void;
  /** checks and shapes the result (null for subscribe/unsubscribe acknowledgements) */
  parse: ((value: unknown) => unknown) | null;
  what: string;
}

export function createApiClient<D extends Record<string, ConcernSpec>>(
  description: D,
  socket: WebSocketLike,
  options: ApiClientOptions = {},
): ApiClient<D> {
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const queue: string[] = [];
  let nextId = 1;
  let closedError: PowerError | null = null;
  const protocolError = options.onProtocolError ?? ((m: string) => console.warn(`power api: ${m}`));

  let markReady: () => void = () => {};
  let markClosed: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const closed = new Promise<void>((resolve) => (markClosed = resolve));

  const flush = (): void => {
    for (const data of queue.splice(0)) socket.send(data);
  };
  if (socket.readyState === OPEN) markReady();
  socket.addEventListener('open', () => {
    flush();
    markReady();
  });
  socket.addEventListener('close', () => {
    closedError = new PowerError('internal', 'the connection to Power closed');
    for (const call of pending.values()) call.reject(closedError);
    pending.clear();
    markClosed();
  });
  socket.addEventListener('message', (event) => onMessage(event.data));

  function send(message: object): void {
    const data = JSON.stringify(message);
    if (socket.readyState === OPEN) socket.send(data);
    else queue.push(data);
  }

  function request(message: Record<string, unknown>, parse: Pending['parse'], what: string): Promise<unknown> {
    if (closedError || socket.readyState >= CLOSING) return Promise.reject(closedError ?? new PowerError('internal', 'the connection to Power is closed'));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, parse, what });
      send({ id, ...message });
    });
  }

  function onMessage(data: unknown): void {
    let raw: unknown;
    try {
      raw = JSON.parse(typeof data === 'string' ? data : String(data));
    } catch {
      protocolError('the server sent a message that is not JSON');
      return;
    }
    const parsed = WsServerMessage.safeParse(raw);
    if (!parsed.success) {
      protocolError(`malformed server message: ${describeIssues(parsed.error)}`);
      return;
    }
    const message = parsed.data;
    if ('event' in message) {
      const schema = eventSpec(description, message.event);
      const set = listeners.get(message.event);
      if (!schema || !set) return;
      const payload = schema.safeParse(message.payload);
      if (!payload.success) {
        protocolError(`${message.event} payload does not match the description: ${describeIssues(payload.error)}`);
        return;
      }
      for (const listener of [...set]) listener(payload.data);
      return;
    }
    if (message.id === null) {
      if ('error' in message) protocolError(`the server refused a message: ${message.error.message}`);
      return;
    }
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if ('error' in message) {
      call.reject(new PowerError(message.error.code, message.error.message));
      return;
    }
    if (!call.parse) {
      call.resolve(message.result);
      return;
    }
    try {
      call.resolve(call.parse(message.result));
    } catch (error) {
      call.reject(new PowerError('internal', `${call.what} answered with ${toApiError(error).message}`));
    }
  }

  function call(concern: string, method: string, input: unknown): Promise<unknown> {
    const spec = methodSpec(description, concern, method)!;
    const checked = spec.input.safeParse(input ?? {});
    if (!checked.success) return Promise.reject(new PowerError('bad-input', `${concern}.${method}: ${describeIssues(checked.error)}`));
    return request(
      { concern, method, input: input ?? {} },
      (result) => {
        const out = spec.output.safeParse(result);
        if (!out.success) throw new Error(`a result that does not match the description: ${describeIssues(out.error)}`);
        return out.data;
      },
      `${concern}.${method}`,
    );
  }

  function subscribe(name: string, listener: (payload: unknown) => void): () => void {
    let set = listeners.get(name);
    if (!set) {
      set = new Set();
      listeners.set(name, set);
      request({ subscribe: name }, null, name).catch((error: PowerError) => protocolError(`cannot subscribe to ${name}: ${error.message}`));
    }
    set.add(listener);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      set.delete(listener);
      if (set.size === 0 && listeners.get(name) === set) {
        listeners.delete(name);
        if (!closedError) request({ unsubscribe: name }, null, name).catch(() => {});
      }
    };
  }

  const api: Record<string, Record<string, unknown>> = {};
  for (const [concern, spec] of Object.entries(description)) {
    const members: Record<string, unknown> = {};
    for (const method of Object.keys(spec.methods)) members[method] = (input: unknown) => call(concern, method, input);
    for (const event of Object.keys(spec.events)) members[event] = (listener: (payload: unknown) => void) => subscribe(`${concern}.${event}`, listener);
    api[concern] = members;
  }

  return {
    api: api as ApiOf<D>,
    ready,
    closed,
    close: () => socket.close(1000, 'done'),
  };
}
