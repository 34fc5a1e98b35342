// The client end of a channel on a WebSocket, generated from a description (connectChannel
// over ws-protocol.ts). Browser-safe (no Node): it takes any WebSocket-like object (the
// browser's WebSocket, or `ws` in Node), and queues what is sent before the socket opens. The
// server checks inputs, outputs and payloads (CHECKED_BY_SERVER); this end checks envelopes.
import type { ApiOf, ConcernSpec } from '../api/describe.js';
import { PowerError } from '../api/errors.js';
import { CHECKED_BY_SERVER } from '../channel/checks.js';
import { connectChannel } from '../channel/connect.js';
import { decodeFrame, encodeFrame } from './ws-protocol.js';

/** What the client needs of a WebSocket (the browser's and `ws`'s both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'open' | 'close' | 'error', listener: (event: unknown) => void): void;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

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

export function createApiClient<D extends Record<string, ConcernSpec>>(
  description: D,
  socket: WebSocketLike,
  options: ApiClientOptions = {},
): ApiClient<D> {
  const protocolError = options.onProtocolError ?? ((m: string) => console.warn(`power api: ${m}`));
  const queue: string[] = [];
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  if (socket.readyState === OPEN) markReady();
  socket.addEventListener('open', () => {
    for (const data of queue.splice(0)) socket.send(data);
    markReady();
  });

  const connection = connectChannel(
    description,
    {
      send: (message) => {
        // on a closing socket a message is lost, and the close that follows fails its call
        if (socket.readyState === OPEN) socket.send(encodeFrame(message));
        else if (socket.readyState === CONNECTING) queue.push(encodeFrame(message));
      },
      onMessage: (listener) =>
        socket.addEventListener('message', (event) => {
          const frame = decodeFrame(typeof event.data === 'string' ? event.data : String(event.data));
          if (frame) listener(frame.message);
          else protocolError('the server sent a message that is not JSON');
        }),
      onClose: (listener) => {
        const reason = new PowerError('internal', 'the connection to Power closed');
        if (socket.readyState === CLOSED) listener(reason);
        else socket.addEventListener('close', () => listener(reason));
      },
    },
    { checks: CHECKED_BY_SERVER, onProtocolError: protocolError },
  );

  return { api: connection.api, ready, closed: connection.closed, close: () => socket.close(1000, 'done') };
}
