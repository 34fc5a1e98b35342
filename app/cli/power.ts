// The `power` command: dispatches to a subcommand; a UsageError or a PowerError the user can
// fix (bad input of any kind) is one `error:` line on stderr and exit code 2; a FailureError
// or a crashed engine is exit code 1.
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

import { PowerError } from '../contract/api/errors.js';
import { ROOT } from '../paths.js';
import { AUDIT_USAGE, auditCommand } from './audit.js';
import { BENCH_USAGE, benchCommand } from './bench.js';
import { DEVICES_USAGE, devicesCommand } from './devices.js';
import { FailureError, UsageError } from './errors.js';
import { GENERATE_USAGE, generateCommand, type Io } from './generate.js';
import { INFO_USAGE, infoCommand } from './info.js';
import { MAKE_MODELS_USAGE, makeModelsCommand } from './make-models.js';
import { MCP_USAGE, mcpCommand } from './mcp.js';
import { QUANTIZE_USAGE, quantizeCommand } from './quantize.js';
import { RPC_USAGE, rpcCommand } from './rpc.js';
import { SERVE_USAGE, serveCommand } from './serve.js';

const USAGE = `Power: chat with local LLMs, with exact speculative decoding.

Usage:
${[INFO_USAGE, GENERATE_USAGE, AUDIT_USAGE, BENCH_USAGE, SERVE_USAGE, MCP_USAGE, RPC_USAGE, DEVICES_USAGE, QUANTIZE_USAGE, MAKE_MODELS_USAGE].map((u) => `  ${u.replace(/\n/g, '\n  ')}`).join('\n\n')}

  power --help | --version`;

/** Where Ctrl-C arrives: bin/power.js installs one SIGINT listener before the CLI loads. */
export interface Interrupts {
  /** main() has started */
  started: boolean;
  /** Ctrl-C was pressed before main() started */
  pending: boolean;
  /** the running command's handler, if it has one */
  handler: (() => void) | null;
}

function processIo(interrupts: Interrupts): Io {
  return {
    out: (s) => void process.stdout.write(s),
    err: (s) => void process.stderr.write(s),
    onInterrupt: (handler) => {
      let presses = 0;
      interrupts.handler = () => {
        // a second Ctrl-C does not wait for the cancel to land
        if (++presses > 1) process.exit(130);
        handler();
      };
      return () => void (interrupts.handler = null);
    },
  };
}

// a reader that stops early (`power make-models | head`) is not an error
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/**
 * What asks a long-running command (serve, rpc) to stop besides Ctrl-C: SIGTERM (a service
 * manager), SIGHUP (the terminal closed; on Windows the console window closed, and Windows ends
 * the process about 10 s later) and SIGBREAK (Ctrl-Break on Windows; no such signal on Linux).
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * The first stop signal asks to stop cleanly; a second one ends the process at once. SIGINT
 * arrives through bin/power.js's one listener (interrupts.handler), the others directly.
 */
function processStopSignal(interrupts: Interrupts): () => Promise<string> {
  return () =>
    new Promise((resolve) => {
      const listeners = STOP_SIGNALS.map((signal) => [signal, () => first(signal)] as const);
      const first = (signal: string): void => {
        for (const [s, listener] of listeners) process.off(s, listener);
        interrupts.handler = () => process.exit(130);
        for (const s of STOP_SIGNALS)
          process.once(s, () => process.exit(128 + (constants.signals[s as keyof typeof constants.signals] ?? 1)));
        resolve(signal);
      };
      interrupts.handler = () => first('SIGINT');
      // main() called without bin/power.js: nobody forwards SIGINT yet
      if (process.listenerCount('SIGINT') === 0) process.on('SIGINT', () => interrupts.handler?.());
      for (const [s, listener] of listeners) process.on(s, listener);
    });
}

export async function main(
  argv: string[],
  io?: Io,
  interrupts: Interrupts = { started: false, pending: false, handler: null },
): Promise<number> {
  interrupts.started = true;
  const onProcess = io === undefined;
  io ??= processIo(interrupts);
  const [command, ...rest] = argv;
  // a command interrupted before it started: only generate has something to report
  if (interrupts.pending && command !== 'generate') return 130;
  try {
    switch (command) {
      case 'info':
        return await infoCommand(rest, io.out);
      case 'generate':
        return await generateCommand(rest, io, interrupts.pending);
      case 'audit':
        return await auditCommand(rest, io);
      case 'serve':
        return await serveCommand(rest, { ...io, stopSignal: processStopSignal(interrupts) });
      case 'mcp':
        return await mcpCommand(rest, io);
      case 'rpc':
        return await rpcCommand(rest, { ...io, stopSignal: processStopSignal(interrupts) });
      case 'bench':
        return await benchCommand(rest, io, onProcess ? process.stderr : null);
      case 'devices':
        return await devicesCommand(rest, io.out);
      case 'quantize':
        return await quantizeCommand(rest, io);
      case 'make-models':
        return await makeModelsCommand(rest, io.out);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE + '\n');
        return command === undefined ? 2 : 0;
      case '--version':
      case '-v': {
        const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
        io.out(`power ${pkg.version}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command '${command}' (try power --help)`);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof FailureError) {
      io.err(`error: ${error.message}\n`);
      for (const w of error.warnings) io.err(`warning: ${w}\n`);
      return error instanceof UsageError ? 2 : 1;
    }
    // the service's refusals (bad input, unsupported, device) are the user's to fix, as usage
    // errors (2); a crashed engine is a failure of ours (1)
    if (error instanceof PowerError && error.code !== 'internal') {
      io.err(`error: ${error.message}\n`);
      return error.code === 'engine-crashed' ? 1 : 2;
    }
    io.err(`error: internal failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
