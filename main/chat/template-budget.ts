// A model's chat template is code from the model file: it can loop for ever (`range(10**9)`,
// nested loops) or build gigabytes of text. It is rendered in a worker thread with a time
// budget (the worker is terminated), a heap cap and an output budget, and every way it can
// fail becomes a ChatTemplateError that says which budget it broke.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { ChatTemplateError, type ChatMessage, type TemplateTokens } from './template.js';

export interface TemplateBudget {
  /** wall time for compiling and rendering */
  timeMs: number;
  /** the worker's V8 heap (young + old generation) */
  heapMb: number;
  /** rendered text beyond the messages themselves (a template adds role markers, a system prompt) */
  overheadBytes: number;
}

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
): Promise<string> {
  const here = fileURLToPath(import.meta.url);
  const file = fileURLToPath(new URL(`./template-worker${extname(here)}`, import.meta.url));
  // from TypeScript sources (tests, tsx) the worker needs the TypeScript loader in its thread too
  const source =
    extname(here) === '.ts'
      ? new URL(
          `data:text/javascript,import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); ` +
            `await import(${JSON.stringify(new URL(`file://${file}`).href)});`,
        )
      : file;
  const worker = new Worker(source, {
    workerData: { template, messages, tokens },
    resourceLimits: { maxOldGenerationSizeMb: budget.heapMb, maxYoungGenerationSizeMb: Math.min(32, budget.heapMb) },
    stdout: true,
    stderr: true,
  });
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(
      () => settle(() => reject(new ChatTemplateError(`the model's chat template did not finish within ${budget.timeMs / 1000} s (it loops or does too much work)`))),
      budget.timeMs,
    );
    worker.on('message', (m: { ok: true; text: string } | { ok: false; message: string }) => {
      if (!m.ok) return settle(() => reject(new ChatTemplateError(m.message)));
      const limit = outputLimit(messages, budget);
      const size = Buffer.byteLength(m.text);
      if (size > limit) {
        return settle(() => reject(new ChatTemplateError(`the model's chat template produced ${size} bytes (at most ${limit} for this conversation)`)));
      }
      settle(() => resolve(m.text));
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const why =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the model's chat template ran out of its ${budget.heapMb} MB of memory (it builds too much)`
          : `the model's chat template failed: ${error.message}`;
      settle(() => reject(new ChatTemplateError(why)));
    });
    worker.on('exit', (code) => settle(() => reject(new ChatTemplateError(`the chat template worker stopped (exit code ${code})`))));
  });
}
