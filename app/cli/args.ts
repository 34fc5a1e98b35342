// Flag parsing and value checks for the CLI: unknown flags and bad values become UsageErrors
// whose message names the flag and what it accepts.
import { parseArgs, type ParseArgsConfig } from 'node:util';

import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parseFlags(argv: string[], options: Options, maxPositionals: number): Parsed {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (error) {
    // node's messages run on with advice about '--'; the first sentence says it
    const message = (error as Error).message.split('\n')[0]!.split('. ')[0]!.replace(/\.$/, '');
    const ambiguous = /option '(--[\w-]+)' argument is ambiguous/i.exec(message);
    if (ambiguous) {
      throw new UsageError(`${ambiguous[1]} needs a value; for one that starts with '-', write ${ambiguous[1]}=VALUE`);
    }
    throw new UsageError(message.charAt(0).toLowerCase() + message.slice(1));
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument '${parsed.positionals[maxPositionals]}'`);
  }
  return { values: parsed.values as Parsed['values'], positionals: parsed.positionals };
}

export function str(values: Parsed['values'], name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function int(values: Parsed['values'], name: string, range: { min: number; max: number }): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new UsageError(`--${name} must be an integer from ${range.min} to ${range.max} (got '${raw}')`);
  }
  return n;
}

export function num(
  values: Parsed['values'],
  name: string,
  range: { min: number; max: number; minExclusive?: boolean },
): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  const low = range.minExclusive ? n <= range.min : n < range.min;
  if (raw.trim() === '' || !Number.isFinite(n) || low || n > range.max) {
    const from = range.minExclusive ? `greater than ${range.min}` : `from ${range.min}`;
    throw new UsageError(`--${name} must be a number ${from} up to ${range.max} (got '${raw}')`);
  }
  return n;
}

export function choice<T extends string>(values: Parsed['values'], name: string, allowed: readonly T[]): T | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')} (got '${raw}')`);
  }
  return raw as T;
}

export function tokenList(values: Parsed['values'], name: string): number[] | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (items.length === 0 || items.some((s) => !/^\d+$/.test(s))) {
    throw new UsageError(`--${name} must be comma-separated token ids, e.g. 1,450,23 (got '${raw}')`);
  }
  return items.map(Number);
}
