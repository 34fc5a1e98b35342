// What a context can hold of a speculative schedule. A verify pass is one llama.cpp batch of
// K + 1 rows, and llama.cpp caps a batch (and its ubatch) at the context size it was asked for
// (`n_batch = min(n_ctx, n_batch)`, before it pads the context): a wider verify block writes
// past the batch (SIGSEGV). A recurrent/hybrid target with S > 0 snapshots needs a ubatch of
// more than S + 1 rows (llama.cpp keeps the last S + 1 rows of a sequence in one ubatch and
// asserts `n_ubatch > n_keep_tail`). These rules refuse such a combination up front, with the
// reason and what would work; the engine re-checks them when it creates a session.

export interface ScheduleRequest {
  /** spec_draft_max (0 for `none`) */
  k: number;
  /** spec_mtp_recurrent_snapshots */
  s: number;
  /** the context size asked for */
  contextSize: number;
  /** rows per prompt batch asked for (the engine widens it to K + 1) */
  batchSize: number;
  /** the target has recurrent state (S applies) */
  recurrent: boolean;
}

/** Rows per batch (and ubatch) llama.cpp will allow for this request. */
export function effectiveBatch(r: Pick<ScheduleRequest, 'k' | 'contextSize' | 'batchSize'>): number {
  return Math.min(r.contextSize, Math.max(r.batchSize, r.k + 1));
}

/** null when the schedule fits, else why not (one sentence, with the numbers). */
export function scheduleProblem(r: ScheduleRequest): string | null {
  const batch = effectiveBatch(r);
  if (r.k + 1 > batch) {
    return (
      `K = ${r.k} needs a verify batch of ${r.k + 1} rows but a context of ${r.contextSize} tokens allows batches of ` +
      `${batch} rows: lower K to ${batch - 1} or raise --ctx`
    );
  }
  if (r.recurrent && r.s > 0 && batch <= r.s + 1) {
    return (
      `S = ${r.s} rollback snapshots need batches of more than ${r.s + 1} rows (the last S + 1 rows of the ` +
      `sequence stay in one batch) but a context of ${r.contextSize} tokens allows ${batch}: lower S to ` +
      `${Math.max(batch - 2, 0)} or raise --ctx`
    );
  }
  return null;
}
