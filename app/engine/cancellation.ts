// Cancelling a request at any moment (Ctrl-C, a closed UI): before the engine has produced
// anything the request ends as a "cancelled" outcome with no tokens (cancelledOutcome in
// app/service/request.ts), so a front door can still report what happened (the CLI prints its
// JSON and exits 130) instead of dying mid-load.
/** The request was cancelled before it produced an outcome; `stage` says where. */
export class CancelledError extends Error {
  constructor(readonly stage: string) {
    super(`cancelled while ${stage}`);
    this.name = 'CancelledError';
  }
}

/** Settles like `promise`, or rejects with a CancelledError as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, stage: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new CancelledError(stage));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CancelledError(stage));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
