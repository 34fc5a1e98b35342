// The strategy vocabulary (DESIGN.md section 1). A strategy is offered only when the model
// (and, where needed, a compatible draft) supports it AND this engine runs it; otherwise the
// reason says which of the two is missing. Nothing is ever substituted.

export const STRATEGIES = [
  'none',
  'ngram',
  'draft-model',
  'mtp',
  'dflash',
  'eagle3',
  'dspark',
  // llama.cpp's own n-gram families (common/speculative.cpp), under llama.cpp's names: each is
  // its own algorithm, none of them is our `ngram`
  'ngram-simple',
  'ngram-map-k',
  'ngram-map-k4v',
  'ngram-mod',
  'ngram-cache',
] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Strategies whose proposer this engine build implements. */
export const ENGINE_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(STRATEGIES);

/** The strategies that run llama.cpp's own proposer (libllama-common's common_speculative). */
export const LLAMA_CPP_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>([
  'eagle3',
  'dflash',
  'dspark',
  'ngram-simple',
  'ngram-map-k',
  'ngram-map-k4v',
  'ngram-mod',
  'ngram-cache',
]);

/** The strategies that propose from the token history alone (no model, no artifact). */
export const NGRAM_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>([
  'ngram',
  'ngram-simple',
  'ngram-map-k',
  'ngram-map-k4v',
  'ngram-mod',
  'ngram-cache',
]);

/** The strategies that need a draft file next to the target. */
export const DRAFT_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(['draft-model', 'eagle3', 'dflash', 'dspark']);

export interface StrategyAvailability {
  available: boolean;
  reason?: string;
}

export interface StrategyFacts {
  nextnLayers: number;
  /** Result of checking a `--draft` artifact against the target, when one was given. */
  draft?: {
    architecture: string;
    /** the strategy the file serves, when its header says more than the architecture (a DSpark is a dflash GGUF with a Markov head) */
    strategy?: Strategy;
    compatible: boolean;
    reason?: string;
  };
}

/** The strategy a draft artifact of this architecture serves (anything else is a plain draft model). */
export const DRAFT_ARCHITECTURES: Readonly<Record<string, Strategy>> = { dflash: 'dflash', eagle3: 'eagle3', dspark: 'dspark' };

/** The strategy a checked draft serves: what its check says, else what its architecture says. */
export function draftStrategy(draft: { architecture: string; strategy?: Strategy }): Strategy {
  return draft.strategy ?? DRAFT_ARCHITECTURES[draft.architecture] ?? 'draft-model';
}

const ARTIFACT_NAMES: Partial<Record<Strategy, string>> = { dflash: 'a dflash', eagle3: 'an eagle3', dspark: 'a dspark' };

function modelSupport(strategy: Strategy, facts: StrategyFacts): StrategyAvailability {
  if (NGRAM_STRATEGIES.has(strategy)) return { available: true };
  switch (strategy) {
    case 'none':
      return { available: true };
    case 'mtp':
      return facts.nextnLayers > 0
        ? { available: true }
        : { available: false, reason: 'the model has no NextN/MTP layers (nextn_predict_layers = 0)' };
    case 'draft-model':
      if (!facts.draft) return { available: false, reason: 'needs --draft <model.gguf> with the same vocabulary' };
      if (draftStrategy(facts.draft) !== 'draft-model') {
        return { available: false, reason: `the draft is a ${draftStrategy(facts.draft)} artifact, not a plain draft model: use --strategy ${draftStrategy(facts.draft)}` };
      }
      if (!facts.draft.compatible) return { available: false, reason: `the draft is incompatible: ${facts.draft.reason}` };
      return { available: true };
    default: {
      const arch = ARTIFACT_NAMES[strategy]!;
      if (!facts.draft) return { available: false, reason: `needs --draft <${arch.replace(/^an? /, '')} artifact for this target>` };
      const serves = draftStrategy(facts.draft);
      if (serves !== strategy) {
        return {
          available: false,
          reason:
            serves === 'draft-model'
              ? `the draft is a '${facts.draft.architecture}' model, not ${arch} artifact`
              : `the draft is a ${serves} artifact, not ${arch} artifact`,
        };
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
