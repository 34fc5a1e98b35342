// The strategy vocabulary (DESIGN.md section 1). A strategy is offered only when the model
// (and, where needed, a compatible draft) supports it AND this engine runs it; otherwise the
// reason says which of the two is missing. Nothing is ever substituted.

export const STRATEGIES = ['none', 'ngram', 'draft-model', 'mtp', 'dflash', 'eagle3', 'dspark'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Strategies whose proposer this engine build implements. */
export const ENGINE_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(['none', 'ngram', 'draft-model', 'mtp']);

export interface StrategyAvailability {
  available: boolean;
  reason?: string;
}

export interface StrategyFacts {
  nextnLayers: number;
  /** Result of checking a `--draft` artifact against the target, when one was given. */
  draft?: {
    architecture: string;
    /** What the file is (main/models/draft-compat.ts): 'draft-model', 'eagle3', 'dflash' or 'dspark'. */
    kind?: string;
    compatible: boolean;
    reason?: string;
  };
}

const DRAFT_ARCH: Partial<Record<Strategy, string>> = { dflash: 'dflash', eagle3: 'eagle3', dspark: 'dspark' };

/** The strategy a draft artifact of this architecture serves (anything else is a plain draft model). */
export const DRAFT_ARCHITECTURES: Readonly<Record<string, Strategy>> = { dflash: 'dflash', eagle3: 'eagle3', dspark: 'dspark' };

function modelSupport(strategy: Strategy, facts: StrategyFacts): StrategyAvailability {
  switch (strategy) {
    case 'none':
    case 'ngram':
      return { available: true };
    case 'mtp':
      return facts.nextnLayers > 0
        ? { available: true }
        : { available: false, reason: 'the model has no NextN/MTP layers (nextn_predict_layers = 0)' };
    case 'draft-model':
      if (!facts.draft) return { available: false, reason: 'needs --draft <model.gguf> with the same vocabulary' };
      if (facts.draft.kind && facts.draft.kind !== 'draft-model') {
        return { available: false, reason: `the draft is a ${facts.draft.kind} artifact, not a plain draft model` };
      }
      if (!facts.draft.compatible) return { available: false, reason: `the draft is incompatible: ${facts.draft.reason}` };
      return { available: true };
    default: {
      const arch = DRAFT_ARCH[strategy];
      if (!facts.draft) return { available: false, reason: `needs --draft <${arch} artifact for this target>` };
      const kind = facts.draft.kind ?? facts.draft.architecture;
      if (kind !== arch) {
        const what = facts.draft.kind && kind !== 'draft-model' ? `${kind} artifact` : `plain '${facts.draft.architecture}' model`;
        return { available: false, reason: `the draft is a ${what}, not a ${arch} artifact` };
      }
      if (!facts.draft.compatible) return { available: false, reason: `the draft is incompatible: ${facts.draft.reason}` };
      return { available: true };
    }
  }
}

/** Availability of every strategy for a model (and optional draft) on this engine. */
export function strategyAvailability(facts: StrategyFacts): Record<Strategy, StrategyAvailability> {
  const out = {} as Record<Strategy, StrategyAvailability>;
  for (const strategy of STRATEGIES) {
    const support = modelSupport(strategy, facts);
    if (support.available && !ENGINE_STRATEGIES.has(strategy)) {
      out[strategy] = { available: false, reason: `this engine build does not run the '${strategy}' proposer yet` };
    } else {
      out[strategy] = support;
    }
  }
  return out;
}
