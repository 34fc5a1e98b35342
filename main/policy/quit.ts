// Quitting: the first quit request is held back until the service has closed (the streaming
// reply is stopped and saved, chats are written, the engine host and its native objects are
// disposed), then the app exits. A close that hangs does not keep the app alive: after
// `timeoutMs` it exits anyway (the chat was saved at the last completed reply). A second quit
// request while closing is swallowed; once done, nothing is held back.
export interface QuitSequenceOptions {
  close: () => Promise<void>;
  exit: (code: number) => void;
  timeoutMs: number;
  log?: (line: string) => void;
}

export interface QuitSequence {
  /** call from app 'before-quit' with its event */
  onBeforeQuit(event: { preventDefault(): void }): void;
  /** resolves with the exit code once the sequence has exited */
  readonly done: Promise<number>;
  readonly state: 'running' | 'closing' | 'exited';
}

export function createQuitSequence(options: QuitSequenceOptions): QuitSequence {
  const log = options.log ?? (() => {});
  let state: QuitSequence['state'] = 'running';
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (finish = resolve));

  const run = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs)));
    let code = 0;
    try {
      const result = await Promise.race([options.close().then(() => 'closed' as const), timedOut]);
      if (result === 'timeout') {
        log(`closing took longer than ${options.timeoutMs} ms; exiting anyway`);
        code = 1;
      }
    } catch (error) {
      log(`closing failed: ${(error as Error).message}`);
      code = 1;
    } finally {
      clearTimeout(timer);
    }
    state = 'exited';
    options.exit(code);
    finish(code);
  };

  return {
    onBeforeQuit(event) {
      if (state === 'exited') return;
      event.preventDefault();
      if (state === 'closing') return;
      state = 'closing';
      void run();
    },
    done,
    get state() {
      return state;
    },
  };
}
