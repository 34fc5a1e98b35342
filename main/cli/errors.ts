// How a command fails. Both kinds print one `error:` line first on stderr (then any warnings
// the command had collected), never a stack trace.
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
