// The benchmarks' command-line values: each option a string with its default or a flag, each
// count option a positive integer, refused by name.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The command line read against `strings` (each option's default) and `flags` (off unless given); an option not named fails as parseArgs fails it. */
export function benchOptions<S extends string, F extends string = never>(
  strings: Record<S, string>,
  flags: readonly F[] = [],
): Record<S, string> & Record<F, boolean> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, value] of Object.entries<string>(strings)) options[name] = { type: 'string', default: value };
  for (const name of flags) options[name] = { type: 'boolean', default: false };
  return parseArgs({ options }).values as Record<S, string> & Record<F, boolean>;
}

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
