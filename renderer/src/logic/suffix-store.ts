// What the "Remember earlier replies" setting says about the loaded model's store of earlier
// replies (the `suffix` drafter's): its size in tokens and on disk, and why it is not in use; and
// what a reply's rounds say of where its drafts came from (this request or that store).
import type { DraftSource } from '../../../app/contract/engine-types.js';
import { sourceStats, type SourceRound } from '../../../app/contract/report/stats.js';
import type { SuffixStoreState } from '../api-types.js';
import { bytes } from './format.js';

export function suffixStoreLine(state: SuffixStoreState | null): string {
  if (!state) return 'Store of earlier replies: not read yet';
  if (!state.modelId) return 'Store of earlier replies: no model loaded';
  const disk = state.bytes > 0 ? `${bytes(state.bytes)} on disk` : 'nothing on disk';
  const held =
    state.tokens === null ? `${disk} (read at this model's first suffix reply)` : `${state.tokens.toLocaleString('en-US')} tokens, ${disk}`;
  const off = state.remember ? '' : '; off: new replies are not added or drafted from';
  return `Store for this model: ${held}${off}${state.problem ? ` (${state.problem})` : ''}`;
}

/** A `suffix` reply's rounds by where their draft came from, as the Acceptance panel lists them. */
export interface SourceFigure {
  source: DraftSource;
  label: string;
  value: string;
}

const SOURCE_LABELS: Record<DraftSource, string> = {
  request: 'Drafted from this request',
  store: 'Drafted from earlier replies',
};

/**
 * One line per draft source of a reply (none for a drafter that does not tell): "4 rounds · 9 /
 * 7 · expected 1.9, got 1.75 a round", so a user sees why `suffix` drafted long or short. The
 * request covers a chat's earlier turns (they are in its prompt).
 */
export function sourceFigures(rounds: readonly SourceRound[]): SourceFigure[] {
  return sourceStats(rounds).map((s) => ({
    source: s.source,
    label: SOURCE_LABELS[s.source],
    value: `${s.rounds} round${s.rounds === 1 ? '' : 's'} · ${s.drafted} / ${s.accepted} · expected ${(s.meanExpected ?? 0).toFixed(2)}, got ${(s.meanAccepted ?? 0).toFixed(2)} a round`,
  }));
}
