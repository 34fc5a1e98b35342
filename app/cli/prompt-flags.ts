// The prompt flags of the commands that run a request (generate, audit): exactly one of a text,
// a file or token ids, and --raw to skip the chat template.
import type { PromptSource } from '../runtime/prompt.js';
import { str, tokenList, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const PROMPT_FLAGS = {
  prompt: { type: 'string' },
  'prompt-file': { type: 'string' },
  'prompt-tokens': { type: 'string' },
  raw: { type: 'boolean' },
} as const;

/** The one prompt the flags give; a usage error for none or several. */
export function promptSource(values: Parsed['values']): PromptSource {
  const given = (['prompt', 'prompt-file', 'prompt-tokens'] as const).filter((k) => str(values, k) !== undefined);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? 'give a prompt with --prompt, --prompt-file or --prompt-tokens'
        : `give only one of --prompt, --prompt-file, --prompt-tokens (got ${given.map((g) => `--${g}`).join(', ')})`,
    );
  }
  if (given[0] === 'prompt') return { kind: 'text', text: str(values, 'prompt')! };
  if (given[0] === 'prompt-file') return { kind: 'file', path: str(values, 'prompt-file')! };
  return { kind: 'tokens', tokens: tokenList(values, 'prompt-tokens')! };
}
