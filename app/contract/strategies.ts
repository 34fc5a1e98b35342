// The strategy vocabulary (docs/speculative-decoding.md "Strategies"). A strategy is offered only when the model
// (and, where needed, a compatible draft) supports it AND this engine runs it; otherwise the
// reason says which of the two is missing. Nothing is ever substituted.

/** Draft artifacts that read the target's hidden states, run on llama.cpp's own graphs. */
const ARTIFACT_STRATEGIES = ['dflash', 'eagle3', 'dspark'] as const;
// llama.cpp's own n-gram families (its common_speculative), under llama.cpp's names: each is its
// own algorithm, none of them is our `ngram`
const LLAMA_CPP_NGRAM_STRATEGIES = ['ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache'] as const;

export const STRATEGIES = ['none', 'ngram', 'suffix', 'draft-model', 'mtp', ...ARTIFACT_STRATEGIES, ...LLAMA_CPP_NGRAM_STRATEGIES] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Strategies whose proposer this engine build implements. */
export const ENGINE_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(STRATEGIES);

/** The strategies that propose from the token history alone (no model, no artifact); `suffix` also from the model's earlier replies. */
export const NGRAM_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(['ngram', 'suffix', ...LLAMA_CPP_NGRAM_STRATEGIES]);

/** The strategies that need a draft file next to the target. */
export const DRAFT_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(['draft-model', ...ARTIFACT_STRATEGIES]);

/** Whether a draft file may be given: the draft strategies', and mtp's Gemma 4 assistant (without one, mtp uses the target's NextN layers). */
export function takesDraft(strategy: Strategy): boolean {
  return DRAFT_STRATEGIES.has(strategy) || strategy === 'mtp';
}

export interface StrategyAvailability {
  available: boolean;
  reason?: string;
}

export interface StrategyFacts {
  nextnLayers: number;
  /** the file only drafts: a Gemma 4 assistant or an MTP sidecar (NextN blocks, no trunk) */
  draftOnly?: boolean;
  /** Result of checking a `--draft` artifact against the target, when one was given. */
  draft?: {
    architecture: string;
    /** What the file is (app/models/draft-compat.ts): 'draft-model', 'eagle3', 'dflash', 'dspark' (a DSpark is a dflash GGUF with a Markov head) or 'mtp' (a Gemma 4 assistant). */
    kind?: string;
    compatible: boolean;
    reason?: string;
  };
}

/** The strategy a draft artifact of this architecture serves (anything else is a plain draft model). */
export const DRAFT_ARCHITECTURES: Readonly<Record<string, Strategy>> = {
  dflash: 'dflash',
  eagle3: 'eagle3',
  dspark: 'dspark',
  'gemma4-assistant': 'mtp',
};

/** The strategy a checked draft serves: the kind its check found, else what its architecture says. */
export function draftStrategy(draft: { architecture: string; kind?: string }): Strategy {
  const kind = draft.kind as Strategy | undefined;
  if (kind && takesDraft(kind)) return kind;
  return DRAFT_ARCHITECTURES[draft.architecture] ?? 'draft-model';
}

/** "an eagle3", "a dflash" */
const article = (name: string): string => `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;

/** what a draft file serving `strategy` is: "an eagle3 artifact", "a gemma4-assistant" */
const artifactOf = (strategy: Strategy): string =>
  strategy === 'mtp' ? 'a gemma4-assistant or MTP sidecar' : `${article(strategy)} artifact`;

function modelSupport(strategy: Strategy, facts: StrategyFacts): StrategyAvailability {
  if (facts.draftOnly) {
    return {
      available: false,
      reason:
        'the file has no trunk blocks, only NextN/MTP ones: it is a draft (a gemma4-assistant or MTP sidecar), used with --draft beside its target',
    };
  }
  if (NGRAM_STRATEGIES.has(strategy)) return { available: true };
  switch (strategy) {
    case 'none':
      return { available: true };
    case 'mtp':
      // with a draft, mtp drafts with a Gemma 4 assistant or an MTP sidecar; without, with the target's NextN layers
      if (facts.draft) {
        const serves = draftStrategy(facts.draft);
        if (serves !== 'mtp') {
          return {
            available: false,
            reason: `the draft is ${serves === 'draft-model' ? `a plain '${facts.draft.architecture}' model` : artifactOf(serves)}, not a gemma4-assistant or MTP sidecar`,
          };
        }
        if (!facts.draft.compatible) return { available: false, reason: `the draft is incompatible: ${facts.draft.reason}` };
        return { available: true };
      }
      return facts.nextnLayers > 0
        ? { available: true }
        : {
            available: false,
            reason:
              'the model has no NextN/MTP layers (nextn_predict_layers = 0); a Gemma 4 target drafts with --draft <gemma4-assistant.gguf>',
          };
    case 'draft-model':
      if (!facts.draft) return { available: false, reason: 'needs --draft <model.gguf> with the same vocabulary' };
      if (draftStrategy(facts.draft) !== 'draft-model') {
        const kind = draftStrategy(facts.draft);
        return { available: false, reason: `the draft is ${artifactOf(kind)}, not a plain draft model: use --strategy ${kind}` };
      }
      if (!facts.draft.compatible) return { available: false, reason: `the draft is incompatible: ${facts.draft.reason}` };
      return { available: true };
    default: {
      const arch = article(strategy);
      if (!facts.draft) return { available: false, reason: `needs --draft <${strategy} artifact for this target>` };
      const serves = draftStrategy(facts.draft);
      if (serves !== strategy) {
        return {
          available: false,
          reason:
            serves === 'draft-model'
              ? `the draft is a plain '${facts.draft.architecture}' model, not ${arch} artifact`
              : `the draft is ${artifactOf(serves)}, not ${arch} artifact`,
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

/**
 * What a finished reply's evidence says when its proposer drafted nothing (the CLI's summary,
 * the Acceptance panel): a speculative strategy that proposed no token ran as the autoregressive
 * control, and that is worth saying rather than showing an empty acceptance. Null otherwise.
 */
export function noProposalsNote(strategy: Strategy, proposed: number, fallbacks: readonly Strategy[] = []): string | null {
  if (strategy === 'none' || proposed > 0) return null;
  const members = [strategy, ...fallbacks];
  const why = members.every((m) => NGRAM_STRATEGIES.has(m))
    ? 'no earlier passage of the prompt or reply matched'
    : 'the proposer drafted no token';
  return `${strategyLabel(strategy, fallbacks)} proposed nothing (${why}): this reply ran as the autoregressive control`;
}

/**
 * A strategy list (llama.cpp's `--spec-type a,b`): the proposers asked in order each round, the
 * first that drafts winning it (native/src/proposer_chain.cpp). One name is the list of one.
 * Null when the list can run as a chain, else why not: an unknown or empty name, `none` among
 * others, a name twice, or two members that each need the draft file (a session has one).
 */
export function strategyListProblem(text: string): string | null {
  const names = text.split(',').map((s) => s.trim());
  const known = new Set<string>(STRATEGIES);
  for (const name of names) {
    if (!name) return `the strategy list '${text}' has an empty member`;
    if (!known.has(name)) return `'${name}' is not a strategy (${STRATEGIES.join(', ')})`;
  }
  if (names.length === 1) return null;
  if (names.includes('none')) return `'none' cannot be part of a strategy list (it proposes nothing; give it alone for the control)`;
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) return `'${twice}' appears twice in the strategy list '${text}'`;
  const drafts = names.filter((name) => DRAFT_STRATEGIES.has(name as Strategy));
  if (drafts.length > 1) return `${drafts.join(' and ')} would each need their own --draft file; a chain takes one draft`;
  return null;
}

/** A strategy list's members in order, once strategyListProblem has passed it. */
export function strategyList(text: string): [Strategy, ...Strategy[]] {
  return text.split(',').map((s) => s.trim()) as [Strategy, ...Strategy[]];
}

/** How a chain goes by (engine options, reports): its members joined by commas, as llama.cpp writes --spec-type. */
export function strategyLabel(strategy: Strategy, fallbacks: readonly Strategy[] = []): string {
  return [strategy, ...fallbacks].join(',');
}
