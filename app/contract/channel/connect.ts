// The client end of a channel, generated from a description: every method becomes a call,
// every onX event a subscription, reference-counted so that however many listeners a name
// has, the server holds one subscription for it. What `checks` gives the client to check is
// checked here; a failure, from the server or from a check, is `toError` of its ApiError.
import type { ApiOf, ConcernSpec } from '../api/describe.js';
import { PowerError, type ApiError } from '../api/errors.js';
import type { ChannelChecks } from './checks.js';
import { describeIssues } from './issues.js';
import { eventSpec, methodSpec } from './lookup.js';
import type { ChannelPort } from './port.js';
import { ServerMessage, type ClientMessage } from './protocol.js';

export interface ConnectOptions {
  checks: ChannelChecks;
  /** a server message that breaks the protocol or the description (it is dropped) */
  onProtocolError?: (message: string) => void;
  /** what a failed call rejects with; `member` is the method's name (default: a PowerError) */
  toError?: (error: ApiError, concern: string, member: string) => unknown;
}

export interface ChannelConnection<D extends Record<string, ConcernSpec>> {
  api: ApiOf<D>;
  /** fails every pending and later call with `reason` (default: an 'internal' error) */
  close(reason?: unknown): void;
  /** resolves once the channel has closed, from either end */
  closed: Promise<void>;
}

interface Pending {
  result(value: unknown): void;
  error(error: ApiError): void;
  /** the channel closed with the call in flight */
  abandon(reason: unknown): void;
}

/** a client message before it is given its id */
type Outgoing = { concern: string; method: string; input: unknown } | { subscribe: string } | { unsubscribe: string };

const CLOSED: ApiError = { code: 'internal', message: 'the channel is closed' };

export function connectChannel<D extends Record<string, ConcernSpec>>(
  description: D,
  port: ChannelPort,
  options: ConnectOptions,
): ChannelConnection<D> {
  const checkInputs = options.checks.inputs === 'client';
  const checkOutputs = options.checks.outputs === 'client';
  const toError = options.toError ?? ((error: ApiError) => new PowerError(error.code, error.message));
  const protocolError = options.onProtocolError ?? ((m: string) => console.warn(`power channel: ${m}`));
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  let nextId = 1;
  let closed = false;
  let closedReason: unknown;
  let markClosed: () => void = () => {};
  const closedPromise = new Promise<void>((resolve) => (markClosed = resolve));

  const closedError = (concern: string, member: string): unknown => closedReason ?? toError(CLOSED, concern, member);

  function close(reason?: unknown): void {
    if (closed) return;
    closed = true;
    closedReason = reason;
    const abandoned = [...pending.values()];
    pending.clear();
    for (const call of abandoned) call.abandon(reason);
    markClosed();
  }
  port.onClose(close);
  port.onMessage(receive);

  function request(message: Outgoing, call: Pending): void {
    const id = nextId++;
    // before send: a port may answer before send returns
    pending.set(id, call);
    port.send({ id, ...message } satisfies ClientMessage);
  }

  function receive(raw: unknown): void {
    // whatever a closed channel still hears (a host on its way out) reaches no one
    if (closed) return;
    const parsed = ServerMessage.safeParse(raw);
    if (!parsed.success) return protocolError(`malformed server message: ${describeIssues(parsed.error)}`);
    const message = parsed.data;
    if ('event' in message) return deliver(message.event, message.payload);
    if (message.id === null) {
      if ('error' in message) protocolError(`the server refused a message: ${message.error.message}`);
      return;
    }
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if ('error' in message) call.error(message.error);
    else call.result(message.result);
  }

  function deliver(name: string, payload: unknown): void {
    const set = listeners.get(name);
    if (!set) return;
    let value = payload;
    if (checkOutputs) {
      const schema = eventSpec(description, name);
      if (!schema) return;
      const checked = schema.safeParse(payload);
      if (!checked.success) return protocolError(`${name} payload does not match the description: ${describeIssues(checked.error)}`);
      value = checked.data;
    }
    for (const listener of [...set]) listener(value);
  }

  function call(concern: string, method: string, input: unknown): Promise<unknown> {
    if (closed) return Promise.reject(closedError(concern, method));
    const what = `${concern}.${method}`;
    const spec = methodSpec(description, concern, method)!;
    let value: unknown = input ?? {};
    if (checkInputs) {
      const checked = spec.input.safeParse(value);
      if (!checked.success)
        return Promise.reject(toError({ code: 'bad-input', message: `${what}: ${describeIssues(checked.error)}` }, concern, method));
      value = checked.data;
    }
    return new Promise((resolve, reject) => {
      request(
        { concern, method, input: value },
        {
          result: (result) => {
            if (!checkOutputs) return resolve(result);
            const out = spec.output.safeParse(result);
            if (out.success) resolve(out.data);
            else
              reject(
                toError(
                  {
                    code: 'internal',
                    message: `${what} answered with a result that does not match the description: ${describeIssues(out.error)}`,
                  },
                  concern,
                  method,
                ),
              );
          },
          error: (error) => reject(toError(error, concern, method)),
          abandon: (reason) => reject(reason ?? toError(CLOSED, concern, method)),
        },
      );
    });
  }

  function subscribe(name: string, listener: (payload: unknown) => void): () => void {
    let set = listeners.get(name);
    if (!set) {
      set = new Set();
      listeners.set(name, set);
      if (!closed) {
        request(
          { subscribe: name },
          {
            result: () => {},
            error: (error) => protocolError(`cannot subscribe to ${name}: ${error.message}`),
            // closing is not the server's refusal: nothing to report
            abandon: () => {},
          },
        );
      }
    }
    const own = set;
    own.add(listener);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      own.delete(listener);
      if (own.size > 0 || listeners.get(name) !== own) return;
      listeners.delete(name);
      if (!closed) request({ unsubscribe: name }, { result: () => {}, error: () => {}, abandon: () => {} });
    };
  }

  const api: Record<string, Record<string, unknown>> = {};
  for (const [concern, spec] of Object.entries(description)) {
    const members: Record<string, unknown> = {};
    for (const method of Object.keys(spec.methods)) members[method] = (input: unknown) => call(concern, method, input);
    for (const event of Object.keys(spec.events))
      members[event] = (listener: (payload: unknown) => void) => subscribe(`${concern}.${event}`, listener);
    api[concern] = members;
  }

  return { api: api as ApiOf<D>, close, closed: closedPromise };
}
