// Reads a K/S profile file (TOML) and checks it against contract/profile.ts.
import { readFile } from 'node:fs/promises';

import { parse } from 'smol-toml';

import { Profile } from '../../contract/profile.js';
import { UsageError } from './errors.js';

export async function readProfile(path: string): Promise<Profile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the profile ${path}`);
  }
  let data: unknown;
  try {
    data = parse(text);
  } catch (error) {
    throw new UsageError(`the profile ${path} is not valid TOML: ${(error as Error).message.split('\n')[0]}`);
  }
  const checked = Profile.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
    throw new UsageError(`the profile ${path} is invalid: ${where}${issue.message}`);
  }
  return checked.data;
}

/**
 * K and S from the flags, else the profile, else the defaults (S defaults to K). An S above K
 * is refused naming where each came from: `--s`, the profile file, or the default.
 */
export function resolveKS(
  flags: { k: number | undefined; s: number | undefined },
  profile: Profile | undefined,
  profilePath: string | undefined,
  defaultK: number,
): { k: number; s: number } {
  const fromProfile = (key: string) => `${key} in the profile ${profilePath}`;
  const k = flags.k ?? profile?.spec_draft_max ?? defaultK;
  const kSource = flags.k !== undefined ? '--k' : profile?.spec_draft_max !== undefined ? fromProfile('spec_draft_max') : 'the default K';
  const s = flags.s ?? profile?.spec_mtp_recurrent_snapshots ?? k;
  if (s > k) {
    const sSource = flags.s !== undefined ? '--s' : fromProfile('spec_mtp_recurrent_snapshots');
    throw new UsageError(`${sSource} must be from 0 to K (${k}) (got ${s})${kSource === '--k' ? '' : `; K is from ${kSource}`}`);
  }
  return { k, s };
}
