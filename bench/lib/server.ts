// The servers a benchmark starts (llama-server, power serve): a port to give them and the wait
// until they answer.
import type { ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

/** A loopback port nothing listens on now (the OS picks it; the server started next takes it). */
export function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => done(port));
    });
    s.on('error', reject);
  });
}

/** Polls `base`/health until it answers ok; the server's exit or `timeoutMs` without an answer goes to `fail` with the log's tail. */
export async function waitHealthy(
  child: ChildProcess,
  base: string,
  o: { headers?: Record<string, string>; log: () => string; what: string; timeoutMs: number; fail: (message: string) => never },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    if (child.exitCode !== null) o.fail(`${o.what} exited (${child.exitCode}): ${o.log().slice(-800)}`);
    const ok = await fetch(`${base}/health`, { headers: o.headers }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) o.fail(`${o.what} did not come up: ${o.log().slice(-800)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
