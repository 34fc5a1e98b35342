// A command that cannot run as asked: printed as one `error:` line, exit code 2.
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
