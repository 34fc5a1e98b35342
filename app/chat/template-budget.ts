// A model's chat template is code from the model file: it can loop for ever (`range(10**9)`,
// nested loops) or build gigabytes of text. It is rendered in a child process with a time
// budget (the process is killed), a heap cap and an output budget, and every way it can fail
// becomes a ChatTemplateError that says which budget it broke.
import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CancelledError } from '../engine/cancellation.js';
import { ChatTemplateError, type ChatMessage, type TemplateTokens } from './template.js';

export interface TemplateBudget {
  /** wall time for compiling and rendering */
  timeMs: number;
  /** the renderer's V8 heap (old generation) */
  heapMb: number;
  /** rendered text beyond the messages themselves (a template adds role markers, a system prompt) */
  overheadBytes: number;
}

/** how long the renderer process may take to start, before the template's own budget runs */
const RENDERER_START_MS = 60_000;

export const DEFAULT_TEMPLATE_BUDGET: TemplateBudget = { timeMs: 5000, heapMb: 128, overheadBytes: 1 << 20 };

/** Bytes a rendering may reach: the messages (twice: a template may repeat them) plus the overhead. */
export function outputLimit(messages: readonly ChatMessage[], budget: TemplateBudget): number {
  return 2 * messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0) + budget.overheadBytes;
}

export function renderChatBounded(
  template: string,
  messages: readonly ChatMessage[],
  tokens: TemplateTokens,
  budget: TemplateBudget = DEFAULT_TEMPLATE_BUDGET,
  signal?: AbortSignal,
): Promise<string> {
  if (signal?.aborted) return Promise.reject(new CancelledError('rendering the chat template'));
  const here = fileURLToPath(import.meta.url);
  const file = fileURLToPath(new URL(`./template-worker${extname(here)}`, import.meta.url));
  const child = fork(file, [], {
    // the caller's loader flags (tsx in tests) plus the heap cap
    execArgv: [...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size')), `--max-old-space-size=${budget.heapMb}`],
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    // the time budget is the template's: it starts when the renderer has started (a loaded
    // machine, or tsx in the tests, can take seconds to start a Node process)
    const budgetTimer = (): NodeJS.Timeout =>
      setTimeout(
        () =>
          settle(() =>
            reject(
              new ChatTemplateError(
                `the model's chat template did not finish within ${budget.timeMs / 1000} s (it loops or does too much work)`,
              ),
            ),
          ),
        budget.timeMs,
      );
    timer = setTimeout(
      () => settle(() => reject(new ChatTemplateError(`the chat template renderer did not start within ${RENDERER_START_MS / 1000} s`))),
      RENDERER_START_MS,
    );
    child.on('message', (m: { ready: true } | { ok: true; text: string } | { ok: false; message: string }) => {
      if ('ready' in m) {
        clearTimeout(timer);
        timer = budgetTimer();
        child.send({ template, messages, tokens });
        return;
      }
      if (!m.ok) return settle(() => reject(new ChatTemplateError(m.message)));
      const limit = outputLimit(messages, budget);
      const size = Buffer.byteLength(m.text);
      if (size > limit) {
        return settle(() =>
          reject(new ChatTemplateError(`the model's chat template produced ${size} bytes (at most ${limit} for this conversation)`)),
        );
      }
      settle(() => resolve(m.text));
    });
    child.on('error', (error) => settle(() => reject(new ChatTemplateError(`the chat template could not be rendered: ${error.message}`))));
    child.on('exit', (code, signal) =>
      settle(() =>
        reject(
          new ChatTemplateError(
            `the model's chat template ran out of its ${budget.heapMb} MB of memory or crashed (${signal ? `signal ${signal}` : `exit code ${code}`}): it builds too much`,
          ),
        ),
      ),
    );
    const onAbort = (): void => settle(() => reject(new CancelledError('rendering the chat template')));
    signal?.addEventListener('abort', onAbort, { once: true });
    child.once('exit', () => signal?.removeEventListener('abort', onAbort));
  });
}
