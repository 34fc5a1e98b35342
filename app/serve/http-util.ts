// Small HTTP helpers for power serve: JSON bodies with a size limit, JSON answers, and an
// error type that carries its status.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Largest request body accepted (a long conversation fits many times over). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** the OpenAI error type ("invalid_request_error", ...) */
    readonly type = 'invalid_request_error',
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * How long a request body may take to arrive. A client that announces a body and stops sending
 * would otherwise hold its connection (and the buffered part) for as long as it likes.
 */
export const BODY_TIMEOUT_MS = 30_000;

/** Reads and parses a JSON body: 413 past `limit`, 400 when it is not JSON or cut off, 415 for other types, 408 when it is too slow. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES, timeoutMs = BODY_TIMEOUT_MS): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new HttpError(413, `the request body is ${declared} bytes; the limit is ${limit}`);
  }
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    req.resume();
    throw new HttpError(415, `the body must be JSON (Content-Type: application/json), got ${type}`);
  }
  const text = (await readBody(req, limit, timeoutMs)).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'the request needs a JSON body');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The whole body, or an HttpError: over the limit (413), cut off by the client (400), too slow (408). */
function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: HttpError | null): void => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError);
      if (error) {
        // the rest is not read: the answer carries Connection: close (sendJson), which ends it
        req.pause();
        reject(error);
      } else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(new HttpError(413, `the request body is over the limit of ${limit} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onClose = (): void => finish(new HttpError(400, `the request body was cut off after ${size} bytes`));
    const onError = (): void => finish(new HttpError(400, `the request body was cut off after ${size} bytes`));
    const timer = setTimeout(() => finish(new HttpError(408, `the request body did not arrive within ${timeoutMs / 1000} s`)), timeoutMs);
    timer.unref();
    req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const data = Buffer.from(JSON.stringify(body));
  // an answer given before the request's body was read (a refusal, a timeout) closes the
  // connection: keeping it alive would wait for, and parse, whatever the client still sends
  const close = res.req && !res.req.complete ? { Connection: 'close' } : {};
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(data.length), ...close, ...headers });
  res.end(data);
}

/** The OpenAI error shape: { error: { message, type, param, code } }. */
export function sendError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, { error: { message: error.message, type: error.type, param: null, code: error.code } }, headers);
}

/**
 * Error listeners on one exchange, attached where the server creates it: a client that resets
 * mid-request or mid-answer ends that exchange with a log line, never the process.
 */
export function guardExchange(req: IncomingMessage, res: ServerResponse, log: (line: string) => void): void {
  req.on('error', (error: NodeJS.ErrnoException) => log(`${req.method} ${req.url}: the request failed (${error.code ?? error.message})`));
  res.on('error', (error: NodeJS.ErrnoException) => {
    log(`${req.method} ${req.url}: the answer failed (${error.code ?? error.message})`);
    res.destroy();
  });
}

const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * A request Node cannot parse (bad framing, a Content-Length lie, chunked garbage, headers too
 * large, too slow) gets its status where nothing was answered yet, a closed connection and a
 * log line. Node does the same by default, silently; this is where the log line comes from.
 */
export function answerClientErrors(server: Server, log: (line: string) => void): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const code = error.code ?? 'unknown';
    const peerGone = code === 'ECONNRESET' || code === 'EPIPE';
    const [status, reason] = CLIENT_ERROR_STATUS[code] ?? [400, 'Bad Request'];
    if (!peerGone) log(`a client's request was refused (${status}, ${code}): ${error.message}`);
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !peerGone && !inFlight?.headersSent) {
      socket.write(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
    socket.destroy();
  });
}
