// Serves the built renderer from one folder: GET/HEAD only, no path leaves the folder (`..`,
// encoded separators, symlinks pointing out), a content type per extension, and a strict
// Content-Security-Policy. Paths without an extension fall back to index.html (client-side
// routes). Without a built renderer, a placeholder page says so.
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream';

import { contentType, pageHeaders } from '../page-headers.js';

const PLACEHOLDER = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>Power</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}code{background:#eee;padding:0 .2em}</style>
<h1>Power is running</h1>
<p>The user interface has not been built into this installation yet. The server is up:</p>
<ul>
<li><code>/ws</code>: the whole PowerApi over WebSocket</li>
<li><code>/v1/models</code>, <code>/v1/chat/completions</code>, <code>/v1/completions</code>: the OpenAI-compatible API</li>
</ul>
</html>
`;

export type StaticResult = { status: 200 } | { status: 400 | 403 | 404 | 405; message: string };

export class StaticFiles {
  private readonly root: string | null;

  /** `root`: the built renderer's folder; null (or a folder without index.html) serves the placeholder */
  constructor(root: string | null) {
    this.root = root ? resolve(root) : null;
  }

  /** Answers a GET/HEAD for `pathname`; returns what it did (the caller answers errors). */
  async serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<StaticResult> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return { status: 405, message: `${req.method} is not allowed here` };
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      return { status: 400, message: 'the path is not valid percent-encoding' };
    }
    if (decoded.includes('\0') || decoded.includes('\\')) return { status: 400, message: 'the path has forbidden characters' };
    const root = this.root && (await isFile(join(this.root, 'index.html'))) ? await realpath(this.root) : null;
    if (!root) {
      if (decoded !== '/' && decoded !== '/index.html') return { status: 404, message: `no such file: ${decoded}` };
      this.send(req, res, pageHeaders('text/html; charset=utf-8'), Buffer.from(PLACEHOLDER));
      return { status: 200 };
    }
    const wanted = resolve(root, `.${decoded}`);
    if (!inside(root, wanted)) return { status: 403, message: 'the path leaves the served folder' };
    let file = wanted;
    const st = await stat(file).catch(() => null);
    if (st?.isDirectory()) file = join(file, 'index.html');
    else if (!st) {
      // client-side routes (no extension) get the app; a missing asset is a 404
      if (extname(decoded) !== '') return { status: 404, message: `no such file: ${decoded}` };
      file = join(root, 'index.html');
    }
    const real = await realpath(file).catch(() => null);
    if (!real || !(await isFile(real))) return { status: 404, message: `no such file: ${decoded}` };
    if (!inside(root, real)) return { status: 403, message: 'the path leaves the served folder' };
    const size = (await stat(real)).size;
    const headers = { ...pageHeaders(contentType(real)), 'Content-Length': String(size), 'Cache-Control': 'no-cache' };
    res.writeHead(200, headers);
    if (req.method === 'HEAD') res.end();
    // pipeline, not pipe: a client that goes away mid-file must close the file too (pipe would
    // leave the read stream paused, and its descriptor open, for good)
    else pipeline(createReadStream(real), res, () => {});
    return { status: 200 };
  }

  private send(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, body: Buffer): void {
    res.writeHead(200, { ...headers, 'Content-Length': String(body.length), 'Cache-Control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isFile() ?? false;
}
