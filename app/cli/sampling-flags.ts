// The sampling flags of the commands that generate (generate, audit, bench): one parser, the
// defaults from the protocol's schema (SamplingOptions), so no command writes them again.
import { readFileSync } from 'node:fs';

import { GRAMMAR_MAX_CHARS, SamplingOptions, SamplingPath } from '../contract/engine-types.js';
import { drawSeed } from '../service/reply-steps.js';
import { choice, int, num, str, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const SAMPLING_FLAGS = {
  temperature: { type: 'string' },
  seed: { type: 'string' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  'min-p': { type: 'string' },
  'repeat-penalty': { type: 'string' },
  /** where tokens are sampled: auto (the backend on a GPU), cpu, backend (docs/cli.md "Sampling") */
  sampling: { type: 'string' },
  /** a GBNF grammar file the reply follows (docs/cli.md "Structured output") */
  grammar: { type: 'string' },
  /** a JSON schema file the reply follows */
  'json-schema': { type: 'string' },
} as const;

/** the text of a --grammar or --json-schema file */
function constraintFile(values: Parsed['values'], name: 'grammar' | 'json-schema'): string | undefined {
  const path = str(values, name);
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--${name}: cannot read ${path}: ${(error as Error).message}`);
  }
  if (text.trim() === '') throw new UsageError(`--${name}: ${path} is empty`);
  if (text.length > GRAMMAR_MAX_CHARS) throw new UsageError(`--${name}: ${path} is longer than ${GRAMMAR_MAX_CHARS} characters`);
  if (name === 'json-schema') {
    try {
      JSON.parse(text);
    } catch (error) {
      throw new UsageError(`--json-schema: ${path} is not JSON: ${(error as Error).message}`);
    }
  }
  return text;
}

/** The sampling a command's flags ask for; the flag absent, the schema's default. */
export function samplingFromFlags(values: Parsed['values']): { sampling: SamplingOptions; seedGiven: boolean } {
  const temperature = num(values, 'temperature', { min: 0, max: 100 });
  const seed = int(values, 'seed', { min: 0, max: 0xffffffff });
  const given = {
    temperature,
    // a sampled run without --seed draws one (the JSON reports it); greedy needs none
    seed: drawSeed(seed, temperature ?? 0) ?? undefined,
    topK: int(values, 'top-k', { min: 0, max: 1_000_000 }),
    topP: num(values, 'top-p', { min: 0, max: 1, minExclusive: true }),
    minP: num(values, 'min-p', { min: 0, max: 1 }),
    repeatPenalty: num(values, 'repeat-penalty', { min: 0, max: 100, minExclusive: true }),
    path: choice(values, 'sampling', SamplingPath.options),
    grammar: constraintFile(values, 'grammar'),
    jsonSchema: constraintFile(values, 'json-schema'),
  };
  if (given.grammar !== undefined && given.jsonSchema !== undefined) throw new UsageError('give --grammar or --json-schema, not both');
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  return { sampling: SamplingOptions.parse(defined), seedGiven: seed !== undefined };
}
