// The server end of a channel, for any description: it routes each call to the matching
// method of an implementation and each subscription to its event, checks what `checks` gives
// it to check, and answers every failure as { id, error }, so a bad message never takes the
// server down. One subscription per event name and port; all of them end with the port.
import type { z } from 'zod';

import type { ApiOf, ConcernSpec } from '../api/describe.js';
import { toApiError, type ApiError } from '../api/errors.js';
import type { ChannelChecks } from './checks.js';
import { describeIssues } from './issues.js';
import { eventSpec, methodSpec } from './lookup.js';
import type { ChannelPort } from './port.js';
import { ClientMessage, refusal, type ServerMessage } from './protocol.js';

/**
 * What a server implements: a method gets its input as the client or the server left it
 * (parsed, defaults filled in) and may answer at once or with a Promise; an event takes a
 * listener and returns the function that removes it.
 */
export type ImplementationOf<D extends Record<string, ConcernSpec>> = {
  [C in keyof D]: {
    [M in keyof D[C]['methods']]: (
      input: z.output<D[C]['methods'][M]['input']>,
    ) => Promise<z.input<D[C]['methods'][M]['output']>> | z.input<D[C]['methods'][M]['output']>;
  } & {
    [E in keyof D[C]['events']]: (listener: (payload: z.input<D[C]['events'][E]>) => void) => () => void;
  };
};

export interface ServeOptions {
  checks: ChannelChecks;
  /** an output or payload that breaks the description, worth a line in the server's log */
  log?: (line: string) => void;
}

export interface ChannelServer {
  /** ends every subscription and answers nothing more (what the port closing does) */
  close(): void;
  /** how many subscriptions are live (tests: nothing leaks once a client goes) */
  subscriptionCount(): number;
}

type AnyImplementation = Record<string, Record<string, unknown>>;
type Method = (input: unknown) => unknown;
type Event = (listener: (payload: unknown) => void) => () => void;

export function serveChannel<D extends Record<string, ConcernSpec>>(
  description: D,
  // the service implements ApiOf<D> itself, which fits for any concrete D
  implementation: ImplementationOf<D> | ApiOf<D>,
  port: ChannelPort,
  options: ServeOptions,
): ChannelServer {
  const impl = implementation as unknown as AnyImplementation;
  const log = options.log ?? (() => {});
  const checkInputs = options.checks.inputs === 'server';
  const checkOutputs = options.checks.outputs === 'server';
  const subscriptions = new Map<string, () => void>();
  let open = true;

  const send = (message: ServerMessage): void => {
    if (open) port.send(message);
  };
  const fail = (id: number, error: ApiError): void => send({ id, error });

  function close(): void {
    if (!open) return;
    open = false;
    for (const stop of subscriptions.values()) stop();
    subscriptions.clear();
  }
  port.onClose(close);

  port.onMessage((raw) => {
    if (!open) return;
    const parsed = ClientMessage.safeParse(raw);
    if (!parsed.success) {
      send(refusal(raw, { code: 'bad-input', message: `malformed message: ${describeIssues(parsed.error)}` }));
      return;
    }
    const message = parsed.data;
    if ('subscribe' in message) subscribe(message.id, message.subscribe);
    else if ('unsubscribe' in message) {
      subscriptions.get(message.unsubscribe)?.();
      subscriptions.delete(message.unsubscribe);
      send({ id: message.id, result: null });
    } else void call(message.id, message.concern, message.method, message.input);
  });

  function subscribe(id: number, name: string): void {
    const schema = eventSpec(description, name);
    if (!schema) return fail(id, { code: 'not-found', message: `no event ${name}` });
    if (!subscriptions.has(name)) {
      const [concern, event] = name.split('.') as [string, string];
      const deliver = (payload: unknown): void => {
        if (!checkOutputs) return send({ event: name, payload });
        const checked = schema.safeParse(payload);
        if (checked.success) send({ event: name, payload: checked.data });
        else log(`dropped a ${name} payload that does not match the description: ${describeIssues(checked.error)}`);
      };
      try {
        subscriptions.set(name, (impl[concern]![event] as Event).call(impl[concern], deliver));
      } catch (error) {
        return fail(id, toApiError(error));
      }
    }
    send({ id, result: null });
  }

  async function call(id: number, concern: string, method: string, input: unknown): Promise<void> {
    const what = `${concern}.${method}`;
    const spec = methodSpec(description, concern, method);
    if (!spec) return fail(id, { code: 'not-found', message: `no method ${what}` });
    let value = input;
    if (checkInputs) {
      const checked = spec.input.safeParse(input);
      if (!checked.success) return fail(id, { code: 'bad-input', message: `${what}: ${describeIssues(checked.error)}` });
      value = checked.data;
    }
    let result: unknown;
    try {
      result = await (impl[concern]![method] as Method).call(impl[concern], value);
    } catch (error) {
      return fail(id, toApiError(error));
    }
    if (checkOutputs) {
      const out = spec.output.safeParse(result);
      if (!out.success) {
        log(`${what} answered with a result that does not match the description: ${describeIssues(out.error)}`);
        return fail(id, { code: 'internal', message: `${what} produced an invalid result` });
      }
      result = out.data;
    }
    send({ id, result });
  }

  return { close, subscriptionCount: () => subscriptions.size };
}
