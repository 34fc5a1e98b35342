// Running the tools a bench measures: `power` (bin/power.js, which runs the compiled CLI in
// dist/), and any command to completion.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { ROOT } from '../../app/paths.js';

/** The installed command; it runs dist/app/cli/power.js. */
export const POWER_BIN = join(ROOT, 'bin', 'power.js');

/** A function that prints `<prefix>: message` and exits with status 1. */
export function failer(prefix: string): (message: string) => never {
  return (message) => {
    console.error(`${prefix}: ${message}`);
    process.exit(1);
  };
}

/** bin/power.js runs the compiled CLI: fails when dist/ has none. */
export function requireDist(fail: (message: string) => never): void {
  if (!existsSync(join(ROOT, 'dist', 'app', 'cli', 'power.js')))
    fail('dist/ is missing (npm run build): bin/power.js runs the compiled CLI');
}

/** `power <args>` to completion, output as text (never throws for a non-zero exit). */
export function powerSync(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; maxBuffer?: number } = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [POWER_BIN, ...args], {
    encoding: 'utf8',
    maxBuffer: options.maxBuffer ?? 1 << 26,
    env: options.env ?? process.env,
  });
}

export interface RunResult {
  /** the exit code; -1 when the command could not start, null when a signal ended it */
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** killed after `timeoutMs` */
  timedOut: boolean;
}

/** Runs a command to completion; never throws for a non-zero exit. With `timeoutMs`, kills it (SIGKILL) after that long. */
export function run(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((done) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? null
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      done({ code: -1, stdout, stderr: stderr + String(error), ms: performance.now() - started, timedOut });
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      done({ code, stdout, stderr, ms: performance.now() - started, timedOut });
    });
  });
}
