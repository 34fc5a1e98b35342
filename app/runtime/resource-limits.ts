// Sane bounds on resource values a user (or a crafted file) can ask for, checked before any of
// them is spent. Pure rules; the front doors apply them.

/** Threads beyond the machine's logical cores only make ggml's busy-waiting workers fight. */
export function capThreads(requested: number, cores: number): { threads: number; warning: string | null } {
  const limit = Math.max(1, cores);
  if (requested <= limit) return { threads: requested, warning: null };
  return {
    threads: limit,
    warning: `--threads ${requested} is more than the ${limit} logical cores of this machine; using ${limit}`,
  };
}

/**
 * A prompt of `bytes` bytes is at least bytes / longest-token-bytes tokens (no token covers more
 * text than its own string holds). null when it may fit the context, else the refusal: checked
 * before the text is tokenised, which for a huge file costs gigabytes and many seconds.
 */
export function promptSizeProblem(bytes: number, contextSize: number, longestTokenBytes: number): string | null {
  const atLeast = Math.ceil(bytes / Math.max(1, longestTokenBytes));
  if (atLeast + 1 <= contextSize) return null;
  return (
    `the prompt is ${bytes} bytes, so at least ${atLeast} tokens (no token of this model is longer than ` +
    `${longestTokenBytes} bytes), but the context holds ${contextSize} (raise --ctx or shorten the prompt)`
  );
}
