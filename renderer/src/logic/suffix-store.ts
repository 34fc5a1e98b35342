// What the "Remember earlier replies" setting says about the loaded model's store of earlier
// replies (the `suffix` drafter's): its size in tokens and on disk, and why it is not in use.
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
