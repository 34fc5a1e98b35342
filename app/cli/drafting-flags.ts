// How `power generate` drafts beyond K and S: --strategy as a list (a chain, llama.cpp's
// --spec-type a,b), --p-min and --adaptive-k; each flag overrides its profile key (spec_mode,
// spec_p_min, spec_adaptive_k).
import type { Profile } from '../contract/profile.js';
import { STRATEGIES, strategyList, strategyListProblem, type Strategy } from '../contract/strategies.js';
import { choice, num, str, type Parsed } from './args.js';
import { UsageError } from './errors.js';

export const DRAFTING_FLAGS = {
  'p-min': { type: 'string' },
  'adaptive-k': { type: 'boolean' },
} as const;

export interface Drafting {
  strategy: Strategy;
  /** the chain's members after the first ([]: one strategy) */
  fallbacks: Strategy[];
  pMin: number;
  adaptiveK: boolean;
}

/** --strategy (one name or a list), --p-min, --adaptive-k, else the profile's keys; a usage error for a bad one. */
export function draftingFromFlags(values: Parsed['values'], profile: Profile | undefined): Drafting {
  const flag = str(values, 'strategy');
  // one name is checked as any other choice; a list as a chain
  if (flag !== undefined && !flag.includes(',')) choice(values, 'strategy', STRATEGIES);
  const text = flag ?? profile?.spec_mode ?? 'none';
  const problem = strategyListProblem(text);
  if (problem) throw new UsageError(`--strategy: ${problem}`);
  const [strategy, ...fallbacks] = strategyList(text);
  return {
    strategy,
    fallbacks,
    pMin: num(values, 'p-min', { min: 0, max: 1 }) ?? profile?.spec_p_min ?? 0,
    adaptiveK: values['adaptive-k'] === true || profile?.spec_adaptive_k === true,
  };
}
