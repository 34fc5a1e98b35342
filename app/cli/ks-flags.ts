// The speculation flags of the commands that run one speculative request (generate, audit):
// --k, the draft width, --s, the rollback snapshots, and --fr-vocab, the MTP head's compact draft
// projection (FR); one reader, so both accept the same range.
import { frProblem, K_MAX } from '../contract/profile.js';
import { int, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const KS_FLAGS = {
  k: { type: 'string' },
  s: { type: 'string' },
  'fr-vocab': { type: 'string' },
} as const;

/**
 * --fr-vocab, else the profile's (undefined: the whole vocabulary); a usage error where none of
 * `members` is mtp, before any model loads. The engine refuses one past the model's vocabulary.
 */
export function frVocabFromFlags(values: Parsed['values'], members: readonly string[], fromProfile?: number): number | undefined {
  const n = int(values, 'fr-vocab', { min: 1, max: 16_777_216 }) ?? fromProfile;
  const refused = n !== undefined ? frProblem(members) : null;
  if (refused) throw new UsageError(refused);
  return n;
}

/** --k and --s as given (undefined: not given); a usage error for one out of range. */
export function ksFromFlags(values: Parsed['values']): { k: number | undefined; s: number | undefined } {
  return { k: int(values, 'k', { min: 1, max: K_MAX }), s: int(values, 's', { min: 0, max: K_MAX }) };
}
