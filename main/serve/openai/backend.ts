// What the OpenAI-compatible API needs from the service: the library's models, and one
// stateless completion (load the model set if needed, wait for the engine, generate, report).
import type { StopReason } from '../../../app/engine-protocol.js';
import type { GenerationStats } from '../../../app/generation-result.js';
import type { Strategy } from '../../../app/strategies.js';

export interface CompletionMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionInput {
  /** a library entry's name */
  model: string;
  /** chat messages go through the model's chat template; text is sent as it is */
  prompt: { kind: 'chat'; messages: CompletionMessage[] } | { kind: 'text'; text: string };
  maxTokens: number;
  temperature: number;
  topP: number;
  /** absent: random for a stochastic request */
  seed?: number;
  strategy?: Strategy;
  /** a draft's library name */
  draft?: string;
  k?: number;
  s?: number;
  /** a profile id or name */
  profile?: string;
}

export interface CompletionOutput {
  /** the library name of the model that answered */
  model: string;
  promptTokens: number;
  completionTokens: number;
  stopReason: StopReason;
  digest: string;
  stats: GenerationStats;
  strategy: Strategy;
  k: number | null;
  s: number | null;
  seed: number | null;
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
  /**
   * Generates one reply, calling onText with whole characters as they come. Aborting `signal`
   * stops it (stopReason 'cancelled'). Fails with a PowerError (code as in app/api/errors.ts).
   */
  complete(input: CompletionInput, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutput>;
}
