// K/S profiles: three presets and the user's own (kept in settings.json), TOML import/export
// in the format `power generate --profile` reads, and the check of a profile against the
// loaded model.
import { randomUUID } from 'node:crypto';

import { parse, stringify } from 'smol-toml';

import { PowerError } from '../contract/api/errors.js';
import { PROFILE_PRESETS as PRESETS, type ProfileEntry } from '../contract/api/profiles.js';
import { frProblem, Profile, resolveKS } from '../contract/profile.js';
import { chainProblem } from '../contract/api/common.js';
import { strategyLabel, strategyList, type Strategy } from '../contract/strategies.js';
import { Emitter } from './events.js';
import type { SettingsFile } from './settings.js';

/** A strategy with the rest of its chain ([]: one strategy), as a model is loaded for it. */
export interface Chain {
  strategy: Strategy;
  fallbacks: readonly Strategy[];
}

/** What a request asks of a profile beyond it: its own strategy (or chain), K, S, FR, p-min, adaptive K. */
export interface ProfileRequest {
  chain?: Chain;
  k?: number;
  s?: number;
  frVocab?: number;
  pMin?: number;
  adaptiveK?: boolean;
}

/** What a profile means for a request on a target loaded for `loaded`. */
export interface ResolvedProfile extends Chain {
  entry: ProfileEntry;
  k: number;
  /** what the session gets (S of an attention-only target is 0 and reported as null) */
  s: number;
  /** FR: the MTP head drafts among the first frVocab tokens (absent: all) */
  frVocab?: number;
  /** a draft stops under this top-1 probability (absent: off) */
  pMin?: number;
  /** shorter drafts after rejections */
  adaptiveK?: true;
}

/** The request's values over the profile's, the profile's over the loaded chain's (a null strategy). */
export function resolveProfile(entry: ProfileEntry, loaded: Chain, request: ProfileRequest = {}): ResolvedProfile {
  const chain: Chain = request.chain ?? (entry.strategy !== null ? { strategy: entry.strategy, fallbacks: entry.fallbacks ?? [] } : loaded);
  if (chain.strategy === 'none' || (entry.k === null && !request.chain)) return { entry, strategy: 'none', fallbacks: [], k: 0, s: 0 };
  const { k, s } = resolveKS([
    { k: request.k, s: request.s, kName: 'k', sName: 's' },
    { k: entry.k, s: entry.s, kName: `K of the profile '${entry.name}'`, sName: `S of the profile '${entry.name}'` },
  ]);
  const frVocab = request.frVocab ?? entry.frVocab;
  const pMin = request.pMin ?? entry.pMin;
  const adaptiveK = request.adaptiveK ?? entry.adaptiveK;
  return {
    entry,
    strategy: chain.strategy,
    fallbacks: [...chain.fallbacks],
    k,
    s,
    ...(frVocab !== undefined ? { frVocab } : {}),
    ...(pMin ? { pMin } : {}),
    ...(adaptiveK ? { adaptiveK: true as const } : {}),
  };
}

/** What a reply records of how it drafted beyond strategy, K and S: only what was set. */
export function draftingOf(r: ResolvedProfile): { fallbacks?: Strategy[]; frVocab?: number; pMin?: number; adaptiveK?: true } {
  if (r.strategy === 'none') return {};
  return {
    ...(r.fallbacks.length > 0 ? { fallbacks: [...r.fallbacks] } : {}),
    ...(r.frVocab !== undefined ? { frVocab: r.frVocab } : {}),
    ...(r.pMin ? { pMin: r.pMin } : {}),
    ...(r.adaptiveK ? { adaptiveK: true as const } : {}),
  };
}

/** A custom K/S must make sense for the loaded target: S applies only to recurrent state. */
export function checkAgainstModel(p: { k: number | null; s: number | null }, target: { recurrent: boolean } | null): void {
  if (p.k !== null && p.s !== null && p.s > p.k) throw new PowerError('bad-input', `S (${p.s}) must not exceed K (${p.k})`);
  if (target && !target.recurrent && p.s !== null) {
    throw new PowerError('bad-input', 'S (recurrent rollback snapshots) does not apply to this attention-only target: leave it empty');
  }
}

/** What a custom profile is checked against: the loaded target's recurrent state and the chain it was loaded for. */
export interface LoadedTarget {
  recurrent: boolean;
  chain?: Chain;
}

/** A custom profile as the app's form and a TOML import give it. */
export interface NewProfile {
  name: string;
  strategy: Strategy | null;
  fallbacks?: readonly Strategy[];
  k: number | null;
  s: number | null;
  frVocab?: number;
  pMin?: number;
  adaptiveK?: boolean;
  /** chat replies think (absent: they do) */
  thinking?: boolean;
  /** the thinking's token budget (absent or null: none) */
  thinkingBudget?: number | null;
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

  async create(p: NewProfile, target: LoadedTarget | null) {
    // the control has no proposals: K, S and the drafting policy mean nothing for it
    const control = p.strategy === 'none';
    const k = control ? null : (p.k ?? 7);
    const s = control ? null : p.s;
    checkAgainstModel({ k, s }, target);
    const fallbacks = p.fallbacks ?? [];
    const chainRefused = chainProblem(p.strategy, fallbacks);
    if (chainRefused) throw new PowerError('bad-input', chainRefused);
    // a profile of the loaded chain is checked against it; with nothing loaded, the session checks it
    const members = p.strategy ? [p.strategy, ...fallbacks] : target?.chain ? [target.chain.strategy, ...target.chain.fallbacks] : null;
    const frRefused = p.frVocab !== undefined && members ? frProblem(members) : null;
    if (frRefused) throw new PowerError('bad-input', frRefused);
    const entry: ProfileEntry = {
      id: randomUUID(),
      name: p.name,
      preset: false,
      strategy: p.strategy,
      ...(fallbacks.length > 0 ? { fallbacks: [...fallbacks] } : {}),
      k,
      s,
      ...(!control && p.frVocab !== undefined ? { frVocab: p.frVocab } : {}),
      ...(!control && p.pMin ? { pMin: p.pMin } : {}),
      ...(!control && p.adaptiveK ? { adaptiveK: true } : {}),
      ...(p.thinking !== undefined ? { thinking: p.thinking } : {}),
      ...(p.thinkingBudget != null ? { thinkingBudget: p.thinkingBudget } : {}),
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

  async importToml(name: string, toml: string, target: LoadedTarget | null) {
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
    return this.create(
      {
        name,
        strategy,
        fallbacks,
        k: p.spec_draft_max ?? null,
        s: p.spec_mtp_recurrent_snapshots ?? null,
        ...(p.spec_mtp_fr_vocab_size !== undefined ? { frVocab: p.spec_mtp_fr_vocab_size } : {}),
        ...(p.spec_p_min !== undefined ? { pMin: p.spec_p_min } : {}),
        ...(p.spec_adaptive_k !== undefined ? { adaptiveK: p.spec_adaptive_k } : {}),
        ...(p.thinking !== undefined ? { thinking: p.thinking } : {}),
        ...(p.thinking_budget !== undefined ? { thinkingBudget: p.thinking_budget } : {}),
      },
      target,
    );
  }

  exportToml(id: string, loaded: Chain | null): string {
    const entry = this.get(id);
    const chain = entry.strategy !== null ? { strategy: entry.strategy, fallbacks: entry.fallbacks ?? [] } : loaded;
    if (!chain)
      throw new PowerError(
        'bad-input',
        `'${entry.name}' uses the loaded strategy: load a model first, or export a profile with its own strategy`,
      );
    const doc: Record<string, unknown> = { spec_mode: strategyLabel(chain.strategy, chain.fallbacks) };
    if (chain.strategy !== 'none' && entry.k !== null) {
      doc.spec_draft_max = entry.k;
      if (entry.s !== null) doc.spec_mtp_recurrent_snapshots = entry.s;
      if (entry.frVocab !== undefined) doc.spec_mtp_fr_vocab_size = entry.frVocab;
      if (entry.pMin !== undefined) doc.spec_p_min = entry.pMin;
      if (entry.adaptiveK) doc.spec_adaptive_k = true;
    }
    if (entry.thinking !== undefined) doc.thinking = entry.thinking;
    if (entry.thinkingBudget != null) doc.thinking_budget = entry.thinkingBudget;
    return `# Power profile: ${entry.name.replace(/\n/g, ' ')}\n${stringify(doc)}\n`;
  }

  private async changedNow() {
    await this.settings.save();
    const list = this.list();
    this.changed.emit(list);
    return list;
  }
}
