// K/S profiles: three presets and the user's own (kept in settings.json), TOML import/export
// in the format `power generate --profile` reads, and the check of a profile against the
// loaded model.
import { randomUUID } from 'node:crypto';

import { parse, stringify } from 'smol-toml';

import { PowerError } from '../contract/api/errors.js';
import { PROFILE_PRESETS as PRESETS, type ProfileEntry } from '../contract/api/profiles.js';
import { APP_PROFILE_LIMITS, frProblem, Profile, resolveKS } from '../contract/profile.js';
import { strategyList, type Strategy } from '../contract/strategies.js';
import { Emitter } from './events.js';
import type { SettingsFile } from './settings.js';

/** What a profile means for a request on a target loaded for `loaded`. */
export interface ResolvedProfile {
  entry: ProfileEntry;
  strategy: Strategy;
  k: number;
  /** what the session gets (S of an attention-only target is 0 and reported as null) */
  s: number;
  /** FR: the MTP head drafts among the first frVocab tokens (absent: all) */
  frVocab?: number;
}

export function resolveProfile(entry: ProfileEntry, loaded: Strategy, request: { k?: number; s?: number } = {}): ResolvedProfile {
  const strategy = entry.strategy ?? loaded;
  if (strategy === 'none' || entry.k === null) return { entry, strategy: 'none', k: 0, s: 0 };
  const { k, s } = resolveKS([
    { k: request.k, s: request.s, kName: 'k', sName: 's' },
    { k: entry.k, s: entry.s, kName: `K of the profile '${entry.name}'`, sName: `S of the profile '${entry.name}'` },
  ]);
  return { entry, strategy, k, s, ...(entry.frVocab !== undefined ? { frVocab: entry.frVocab } : {}) };
}

/** A custom K/S must make sense for the loaded target: S applies only to recurrent state. */
export function checkAgainstModel(p: { k: number | null; s: number | null }, target: { recurrent: boolean } | null): void {
  if (p.k !== null && p.s !== null && p.s > p.k) throw new PowerError('bad-input', `S (${p.s}) must not exceed K (${p.k})`);
  if (target && !target.recurrent && p.s !== null) {
    throw new PowerError('bad-input', 'S (recurrent rollback snapshots) does not apply to this attention-only target: leave it empty');
  }
}

export class ProfileStore {
  readonly changed = new Emitter<{ profiles: ProfileEntry[]; activeId: string }>();

  constructor(private readonly settings: SettingsFile) {}

  list(): { profiles: ProfileEntry[]; activeId: string } {
    const profiles = [...PRESETS, ...this.settings.data.profiles];
    const active = profiles.some((p) => p.id === this.settings.data.activeProfileId) ? this.settings.data.activeProfileId : 'balanced';
    return { profiles: structuredClone(profiles), activeId: active };
  }

  get(id: string): ProfileEntry {
    const found = [...PRESETS, ...this.settings.data.profiles].find((p) => p.id === id);
    if (!found) throw new PowerError('not-found', `no profile ${id}`);
    return structuredClone(found);
  }

  active(): ProfileEntry {
    return this.get(this.list().activeId);
  }

  async select(id: string) {
    this.get(id);
    this.settings.data.activeProfileId = id;
    return this.changedNow();
  }

  async create(
    p: { name: string; strategy: Strategy | null; k: number | null; s: number | null; frVocab?: number },
    target: { recurrent: boolean } | null,
  ) {
    // the control has no proposals: K and S mean nothing for it
    const control = p.strategy === 'none';
    const k = control ? null : (p.k ?? 7);
    const s = control ? null : p.s;
    checkAgainstModel({ k, s }, target);
    const frRefused = p.frVocab !== undefined ? frProblem([p.strategy ?? 'the loaded strategy']) : null;
    if (frRefused) throw new PowerError('bad-input', frRefused);
    const entry: ProfileEntry = {
      id: randomUUID(),
      name: p.name,
      preset: false,
      strategy: p.strategy,
      k,
      s,
      ...(p.frVocab !== undefined ? { frVocab: p.frVocab } : {}),
      note: 'custom',
    };
    this.settings.data.profiles.push(entry);
    await this.changedNow();
    return structuredClone(entry);
  }

  async delete(id: string) {
    const entry = this.get(id);
    if (entry.preset) throw new PowerError('bad-input', `'${entry.name}' is a preset and cannot be deleted`);
    this.settings.data.profiles = this.settings.data.profiles.filter((p) => p.id !== id);
    await this.changedNow();
  }

  async importToml(name: string, toml: string, target: { recurrent: boolean } | null) {
    let data: unknown;
    try {
      data = parse(toml);
    } catch (error) {
      throw new PowerError('bad-input', `the profile is not valid TOML: ${(error as Error).message.split('\n')[0]}`);
    }
    const checked = Profile.safeParse(data);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new PowerError('bad-input', `the profile is invalid: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
    }
    const p = checked.data;
    const [strategy, ...fallbacks] = strategyList(p.spec_mode);
    // the app's profiles hold one strategy and a fixed K: the rest is for power generate --profile
    if (fallbacks.length > 0 || p.spec_p_min !== undefined || p.spec_adaptive_k !== undefined) {
      throw new PowerError('unsupported', APP_PROFILE_LIMITS);
    }
    return this.create(
      {
        name,
        strategy,
        k: p.spec_draft_max ?? null,
        s: p.spec_mtp_recurrent_snapshots ?? null,
        ...(p.spec_mtp_fr_vocab_size !== undefined ? { frVocab: p.spec_mtp_fr_vocab_size } : {}),
      },
      target,
    );
  }

  exportToml(id: string, loaded: Strategy | null): string {
    const entry = this.get(id);
    const mode = entry.strategy ?? loaded;
    if (!mode)
      throw new PowerError(
        'bad-input',
        `'${entry.name}' uses the loaded strategy: load a model first, or export a profile with its own strategy`,
      );
    const doc: Record<string, unknown> = { spec_mode: mode };
    if (mode !== 'none' && entry.k !== null) {
      doc.spec_draft_max = entry.k;
      if (entry.s !== null) doc.spec_mtp_recurrent_snapshots = entry.s;
      if (entry.frVocab !== undefined) doc.spec_mtp_fr_vocab_size = entry.frVocab;
    }
    return `# Power profile: ${entry.name.replace(/\n/g, ' ')}\n${stringify(doc)}\n`;
  }

  private async changedNow() {
    await this.settings.save();
    const list = this.list();
    this.changed.emit(list);
    return list;
  }
}
