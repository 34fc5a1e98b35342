// How many proposals per round a draft artifact can make, read from its GGUF header the way
// llama.cpp's common_speculative reads it: a DFlash block is the anchor plus block_size - 1 mask
// rows (block_size 16 when the key is absent); an anchor-first DSpark drafts the whole block.
// A larger K would be clamped silently by llama.cpp; Power refuses it with the reason instead.
import type { Strategy } from '../../../app/strategies.js';
import type { GgufInfo } from '../../gguf/types.js';

function scalar(info: GgufInfo, key: string): string | undefined {
  const v = info.metadata.get(key);
  return v && v.type !== 'array' ? String(v.value) : undefined;
}

/**
 * The strategy a draft file serves, from its header as llama.cpp tells them apart
 * (common_speculative_types_from_gguf): a dflash GGUF with a Markov head (markov_w1) is a DSpark.
 */
export function artifactStrategy(draft: GgufInfo): Strategy {
  const arch = scalar(draft, 'general.architecture');
  if (arch === 'eagle3') return 'eagle3';
  if (arch === 'dflash') return draft.tensors.some((t) => t.name === 'markov_w1.weight') ? 'dspark' : 'dflash';
  return 'draft-model';
}

/** The largest K the artifact drafts per round, or null when the strategy sets no such limit. */
export function artifactMaxK(strategy: Strategy, draft: GgufInfo): number | null {
  if (strategy !== 'dflash' && strategy !== 'dspark') return null;
  const block = Number(scalar(draft, 'dflash.block_size') ?? 16);
  const fromAnchor = (scalar(draft, 'dflash.sample_from_anchor') ?? 'true') === 'true';
  return strategy === 'dspark' && fromAnchor ? block : block - 1;
}

/** null when K fits the artifact, else why not. */
export function artifactKProblem(strategy: Strategy, draft: GgufInfo, k: number): string | null {
  const max = artifactMaxK(strategy, draft);
  if (max === null || k <= max) return null;
  return `K = ${k} is more than this ${strategy} artifact drafts per round (${max}, from its dflash.block_size): lower K to ${Math.max(max, 1)}`;
}
