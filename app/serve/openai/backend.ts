// What the OpenAI-compatible API needs from the service: the library's models, and one
// stateless completion (load the model set if needed, wait for the engine, generate, report).
import type { StopReason } from '../../contract/engine-types.js';
import type { GenerationStats } from '../../contract/generation-result.js';
import type { Strategy } from '../../contract/strategies.js';
import type { CompletionProgress, CompletionRequest, CompletionResult } from '../../service/completions.js';
import type { ReadReply } from '../../service/tool-calls.js';

/** what the OpenAI routes ask for: exactly the service's stateless completion request */
export type CompletionInput = CompletionRequest;

export interface CompletionOutput {
  /** the library name of the model that answered */
  model: string;
  promptTokens: number;
  completionTokens: number;
  stopReason: StopReason;
  digest: string;
  stats: GenerationStats;
  strategy: Strategy;
  /** a chain's other members, FR, p-min, adaptive K: only what was set */
  drafting: CompletionResult['drafting'];
  k: number | null;
  s: number | null;
  seed: number | null;
  /** with tools: the reply's text and calls as the template's format reads them, and the format's name */
  toolReply?: ReadReply & { format: string };
  /** a thinking reply read apart (llama-server's reasoning_content; '' when it did not think): `text` is then the answer alone */
  reasoning?: string;
  /** the reply's text (the answer alone where `reasoning` is given) */
  text?: string;
}

export interface LibraryModel {
  name: string;
  /** when it was added (unix seconds) */
  created: number;
  /** why it cannot be used now, null when fine */
  problem: string | null;
}

export interface CompletionBackend {
  models(): Promise<LibraryModel[]>;
  /** the replies' counters in Prometheus' text format (GET /metrics) */
  metrics(): string;
  /**
   * Generates one reply, calling onText with whole characters as they come (one call per batch
   * of rounds the engine hands over) and how far the reply has come. Aborting `signal`
   * stops it (stopReason 'cancelled'). Fails with a PowerError (code as in app/contract/api/errors.ts).
   */
  complete(
    input: CompletionInput,
    onText: (text: string, progress: CompletionProgress) => void,
    signal: AbortSignal,
  ): Promise<CompletionOutput>;
}
