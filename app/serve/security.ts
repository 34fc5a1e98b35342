// Who may talk to `power serve`: every HTTP request and WebSocket needs the server's token
// (Authorization: Bearer, the HttpOnly cookie the page gets, or the `token` query parameter
// that sets it), and a request that a browser sends from another origin is refused even with
// the token (a page elsewhere must not drive the engine through a user's cookie).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export const TOKEN_COOKIE = 'power_token';

/** 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

function sameSecret(a: string, b: string): boolean {
  // hashing first makes the comparison constant-time whatever the lengths
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function cookieToken(header: string | undefined): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === TOKEN_COOKIE) {
      // the gate runs synchronously in the request handler: a malformed escape ('%E0%A4%A')
      // thrown from here would end the process, so such a cookie simply carries no token
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        continue;
      }
    }
  }
  return null;
}

export type TokenSource = 'header' | 'cookie' | 'query';

/** Where the request carried the right token, or null when it did not. */
export function authorize(req: IncomingMessage, url: URL, token: string): TokenSource | null {
  const auth = req.headers.authorization;
  const bearer = auth && /^Bearer\s+(.+)$/i.exec(auth.trim());
  if (bearer && sameSecret(bearer[1]!, token)) return 'header';
  const cookie = cookieToken(req.headers.cookie);
  if (cookie !== null && sameSecret(cookie, token)) return 'cookie';
  const query = url.searchParams.get('token');
  if (query !== null && sameSecret(query, token)) return 'query';
  return null;
}

export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

/** `host:port` as it appears in a URL (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * The origins that count as the server's own. A loopback server answers to every loopback
 * name; one bound to every interface (0.0.0.0) to the name the browser used, which it sends in
 * Host (the token still has to be right).
 */
export function ownOrigins(boundHost: string, port: number, req: IncomingMessage): Set<string> {
  const hosts = new Set<string>([boundHost]);
  if (isLoopback(boundHost) || isWildcard(boundHost)) for (const h of ['localhost', '127.0.0.1', '::1']) hosts.add(h);
  const origins = new Set([...hosts].map((h) => `http://${hostPort(h, port)}`));
  if (isWildcard(boundHost) && req.headers.host) origins.add(`http://${req.headers.host.toLowerCase()}`);
  return origins;
}

/** Null when the request may proceed, else why it is refused (403). */
export function originProblem(req: IncomingMessage, boundHost: string, port: number): string | null {
  const origin = req.headers.origin;
  // no Origin: not sent by a browser on another site's behalf (curl, SDKs, same-origin GETs)
  if (origin === undefined) return null;
  if (ownOrigins(boundHost, port, req).has(origin.toLowerCase())) return null;
  return `requests from origin ${origin} are not allowed; only this server's own page may call it`;
}

/**
 * A loopback server answers only to loopback names in Host: a page on another site whose name
 * resolves to 127.0.0.1 (DNS rebinding) is refused before anything else.
 */
export function hostProblem(req: IncomingMessage, boundHost: string): string | null {
  if (!isLoopback(boundHost)) return null;
  const host = req.headers.host;
  if (host === undefined) return null;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return isLoopback(name.toLowerCase()) ? null : `unexpected Host '${host}': this server answers to loopback names only`;
}
