// The benchmarks' command-line values: each count option a positive integer, refused by name.

/** `values[name]` for each name as a positive integer; the first that is not one goes to `fail`. */
export function positiveIntegers<N extends string>(
  values: Partial<Record<N, string | boolean | undefined>>,
  names: readonly N[],
  fail: (message: string) => never = (message) => {
    throw new Error(message);
  },
): Record<N, number> {
  const out = {} as Record<N, number>;
  for (const name of names) {
    const v = Number(values[name]);
    if (!Number.isInteger(v) || v < 1) fail(`--${name} must be a positive integer`);
    out[name] = v;
  }
  return out;
}
