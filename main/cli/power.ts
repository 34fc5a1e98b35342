// The `power` command: dispatches to a subcommand; a UsageError or a PowerError the user can
// fix (bad input of any kind) is one `error:` line on stderr and exit code 2.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { PowerError } from '../../app/api/errors.js';
import { ROOT } from '../paths.js';
import { DEVICES_USAGE, devicesCommand } from './devices.js';
import { UsageError } from './errors.js';
import { GENERATE_USAGE, generateCommand, type Io } from './generate.js';
import { INFO_USAGE, infoCommand } from './info.js';
import { MAKE_MODELS_USAGE, makeModelsCommand } from './make-models.js';
import { SERVE_USAGE, serveCommand } from './serve.js';

const USAGE = `Power: chat with local LLMs, with exact speculative decoding.

Usage:
${[INFO_USAGE, GENERATE_USAGE, SERVE_USAGE, DEVICES_USAGE, MAKE_MODELS_USAGE].map((u) => `  ${u.replace(/\n/g, '\n  ')}`).join('\n\n')}

  power --help | --version`;

const processIo: Io = {
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  onInterrupt: (handler) => {
    process.on('SIGINT', handler);
    return () => void process.off('SIGINT', handler);
  },
};

// a reader that stops early (`power make-models | head`) is not an error
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/** The first SIGINT/SIGTERM asks to stop cleanly; a second one ends the process at once. */
function processStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', first).off('SIGTERM', first);
      process.once('SIGINT', () => process.exit(130)).once('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.on('SIGINT', first).on('SIGTERM', first);
  });
}

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'info':
        return await infoCommand(rest, io.out);
      case 'generate':
        return await generateCommand(rest, io);
      case 'serve':
        return await serveCommand(rest, { ...io, stopSignal: processStopSignal });
      case 'devices':
        return await devicesCommand(rest, io.out);
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
    // the service's refusals (bad input, unsupported, device) are the user's to fix, as usage errors
    if (error instanceof UsageError || (error instanceof PowerError && error.code !== 'internal')) {
      io.err(`error: ${error.message}\n`);
      return 2;
    }
    io.err(`error: internal failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
