// How a command fails. Both kinds print one `error:` line first on stderr (then any warnings
// the command had collected), never a stack trace.
import { PowerError } from '../contract/api/errors.js';
import { asPowerError } from '../runtime/target.js';

/** A command that cannot run as asked (bad input of any kind): exit code 2. */
export class UsageError extends Error {
  /** warnings collected before the error; printed after it */
  warnings: string[] = [];
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The input was fine but something of ours failed (e.g. the engine crashed): exit code 1. */
export class FailureError extends Error {
  warnings: string[] = [];
  constructor(message: string) {
    super(message);
    this.name = 'FailureError';
  }
}

/**
 * The runtime's refusals as the CLI's errors: the engine dying is not the user's fault (exit 1),
 * anything else the runtime refuses is bad input (exit 2).
 */
export function cliError(error: unknown): unknown {
  const mapped = asPowerError(error);
  if (!(mapped instanceof PowerError) || mapped.code === 'internal') return error;
  return mapped.code === 'engine-crashed' ? new FailureError(mapped.message) : new UsageError(mapped.message);
}
