// app:// : registered as a privileged, standard, secure scheme before the app is ready (so the
// page has a real origin and its CSP 'self' means app://power), then served from the built
// renderer folder through policy/app-files.ts (no traversal, same CSP as `power serve`).
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

import { protocol } from 'electron';

import { resolveAppFile } from './policy/app-files.js';
import { APP_SCHEME } from './policy/origin.js';

/** Must run before app 'ready'. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
}

export function serveAppScheme(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const answer = await resolveAppFile(rendererDir, request.method, request.url);
    if (answer.status !== 200) return new Response(answer.message, { status: answer.status, headers: answer.headers });
    const body = request.method === 'HEAD' ? null : (Readable.toWeb(createReadStream(answer.file)) as ReadableStream<Uint8Array>);
    return new Response(body, { status: 200, headers: answer.headers });
  });
}
