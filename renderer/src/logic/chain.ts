// A chain of strategies (llama.cpp's --spec-type a,b): the Draft method picker's "then try"
// options, the member that takes the draft file, how a chain reads, and which member drafted
// how much of a reply. The rules of what may follow what are the contract's (chainProblem).
import { chainProblem } from '../../../app/contract/api/common.js';
import { memberStats, type MemberStats } from '../../../app/contract/report/stats.js';
import type { ApiRound, Strategies, Strategy } from '../api-types.js';
import { needsDraft, type PickerOption } from './draft-options.js';
import { percent } from './format.js';

/** "ngram-mod → mtp": a chain as the app shows it (one strategy: its name). */
export function chainLabel(strategy: string, fallbacks: readonly string[] = []): string {
  return [strategy, ...fallbacks].join(' → ');
}

/** The chain's member that loads the draft file, null when none needs one. */
export function draftMember(members: readonly Strategy[], table: Strategies | null): Strategy | null {
  return members.find((m) => needsDraft(m, table)) ?? null;
}

/**
 * Why `next` cannot follow the chain so far, null when it can: the contract's chainProblem,
 * and (what it cannot know) two members that each need a draft file for this target, such as
 * mtp on a target without NextN layers next to draft-model.
 */
function nextProblem(method: Strategy, fallbacks: readonly Strategy[], next: Strategy, table: Strategies | null): string | null {
  const problem = chainProblem(method, [...fallbacks, next]);
  if (problem) return problem;
  const taken = draftMember([method, ...fallbacks], table);
  if (taken && needsDraft(next, table)) return `${taken} and ${next} would each need a draft file for this target; a chain takes one draft`;
  return null;
}

/**
 * The "then try" options: the Draft method picker's own (what the target can serve, from the
 * same availability table), each disabled with the reason when it cannot follow the chain.
 */
export function fallbackOptions(
  method: Strategy,
  fallbacks: readonly Strategy[],
  methods: readonly PickerOption[],
  table: Strategies | null,
): PickerOption[] {
  return methods
    .filter((o) => o.value !== 'none')
    .map((o) => {
      if (o.disabled) return o;
      const problem = nextProblem(method, fallbacks, o.value as Strategy, table);
      return problem ? { ...o, disabled: true, reason: problem } : o;
    });
}

/** The fallbacks that still hold after the method or the target changed, in their order. */
export function settleFallbacks(
  method: Strategy,
  fallbacks: readonly Strategy[],
  methods: readonly PickerOption[],
  table: Strategies | null,
): Strategy[] {
  const kept: Strategy[] = [];
  for (const f of fallbacks) {
    const offered = methods.some((o) => o.value === f && !o.disabled);
    if (offered && nextProblem(method, kept, f, table) === null) kept.push(f);
  }
  return kept;
}

/** One member's share of a reply (the report's memberStats), with its place in the chain. */
export type MemberFigures = MemberStats & { member: number };

export interface ChainFigures {
  members: MemberFigures[];
  /** rounds no member drafted (each ran as one autoregressive step) */
  undrafted: number;
}

/** Which member of a chain drafted how many rounds of a reply, and their acceptance; null for one strategy. */
export function chainFigures(rounds: readonly ApiRound[], strategy: Strategy, fallbacks: readonly Strategy[] = []): ChainFigures | null {
  if (fallbacks.length === 0) return null;
  const members = memberStats([strategy, ...fallbacks], rounds).map((m, member) => ({ ...m, member }));
  return { members, undrafted: rounds.length - members.reduce((n, m) => n + m.rounds, 0) };
}

/** "ngram-mod 3 rounds (66.7%)": one member's share of a reply. */
export function memberText(m: MemberFigures): string {
  return `${m.strategy} ${m.rounds} round${m.rounds === 1 ? '' : 's'} (${m.acceptanceRate === null ? 'nothing proposed' : percent(m.acceptanceRate)})`;
}

/** How a reply or profile drafted beyond K and S, in words: p-min, adaptive K, FR (only what is set). */
export function draftingParts(p: { pMin?: number | undefined; adaptiveK?: boolean | undefined; frVocab?: number | undefined }): string[] {
  const parts: string[] = [];
  if (p.pMin) parts.push(`p-min ${p.pMin}`);
  if (p.adaptiveK) parts.push('adaptive K');
  if (p.frVocab !== undefined) parts.push(`FR ${p.frVocab}`);
  return parts;
}

/**
 * What a reply's figures add for its chain and drafting policy: "by ngram-mod 3 rounds (66.7%),
 * mtp 5 rounds (40.0%)", then p-min, adaptive K, FR when set.
 */
export function chainStatsParts(
  rounds: readonly ApiRound[],
  message: {
    strategy: Strategy;
    fallbacks?: Strategy[] | undefined;
    pMin?: number | undefined;
    adaptiveK?: boolean | undefined;
    frVocab?: number | undefined;
  },
): string[] {
  const chain = chainFigures(rounds, message.strategy, message.fallbacks);
  return [...(chain ? [`by ${chain.members.map(memberText).join(', ')}`] : []), ...draftingParts(message)];
}

/** For a chain's reply: the member that drafted each round, by round index (a token's `round`); null for one strategy. */
export function roundMembers(rounds: readonly ApiRound[], strategy: string, fallbacks: readonly string[] = []): Map<number, string> | null {
  if (fallbacks.length === 0) return null;
  const members = [strategy, ...fallbacks];
  const out = new Map<number, string>();
  for (const r of rounds) {
    const name = r.member === undefined ? undefined : members[r.member];
    if (name) out.set(r.index, name);
  }
  return out;
}
