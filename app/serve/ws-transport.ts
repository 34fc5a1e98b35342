// The server end of a channel on one `ws` socket (app/contract/transport/ws-protocol.ts): the
// socket as a ChannelPort for serveChannel, which routes calls to an implementation and
// checks every input, output and event payload (CHECKED_BY_SERVER: the page is not trusted).
// Frames that are not the protocol's are answered with an error and the connection lives on.
import type { WebSocket } from 'ws';

import type { ApiOf, ConcernSpec } from '../contract/api/describe.js';
import type { ApiError } from '../contract/api/errors.js';
import { CHECKED_BY_SERVER } from '../contract/channel/checks.js';
import { refusal } from '../contract/channel/protocol.js';
import { serveChannel, type ImplementationOf } from '../contract/channel/serve.js';
import { decodeFrame, encodeFrame } from '../contract/transport/ws-protocol.js';

export interface WsTransportOptions {
  /** a problem worth a line in the server's log (an output or payload that breaks the description) */
  log?: (line: string) => void;
}

/** Serves `api` (shaped by `description`) on one connected socket until it closes. */
export function serveApiOnSocket<D extends Record<string, ConcernSpec>>(
  description: D,
  api: ImplementationOf<D> | ApiOf<D>,
  socket: WebSocket,
  options: WsTransportOptions = {},
): void {
  const log = options.log ?? (() => {});
  const send = (message: unknown): void => {
    if (socket.readyState === socket.OPEN) socket.send(encodeFrame(message));
  };
  const refuse = (error: ApiError): void => send(refusal(null, error));

  // a client's fault (a message over the size limit, invalid UTF-8, a bad frame, a reset) comes
  // as an 'error' on its socket; ws closes that connection itself (1009, 1007, 1002, …). Without
  // a listener Node would end the whole server
  socket.on('error', (error: Error & { code?: string }) => {
    log(`ws: closing a connection: ${error.code ? `${error.code}: ` : ''}${error.message}`);
  });

  serveChannel(
    description,
    api,
    {
      send,
      onMessage: (listener) =>
        socket.on('message', (data, isBinary) => {
          if (isBinary) return refuse({ code: 'bad-input', message: 'binary messages are not part of the protocol; send JSON text' });
          const frame = decodeFrame(data.toString());
          if (frame) listener(frame.message);
          else refuse({ code: 'bad-input', message: 'the message is not JSON' });
        }),
      onClose: (listener) => void socket.on('close', () => listener()),
    },
    { checks: CHECKED_BY_SERVER, log },
  );
}
