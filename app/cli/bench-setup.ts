// power bench's setup inside the engine: the task prompts as token ids (checked against the
// context) and one session per profile, the control's without a proposer.
import type { NativeModelInfo } from '../engine/protocol.js';
import type { BenchProfile } from '../report/bench-profiles.js';
import type { ProfileRun } from '../contract/report/schema.js';
import type { BenchTask } from '../report/tasks.js';
import type { Drafting } from './drafting-flags.js';
import type { PreparedTask, ProfileSession } from '../bench/runner.js';
import type { EngineClient } from '../engine/client.js';
import { UsageError } from './errors.js';
import type { GgufInfo } from '../gguf/types.js';
import { buildPrompt } from '../runtime/prompt.js';

/** Tokens per request when neither --max-tokens nor the task sets it. */
export const DEFAULT_TASK_TOKENS = 256;

export async function prepareTasks(
  engine: EngineClient,
  model: { modelId: string; info: NativeModelInfo; gguf: GgufInfo },
  tasks: readonly BenchTask[],
  options: { raw: boolean; contextSize: number; maxTokens: number | undefined; warn: (line: string) => void },
): Promise<PreparedTask[]> {
  let warned = false;
  const warnOnce = (line: string) => {
    if (!warned) options.warn(line);
    warned = true;
  };
  const prepared: PreparedTask[] = [];
  for (const task of tasks) {
    const prompt = await buildPrompt(
      engine,
      model.modelId,
      model.info,
      model.gguf,
      { kind: 'text', text: task.prompt },
      { raw: options.raw, contextSize: options.contextSize },
      warnOnce,
    );
    if (prompt.length + 1 > options.contextSize) {
      throw new UsageError(
        `task '${task.id}': the prompt is ${prompt.length} tokens but the context holds ${options.contextSize} (raise --ctx)`,
      );
    }
    prepared.push({ task, prompt, maxTokens: options.maxTokens ?? task.maxTokens ?? DEFAULT_TASK_TOKENS });
  }
  return prepared;
}

export interface SessionOptions {
  modelId: string;
  draftModelId: string | undefined;
  /** what every speculative profile drafts with: one strategy or a chain, p-min, adaptive K, FR */
  drafting: Drafting & { frVocab: number | undefined };
  contextSize: number;
  threads: number;
  flashAttn: 'on' | 'off' | 'auto';
}

/** One session per profile in the same engine; returns them with the profiles as they ran (K, S settled). */
export async function createProfileSessions(engine: EngineClient, profiles: readonly BenchProfile[], o: SessionOptions) {
  const sessions: ProfileSession[] = [];
  const runs: ProfileRun[] = [];
  let flashAttn: 'on' | 'off' | 'unknown' = 'unknown';
  let threads = o.threads;
  const d = o.drafting;
  // only what was asked for: a one-strategy profile's session and record stay as they were
  const chosen = {
    ...(d.fallbacks.length > 0 ? { fallbacks: d.fallbacks } : {}),
    ...(d.pMin > 0 ? { pMin: d.pMin } : {}),
    ...(d.adaptiveK ? { adaptiveK: true as const } : {}),
    ...(d.frVocab !== undefined ? { frVocab: d.frVocab } : {}),
  };
  for (const p of profiles) {
    const spec = p.k !== null;
    const session = await engine.call('createSession', {
      modelId: o.modelId,
      contextSize: o.contextSize,
      threads: o.threads,
      flashAttn: o.flashAttn,
      strategy: spec ? d.strategy : 'none',
      k: p.k ?? 0,
      s: p.s ?? 0,
      ...(spec ? chosen : {}),
      ...(spec && o.draftModelId ? { draftModelId: o.draftModelId } : {}),
    });
    flashAttn = session.flashAttn;
    threads = session.threads;
    sessions.push({ name: p.name, sessionId: session.sessionId });
    runs.push({
      name: p.name,
      strategy: spec ? d.strategy : 'none',
      k: spec ? session.k : null,
      s: spec ? session.s : null,
      ...(spec ? chosen : {}),
    });
  }
  return { sessions, runs, flashAttn, threads };
}
