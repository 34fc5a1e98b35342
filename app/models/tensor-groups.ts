// What a model's tensors are stored as, by the part of the model they belong to (`power info`,
// `power quantize`), read from the GGUF header alone. The groups follow llama.cpp's tensor
// names: the NextN/MTP block is the last nextn_predict_layers blocks, its own output head
// (nextn.shared_head_head) is the draft head.
import type { GgufInfo } from '../gguf/types.js';

export const TENSOR_GROUPS = ['mtp', 'draftHead', 'ffn', 'attention', 'embeddings', 'other'] as const;
export type TensorGroup = (typeof TENSOR_GROUPS)[number];

export const GROUP_LABELS: Readonly<Record<TensorGroup, string>> = {
  mtp: 'mtp block',
  draftHead: 'draft head',
  ffn: 'ffn',
  attention: 'attention',
  embeddings: 'embeddings/output',
  other: 'other',
};

export interface GroupTypes {
  group: TensorGroup;
  tensors: number;
  /** tensors per ggml type name (q6_K, q4_0, f32, ...) */
  types: Record<string, number>;
}

/** ggml's own name of a type (ggml_type_name: q4_K, iq4_xs, bf16) from the reader's upper-case one. */
export function ggmlTypeName(typeName: string): string {
  return typeName.toLowerCase().replace(/_k$/, '_K');
}

/** The NextN/MTP blocks' indexes: the last nextn_predict_layers of block_count. */
export function nextnBlocks(info: GgufInfo): number[] {
  const arch = info.metadata.get('general.architecture');
  if (arch?.type !== 'string') return [];
  const count = (key: string): number => {
    const v = info.metadata.get(`${arch.value}.${key}`);
    return v && (typeof v.value === 'number' || typeof v.value === 'bigint') ? Number(v.value) : 0;
  };
  const blocks = count('block_count');
  const nextn = Math.min(count('nextn_predict_layers'), blocks);
  return Array.from({ length: nextn }, (_, i) => blocks - nextn + i);
}

/** The group a tensor belongs to; `mtpBlocks` from nextnBlocks. */
export function tensorGroup(name: string, mtpBlocks: ReadonlySet<number>): TensorGroup {
  if (/\.nextn\.shared_head_head\./.test(name)) return 'draftHead';
  const block = /^blk\.(\d+)\./.exec(name);
  if ((block && mtpBlocks.has(Number(block[1]))) || name.includes('.nextn.')) return 'mtp';
  if (/^(token_embd|output|per_layer_token_embd)\.weight$/.test(name)) return 'embeddings';
  if (name.includes('_norm.')) return 'other';
  if (/^blk\.\d+\.ffn_/.test(name)) return 'ffn';
  if (/^blk\.\d+\.attn_/.test(name)) return 'attention';
  return 'other';
}

/** Every group, in TENSOR_GROUPS order, with its tensors counted by type (empty groups included). */
export function tensorTypesByGroup(info: GgufInfo): GroupTypes[] {
  const mtp = new Set(nextnBlocks(info));
  const out = new Map<TensorGroup, GroupTypes>(TENSOR_GROUPS.map((group) => [group, { group, tensors: 0, types: {} }]));
  for (const t of info.tensors) {
    const g = out.get(tensorGroup(t.name, mtp))!;
    const type = ggmlTypeName(t.typeName);
    g.tensors += 1;
    g.types[type] = (g.types[type] ?? 0) + 1;
  }
  return [...out.values()];
}

/** One line per group that has tensors: `mtp block: q6_K ×2, q8_0 ×6, f32 ×4`. */
export function describeGroups(groups: readonly GroupTypes[]): string[] {
  const width = Math.max(...TENSOR_GROUPS.map((g) => GROUP_LABELS[g].length)) + 1;
  return groups
    .filter((g) => g.tensors > 0)
    .map((g) => {
      const types = Object.entries(g.types)
        .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
        .map(([type, n]) => `${type} ×${n}`);
      return `${(GROUP_LABELS[g.group] + ':').padEnd(width)} ${types.join(', ')}`;
    });
}
