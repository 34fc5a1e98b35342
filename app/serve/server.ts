// The HTTP server of `power serve`: one port for the page (the built renderer), the whole
// PowerApi over WebSocket (/ws) and the OpenAI-compatible API (/v1/...). Every request passes
// the same gate first: Host (loopback servers), Origin, token.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { WebSocketServer } from 'ws';

import type { ApiOf, ConcernSpec } from '../contract/api/describe.js';
import type { ImplementationOf } from '../contract/channel/index.js';
import { WS_MAX_MESSAGE_BYTES } from '../contract/transport/ws-protocol.js';
import { answerClientErrors, guardExchange, HttpError, sendError, sendJson } from './http-util.js';
import type { CompletionBackend } from './openai/backend.js';
import { complete, listModels, openAiError } from './openai/routes.js';
import { authorize, hostPort, hostProblem, originProblem, tokenCookie } from './security.js';
import { StaticFiles } from './static-files.js';
import { serveApiOnSocket } from './ws-transport.js';

export interface ServerOptions<D extends Record<string, ConcernSpec>> {
  host: string;
  /** 0 picks a free port */
  port: number;
  token: string;
  /** served on /ws */
  description: D;
  /** served over /ws, whose server checks every input: the service's implementation */
  api: ImplementationOf<D> | ApiOf<D>;
  /** served on /v1 */
  completions: CompletionBackend;
  /** the built renderer; null serves a placeholder page */
  staticDir: string | null;
  log?: (line: string) => void;
}

export interface RunningServer {
  /** http://HOST:PORT */
  origin: string;
  port: number;
  close(): Promise<void>;
}

const WS_PATH = '/ws';

type Gate = { ok: true; url: URL; via: 'header' | 'cookie' | 'query' } | { ok: false; status: 400 | 401 | 403; message: string };

export async function startServer<D extends Record<string, ConcernSpec>>(options: ServerOptions<D>): Promise<RunningServer> {
  const { host, token } = options;
  const log = options.log ?? (() => {});
  const files = new StaticFiles(options.staticDir);
  let port = options.port;

  const gate = (req: IncomingMessage): Gate => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      return { ok: false, status: 400, message: 'malformed request URL' };
    }
    const badHost = hostProblem(req, host);
    if (badHost) return { ok: false, status: 403, message: badHost };
    const badOrigin = originProblem(req, host, port);
    if (badOrigin) return { ok: false, status: 403, message: badOrigin };
    const via = authorize(req, url, token);
    if (!via)
      return { ok: false, status: 401, message: 'this server needs its token: Authorization: Bearer <token> (or open the URL it printed)' };
    return { ok: true, url, via };
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    // llama-server's: whether the server answers, and its counters for Prometheus
    if (path === '/health' || path === '/v1/health' || path === '/metrics') {
      if (req.method !== 'GET') return sendError(res, new HttpError(405, `use GET for ${path}`));
      if (path !== '/metrics') return sendJson(res, 200, { status: 'ok' });
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(options.completions.metrics());
      return;
    }
    if (path === '/v1' || path.startsWith('/v1/')) {
      try {
        if (path === '/v1/models') {
          if (req.method !== 'GET') throw new HttpError(405, 'use GET for /v1/models');
          return await listModels(res, options.completions);
        }
        const kind = path === '/v1/chat/completions' ? 'chat' : path === '/v1/completions' ? 'text' : null;
        if (!kind)
          throw new HttpError(404, `no endpoint ${path} (Power serves /v1/models, /v1/chat/completions, /v1/completions, /v1/health)`);
        if (req.method !== 'POST') throw new HttpError(405, `use POST for ${path}`);
        return await complete(req, res, options.completions, kind);
      } catch (error) {
        if (!res.headersSent) openAiError(res, error);
        else res.destroy();
        return;
      }
    }
    if (path === WS_PATH) return sendError(res, new HttpError(426, '/ws is a WebSocket endpoint'), { Upgrade: 'websocket' });
    const served = await files.serve(req, res, path);
    if (served.status !== 200) sendError(res, new HttpError(served.status, served.message));
  };

  const server = createServer((req, res) => {
    guardExchange(req, res, log);
    const checked = gate(req);
    if (!checked.ok) {
      req.resume();
      const headers: Record<string, string> = checked.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="power"' } : {};
      sendError(
        res,
        new HttpError(checked.status, checked.message, checked.status === 401 ? 'authentication_error' : 'invalid_request_error'),
        headers,
      );
      return;
    }
    const { url, via } = checked;
    if (via === 'query') {
      // the page's token moves into an HttpOnly cookie, and off the address bar
      res.setHeader('Set-Cookie', tokenCookie(token));
      const isPage = req.method === 'GET' && !url.pathname.startsWith('/v1') && url.pathname !== WS_PATH;
      if (isPage) {
        url.searchParams.delete('token');
        res.writeHead(303, { Location: url.pathname + url.search, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).end();
        return;
      }
    }
    route(req, res, url).catch((error: unknown) => {
      log(`error: ${req.method} ${url.pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendError(res, new HttpError(500, 'internal error', 'server_error'));
      else res.destroy();
    });
  });
  server.headersTimeout = 30_000;
  // the time to receive a request (head and body), not to answer it: a streamed reply may run
  // for as long as it takes, while a client that stops sending its request is dropped
  server.requestTimeout = 60_000;
  answerClientErrors(server, log);

  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_MESSAGE_BYTES });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // until ws owns the socket (or a refusal is written), a reset must not be an unhandled error
    socket.on('error', () => socket.destroy());
    const checked = gate(req);
    const refuse = (status: number, message: string): void => {
      const reason = status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Bad Request';
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message) + 1}\r\nConnection: close\r\n\r\n${message}\n`,
      );
    };
    if (!checked.ok) return refuse(checked.status, checked.message);
    if (checked.url.pathname !== WS_PATH) return refuse(404, `no WebSocket endpoint at ${checked.url.pathname}; use ${WS_PATH}`);
    wss.handleUpgrade(req, socket, head, (ws) => serveApiOnSocket(options.description, options.api, ws, { log }));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    origin: `http://${hostPort(host, port)}`,
    port,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
