// Reads a K/S profile file (TOML) and checks it against app/contract/profile.ts.
import { readFile } from 'node:fs/promises';

import { parse } from 'smol-toml';

import { Profile } from '../contract/profile.js';
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
