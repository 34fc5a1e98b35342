// The profile names `power bench --profiles` accepts: balanced (K7/S7), peak (K7/S6, guarded),
// k<K> (S = K), k<K>s<S>, and control (the autoregressive run, which always runs anyway).
import { PROFILE_PRESETS } from '../contract/api/profiles.js';
import { K_MAX, resolveKS } from '../contract/profile.js';

export interface BenchProfile {
  name: string;
  /** null for the control */
  k: number | null;
  s: number | null;
}

export const CONTROL_PROFILE: BenchProfile = { name: 'control', k: null, s: null };

export const PROFILE_SYNTAX = `balanced (K7/S7), peak (K7/S6), k<K> or k<K>s<S> with 1 <= K <= ${K_MAX} and 0 <= S <= K, control`;

export class ProfileListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProfileListError';
  }
}

function one(name: string): BenchProfile {
  if (name === 'control') return CONTROL_PROFILE;
  const preset = PROFILE_PRESETS.find((p) => p.id === name && p.k !== null);
  const m = preset ? null : /^k(\d{1,2})(?:s(\d{1,2}))?$/.exec(name);
  if (!preset && !m) throw new ProfileListError(`'${name}' is not a profile (${PROFILE_SYNTAX})`);
  const k = preset ? preset.k : Number(m![1]);
  if (k === null || k < 1 || k > K_MAX) throw new ProfileListError(`'${name}': K must be from 1 to ${K_MAX}`);
  try {
    return {
      name,
      ...resolveKS([
        { k, s: preset ? preset.s : m![2] === undefined ? null : Number(m![2]), kName: `'${name}': K`, sName: `'${name}': S` },
      ]),
    };
  } catch (error) {
    throw new ProfileListError((error as Error).message);
  }
}

/** Parses a comma-separated list; the control comes first (always), duplicates are refused. */
export function parseProfileList(list: string): BenchProfile[] {
  const names = list.split(',').map((x) => x.trim().toLowerCase());
  if (names.some((n) => n === '')) throw new ProfileListError(`empty name in '${list}' (${PROFILE_SYNTAX})`);
  const profiles = names.map(one);
  const seen = new Set<string>();
  for (const p of profiles) {
    const key = p.k === null ? 'control' : `k${p.k}s${p.s}`;
    if (seen.has(key)) throw new ProfileListError(`'${p.name}' repeats a profile already in the list (K${p.k}/S${p.s})`);
    seen.add(key);
  }
  return [CONTROL_PROFILE, ...profiles.filter((p) => p.k !== null)];
}
