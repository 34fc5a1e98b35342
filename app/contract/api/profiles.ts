// profiles: K/S presets and the user's own (a strategy or a chain, K, S, FR, p-min, adaptive K),
// importable and exportable as the TOML that `power generate --profile` reads (app/contract/profile.ts).
import { z } from 'zod';

import { DEFAULT_K, K_MAX } from '../profile.js';
import { concern } from './describe.js';
import { checkChain, DraftingPolicy, Fallbacks, Id, None, Ok, StrategyName } from './common.js';

export const ProfileEntry = z.object({
  id: Id,
  name: z.string().min(1).max(100),
  preset: z.boolean(),
  /** null: the strategy (or chain) of the loaded draft method; 'none' for the autoregressive control */
  strategy: StrategyName.nullable(),
  /** spec_mode's list after its first strategy (a chain; the model must be loaded for it) */
  fallbacks: Fallbacks.optional(),
  /** spec_draft_max; null for the autoregressive control */
  k: z.number().int().min(1).max(K_MAX).nullable(),
  /** spec_mtp_recurrent_snapshots; null: K (or not applicable on attention-only targets) */
  s: z.number().int().min(0).max(K_MAX).nullable(),
  /** spec_mtp_fr_vocab_size (FR, strategy mtp): the head drafts among the first N tokens; absent: all */
  frVocab: z.number().int().min(1).optional(),
  ...DraftingPolicy,
  /** a thinking model's replies think (the TOML's `thinking`); absent: they do, unless a chat or its reply says otherwise */
  thinking: z.boolean().optional(),
  /** the thinking's token budget (the TOML's `thinking_budget`); absent or null: none */
  thinkingBudget: z.number().int().min(0).max(1_000_000).nullable().optional(),
  note: z.string(),
});
export type ProfileEntry = z.infer<typeof ProfileEntry>;

/**
 * The presets, the one table of them: the app's profile list, `power bench --profiles
 * balanced,peak` and the docs' K7/S7 and K7/S6 are these.
 */
export const PROFILE_PRESETS: readonly ProfileEntry[] = [
  // S null: S = K, whatever K a request asks for
  {
    id: 'balanced',
    name: 'Balanced K7/S7',
    preset: true,
    strategy: null,
    k: DEFAULT_K,
    s: null,
    note: 'the default: a rollback point for every proposal',
  },
  {
    id: 'peak',
    name: 'Peak K7/S6 (guarded)',
    preset: true,
    strategy: null,
    k: DEFAULT_K,
    s: DEFAULT_K - 1,
    note: 'a rejection deeper than 6 restores the checkpoint and replays once; later rounds clamp to 6 proposals (S matters only for recurrent/hybrid targets)',
  },
  {
    id: 'autoregressive',
    name: 'Autoregressive control',
    preset: true,
    strategy: 'none',
    k: null,
    s: null,
    note: 'no proposals: the reference every profile is compared with',
  },
];

export const ProfileList = z.object({ profiles: z.array(ProfileEntry), activeId: Id });

export const profiles = concern({
  methods: {
    list: { input: None, output: ProfileList },
    /** the profile new replies use */
    select: { input: z.object({ profileId: Id }), output: ProfileList },
    /** a custom K/S; checked against the loaded model (S does not apply to attention-only targets) */
    create: {
      input: z
        .object({
          name: z.string().min(1).max(100),
          strategy: StrategyName.nullable().default(null),
          fallbacks: Fallbacks.optional(),
          k: z.number().int().min(1).max(K_MAX),
          s: z.number().int().min(0).max(K_MAX).nullable().default(null),
          /** FR: strategy mtp (or a chain with it) only */
          frVocab: z.number().int().min(1).optional(),
          ...DraftingPolicy,
          /** chat replies think (absent: they do) */
          thinking: z.boolean().optional(),
          /** the thinking's token budget (absent or null: none) */
          thinkingBudget: z.number().int().min(0).max(1_000_000).nullable().optional(),
        })
        .superRefine(checkChain),
      output: ProfileEntry,
    },
    /** custom profiles only */
    delete: { input: z.object({ profileId: Id }), output: Ok },
    importToml: { input: z.object({ name: z.string().min(1).max(100), toml: z.string().max(65536) }), output: ProfileEntry },
    /** the TOML of `power generate --profile` (a null strategy is written as the loaded one) */
    exportToml: { input: z.object({ profileId: Id }), output: z.object({ toml: z.string() }) },
  },
  events: {
    onChanged: ProfileList,
  },
});
