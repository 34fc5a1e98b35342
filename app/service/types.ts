// What createPowerService takes and returns.
import type { PowerApi, powerApi } from '../contract/api/index.js';
import type { ImplementationOf } from '../contract/channel/index.js';
import type { EngineOptions } from '../engine/client.js';
import type { Completions } from './completions.js';
import type { ServiceMetrics } from './metrics.js';

export interface ServiceOptions {
  /** chats, library.json, settings.json live here (see data-dir.ts) */
  dataDir: string;
  /** every *.gguf in these folders is added to the library at start */
  modelsDirs?: string[];
  /** a GGUF file added to the library at start and loaded when nothing else was chosen (default-model.ts); `log` hears what happened */
  defaultModel?: { path: string; log: (line: string) => void };
  /** how the engine host starts: flavour, verbose (llama.cpp's log), testHooks */
  engine?: EngineOptions;
}

/** The service's methods as a transport's server calls them: inputs already checked, defaults filled in. */
export type ServiceImplementation = ImplementationOf<typeof powerApi>;

/** PowerApi (inputs checked in process) plus the lifetime of the service. */
export type PowerService = PowerApi & {
  /** for the transports, whose servers check every input (Electron IPC, /ws): no second check */
  implementation: ServiceImplementation;
  /** stops a streaming reply (saved as stopped), saves everything, disposes the engine host */
  close(): Promise<void>;
  /** stateless completions (the OpenAI-compatible API): app/service/completions.ts */
  completions: Completions;
  /** the replies' counters, as GET /metrics of power serve shows them */
  metrics: ServiceMetrics;
  /** test and diagnostics: the process id of the current engine host (null when none runs) */
  enginePid(): number | null;
  /**
   * test hook (engine started with testHooks): every later reply, once it has streamed
   * `afterRound` rounds, waits for its cancel instead of going on; null: off
   */
  holdRepliesForTest(afterRound: number | null): Promise<void>;
};
