// The server end of the PowerApi WebSocket protocol (contract/transport/ws-protocol.ts), generated
// from a description: it routes calls to the matching method of an implementation, checks
// every input, output and event payload against the description, and turns every failure into
// an { id, error } reply, so a bad message never takes the server down.
import type { WebSocket } from 'ws';

import type { ApiOf, ConcernSpec } from '../../contract/api/describe.js';
import { toApiError, type ApiError } from '../../contract/api/errors.js';
import { describeIssues, eventSpec, methodSpec, WsClientMessage, type WsServerMessage } from '../../contract/transport/ws-protocol.js';

type AnyApi = Record<string, Record<string, unknown>>;
type Method = (input: unknown) => Promise<unknown>;
type Event = (listener: (payload: unknown) => void) => () => void;

export interface WsTransportOptions {
  /** a problem worth a line in the server's log (an output or payload that breaks the description) */
  log?: (line: string) => void;
}

/** Serves `api` (shaped by `description`) on one connected socket until it closes. */
export function serveApiOnSocket<D extends Record<string, ConcernSpec>>(
  description: D,
  api: ApiOf<D>,
  socket: WebSocket,
  options: WsTransportOptions = {},
): void {
  const impl = api as unknown as AnyApi;
  const log = options.log ?? (() => {});
  const subscriptions = new Map<string, () => void>();
  let open = true;

  const send = (message: WsServerMessage): void => {
    if (open && socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const fail = (id: number | null, error: ApiError): void => send({ id, error });

  // a client's fault (a message over the size limit, invalid UTF-8, a bad frame, a reset) comes
  // as an 'error' on its socket; ws closes that connection itself (1009, 1007, 1002, …). Without
  // a listener Node would end the whole server
  socket.on('error', (error: Error & { code?: string }) => {
    log(`ws: closing a connection: ${error.code ? `${error.code}: ` : ''}${error.message}`);
  });

  socket.on('close', () => {
    open = false;
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
  });

  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      fail(null, { code: 'bad-input', message: 'binary messages are not part of the protocol; send JSON text' });
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      fail(null, { code: 'bad-input', message: 'the message is not JSON' });
      return;
    }
    const parsed = WsClientMessage.safeParse(raw);
    if (!parsed.success) {
      const id = typeof (raw as { id?: unknown })?.id === 'number' ? (raw as { id: number }).id : null;
      fail(id, { code: 'bad-input', message: `malformed message: ${describeIssues(parsed.error)}` });
      return;
    }
    const message = parsed.data;
    if ('subscribe' in message) return subscribe(message.id, message.subscribe);
    if ('unsubscribe' in message) {
      subscriptions.get(message.unsubscribe)?.();
      subscriptions.delete(message.unsubscribe);
      send({ id: message.id, result: null });
      return;
    }
    void call(message.id, message.concern, message.method, message.input);
  });

  function subscribe(id: number, name: string): void {
    const schema = eventSpec(description, name);
    if (!schema) {
      fail(id, { code: 'not-found', message: `no event ${name}` });
      return;
    }
    if (!subscriptions.has(name)) {
      const [concern, event] = name.split('.') as [string, string];
      const unsubscribe = (impl[concern]![event] as Event).call(impl[concern], (payload) => {
        const checked = schema.safeParse(payload);
        if (!checked.success) {
          log(`dropped a ${name} payload that does not match the description: ${describeIssues(checked.error)}`);
          return;
        }
        send({ event: name, payload: checked.data });
      });
      subscriptions.set(name, unsubscribe);
    }
    send({ id, result: null });
  }

  async function call(id: number, concern: string, method: string, input: unknown): Promise<void> {
    const spec = methodSpec(description, concern, method);
    if (!spec) {
      fail(id, { code: 'not-found', message: `no method ${concern}.${method}` });
      return;
    }
    const checked = spec.input.safeParse(input);
    if (!checked.success) {
      fail(id, { code: 'bad-input', message: `${concern}.${method}: ${describeIssues(checked.error)}` });
      return;
    }
    let result: unknown;
    try {
      result = await (impl[concern]![method] as Method).call(impl[concern], checked.data);
    } catch (error) {
      fail(id, toApiError(error));
      return;
    }
    const out = spec.output.safeParse(result);
    if (!out.success) {
      log(`${concern}.${method} answered with a result that does not match the description: ${describeIssues(out.error)}`);
      fail(id, { code: 'internal', message: `${concern}.${method} produced an invalid result` });
      return;
    }
    send({ id, result: out.data });
  }
}
