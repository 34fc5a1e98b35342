// Small HTTP helpers for power serve: JSON bodies with a size limit, JSON answers, and an
// error type that carries its status.
import type { IncomingMessage, ServerResponse } from 'node:http';

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

/** Reads and parses a JSON body: 413 past `limit`, 400 when it is not JSON, 415 for other types. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
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
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new HttpError(413, `the request body is over the limit of ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'the request needs a JSON body');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON: ${(error as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(data.length), ...headers });
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
