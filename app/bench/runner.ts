// The benchmark loop: for every repeat and task, the control and then each profile, one
// request each, back to back in the same engine (A B A B ...), so that drift of a shared,
// noisy machine lands on every profile alike and cancels out in the ratios.
import type { SamplingOptions } from '../contract/engine-types.js';
import type { Tokens } from '../engine/protocol.js';
import { requestRecord } from '../contract/report/request.js';
import type { RequestRecord } from '../contract/report/schema.js';
import { median } from '../contract/report/stats.js';
import type { BenchTask } from '../report/tasks.js';
import type { EngineClient } from '../engine/client.js';
import { runRequest } from '../service/request.js';
import type { ProgressState } from './progress.js';

export interface PreparedTask {
  task: BenchTask;
  prompt: Tokens;
  maxTokens: number;
}

export interface ProfileSession {
  name: string;
  sessionId: string;
}

export interface BenchPlan {
  tasks: PreparedTask[];
  sessions: ProfileSession[];
  repeat: number;
  sampling: SamplingOptions;
  /** stochastic runs: repeat r uses seed + r (the same for every profile of a task) */
  stochastic: boolean;
}

export interface BenchOutcome {
  requests: Omit<RequestRecord, 'matchesControl'>[];
  /** stopped by cancel(): the requests completed before it */
  cancelled: boolean;
}

export class BenchRun {
  private stopped = false;
  private current: string | null = null;

  constructor(
    private readonly engine: EngineClient,
    private readonly plan: BenchPlan,
  ) {}

  /** Stops after cancelling the request in flight (its partial result is dropped). */
  cancel(): void {
    this.stopped = true;
    if (this.current) void this.engine.call('cancel', { sessionId: this.current }).catch(() => {});
  }

  async run(onProgress?: (p: ProgressState) => void): Promise<BenchOutcome> {
    const { tasks, sessions, repeat } = this.plan;
    const total = tasks.length * sessions.length * repeat;
    const requests: Omit<RequestRecord, 'matchesControl'>[] = [];
    const rates = new Map<string, number[]>(sessions.map((s) => [s.name, []]));
    const started = performance.now();
    for (let r = 0; r < repeat; r++) {
      for (const [ti, prepared] of tasks.entries()) {
        const seed = this.plan.stochastic ? (this.plan.sampling.seed + r) % 0x100000000 : this.plan.sampling.seed;
        for (const session of sessions) {
          if (this.stopped) return { requests, cancelled: true };
          onProgress?.({
            done: requests.length,
            total,
            task: prepared.task.id,
            taskIndex: ti + 1,
            taskCount: tasks.length,
            profile: session.name,
            tokensPerSecond: median(rates.get(session.name)!),
            elapsedMs: performance.now() - started,
          });
          this.current = session.sessionId;
          const outcome = await runRequest(this.engine, {
            sessionId: session.sessionId,
            prompt: prepared.prompt,
            maxTokens: prepared.maxTokens,
            sampling: { ...this.plan.sampling, seed },
          });
          this.current = null;
          if (outcome.stopReason === 'cancelled' || this.stopped) return { requests, cancelled: true };
          const record = requestRecord({
            task: prepared.task.id,
            category: prepared.task.category,
            profile: session.name,
            repeat: r,
            seed: this.plan.stochastic ? seed : null,
            generatedTokens: outcome.tokens.length,
            stopReason: outcome.stopReason,
            digest: outcome.digest,
            stats: outcome.replyStats,
            rounds: outcome.rounds,
          });
          if (record.steadyDecodeTokensPerSecond !== null) rates.get(session.name)!.push(record.steadyDecodeTokensPerSecond);
          requests.push(record);
        }
      }
    }
    return { requests, cancelled: false };
  }
}
