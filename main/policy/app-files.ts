// What the app:// protocol answers: files of the built renderer folder and nothing else. Only
// GET/HEAD to app://power; the path is decoded once, must not contain NUL or backslashes, and
// neither the resolved path nor its real path (symlinks) may leave the folder. Every answer
// carries the same strict CSP as `power serve` (script-src 'self').
import { realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';

import { contentType, pageHeaders } from '../../app/page-headers.js';
import { APP_HOST, APP_SCHEME } from './origin.js';

export type AppFileAnswer =
  | { status: 200; file: string; headers: Record<string, string> }
  | { status: 400 | 403 | 404 | 405; message: string; headers: Record<string, string> };

const refuse = (status: 400 | 403 | 404 | 405, message: string): AppFileAnswer => ({
  status,
  message,
  headers: pageHeaders('text/plain; charset=utf-8'),
});

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}

/** Resolves one app:// request against `root` (the built renderer folder). */
export async function resolveAppFile(root: string, method: string, url: string): Promise<AppFileAnswer> {
  if (method !== 'GET' && method !== 'HEAD') return refuse(405, `${method} is not allowed here`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse(400, 'malformed URL');
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return refuse(403, 'not an app page');
  let decoded: string;
  try {
    decoded = decodeURIComponent(parsed.pathname);
  } catch {
    return refuse(400, 'the path is not valid percent-encoding');
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return refuse(400, 'the path has forbidden characters');
  const realRoot = await realpath(resolve(root)).catch(() => null);
  if (!realRoot || !(await isFile(join(realRoot, 'index.html')))) return refuse(404, 'the user interface is not built (npm run build)');
  const wanted = resolve(realRoot, `.${decoded}`);
  if (!inside(realRoot, wanted)) return refuse(403, 'the path leaves the app folder');
  let file = wanted;
  const st = await stat(file).catch(() => null);
  if (st?.isDirectory()) file = join(file, 'index.html');
  else if (!st) {
    // client-side routes (no extension) get the app; a missing asset is a 404
    if (extname(decoded) !== '') return refuse(404, `no such file: ${decoded}`);
    file = join(realRoot, 'index.html');
  }
  const real = await realpath(file).catch(() => null);
  if (!real || !(await isFile(real))) return refuse(404, `no such file: ${decoded}`);
  if (!inside(realRoot, real)) return refuse(403, 'the path leaves the app folder');
  return { status: 200, file: real, headers: { ...pageHeaders(contentType(real)), 'Cache-Control': 'no-cache' } };
}
