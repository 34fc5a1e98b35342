// Whether a draft can propose tokens for a target, read from both GGUF headers before anything
// is loaded. The proposals are token ids, so both must share the tokenizer exactly (type, size,
// special tokens, every token's bytes). Artifacts that read the target's hidden states (EAGLE-3,
// DFlash, DSpark) must also match what llama.cpp feeds them; where it would abort (GGML_ABORT on
// a target layer it cannot extract) or read garbage (features of another width), the check
// refuses first, with the reason. A Gemma 4 assistant (gemma4-assistant, strategy mtp) attends
// over the target's KV cache: it must fit the target's hidden size, its last two layers' kinds,
// their KV heads and head sizes, and its sliding window (native/src/proposer_common_checks.cpp
// checks the same on the loaded pair). An MTP sidecar (a target architecture's NextN block in a
// file of its own, strategy mtp) must be of the target's architecture, vocabulary and width.
import { readBuildInfo } from '../engine/build-info.js';
import type { GgufInfo, GgufValue } from '../gguf/types.js';

/**
 * What a draft file is, told apart as llama.cpp does (common_speculative_types_from_gguf); 'mtp':
 * a Gemma 4 assistant, which drafts as llama.cpp's draft-mtp.
 */
export type DraftKind = 'draft-model' | 'eagle3' | 'dflash' | 'dspark' | 'mtp';

/** The architecture of a Gemma 4 assistant and of the target it drafts for. */
export const ASSISTANT_ARCH = 'gemma4-assistant';
const ASSISTANT_TARGET_ARCH = 'gemma4';

/** Facts of an artifact that reads the target, as its header declares them. */
export interface ArtifactFacts {
  /** The artifact's own hidden size. */
  hidden: number;
  /** Target layers whose inputs it reads (`<arch>.target_layers`). */
  targetLayers: number[];
  /** Hidden size of the target it was made for (eagle3 declares it; dflash's equals its own). */
  targetHidden: number;
  /** Draft vocabulary size when a d2t map narrows it (reduced-vocabulary exports). */
  draftVocab?: number;
  ownEmbeddings: boolean;
  ownOutput: boolean;
  /** DFlash/DSpark: `dflash.block_size` (llama.cpp's default 16 when absent). */
  blockSize?: number;
  /** DSpark: drafts at the anchor itself (`dflash.sample_from_anchor`, default true). */
  sampleFromAnchor?: boolean;
  /** DFlash/DSpark: the mask token of the noise block. */
  maskToken?: number;
  /**
   * Most tokens one round can propose: DFlash block_size − 1, anchor-first DSpark block_size;
   * undefined = no limit of the artifact's own (EAGLE-3 drafts step by step).
   */
  maxDraft?: number;
}

export interface DraftCompatibility {
  /** general.architecture of the draft file. */
  architecture: string;
  kind: DraftKind;
  compatible: boolean;
  reason?: string;
  /** For eagle3/dflash/dspark artifacts (present when the header could be read). */
  artifact?: ArtifactFacts;
}

/**
 * Target architectures whose llama.cpp graph exposes its layer inputs (t_layer_inp, read by
 * llama_get_embeddings_layer_inp): the only ones an EAGLE-3/DFlash artifact can read. Read from
 * the release's source when the addon is built (build-info.json): the engine's own check is
 * compiled with the same list.
 */
export function layerInputTargets(): ReadonlySet<string> {
  const list = readBuildInfo().layerInputArchitectures;
  if (!list) throw new Error('the native addon was built before it recorded layerInputArchitectures: run npm install');
  return new Set(list);
}

function meta(info: GgufInfo, key: string): GgufValue | undefined {
  return info.metadata.get(key);
}

function scalar(info: GgufInfo, key: string): string | undefined {
  const v = meta(info, key);
  return v && v.type !== 'array' ? String(v.value) : undefined;
}

interface TokenList {
  text: readonly string[];
  raw: ReadonlyMap<number, Uint8Array> | undefined;
}

function tokens(info: GgufInfo): TokenList | undefined {
  const v = meta(info, 'tokenizer.ggml.tokens');
  return v && v.type === 'array' && v.itemType === 'string' ? { text: v.value, raw: v.raw } : undefined;
}

/** A token's bytes as stored in the file (decoded text loses invalid UTF-8). */
function tokenBytes(list: TokenList, i: number): Uint8Array {
  return list.raw?.get(i) ?? Buffer.from(list.text[i]!, 'utf8');
}

function sameToken(a: TokenList, b: TokenList, i: number): boolean {
  if (a.text[i] !== b.text[i]) return false;
  if (!a.raw?.has(i) && !b.raw?.has(i)) return true;
  return Buffer.from(tokenBytes(a, i)).equals(tokenBytes(b, i));
}

function num(info: GgufInfo, key: string): number | undefined {
  const v = meta(info, key);
  if (!v || v.type === 'array' || v.type === 'string' || v.type === 'bool') return undefined;
  return Number(v.value);
}

function ints(info: GgufInfo, key: string): number[] | undefined {
  const v = meta(info, key);
  if (!v || v.type !== 'array' || v.itemType === 'string' || v.itemType === 'bool') return undefined;
  return (v.value as (number | bigint)[]).map(Number);
}

function tensor(info: GgufInfo, name: string) {
  return info.tensors.find((t) => t.name === name);
}

/**
 * An MTP sidecar: a target architecture's file that holds NextN/MTP layers but no trunk (no
 * blk.0 tensors), which llama.cpp loads as an MTP-only model to draft for a target of that
 * architecture (the mtp proposer on the sidecar's MTP context).
 */
function isMtpSidecar(draft: GgufInfo): boolean {
  const arch = scalar(draft, 'general.architecture') ?? '';
  return (num(draft, `${arch}.nextn_predict_layers`) ?? 0) > 0 && !tensor(draft, 'blk.0.attn_norm.weight');
}

export function draftKind(draft: GgufInfo): DraftKind {
  const arch = scalar(draft, 'general.architecture');
  if (arch === 'eagle3') return 'eagle3';
  if (arch === ASSISTANT_ARCH) return 'mtp';
  if (isMtpSidecar(draft)) return 'mtp';
  // the Markov head distinguishes draft-dspark from draft-dflash
  if (arch === 'dflash') return tensor(draft, 'markov_w1.weight') ? 'dspark' : 'dflash';
  return 'draft-model';
}

/** A target's width and depth as llama.cpp counts them (NextN/MTP blocks are not layers). */
function targetShape(target: GgufInfo): { arch: string; hidden?: number; layers?: number } {
  const arch = scalar(target, 'general.architecture') ?? 'unknown';
  const blocks = num(target, `${arch}.block_count`);
  const nextn = num(target, `${arch}.nextn_predict_layers`) ?? 0;
  return { arch, hidden: num(target, `${arch}.embedding_length`), layers: blocks === undefined ? undefined : blocks - nextn };
}

/** Reads an artifact's facts; a string is the reason they cannot be read. */
export function artifactFacts(draft: GgufInfo, kind: Exclude<DraftKind, 'draft-model' | 'mtp'>): ArtifactFacts | string {
  const arch = kind === 'eagle3' ? 'eagle3' : 'dflash';
  const hidden = num(draft, `${arch}.embedding_length`);
  if (hidden === undefined) return `${arch}.embedding_length is missing`;
  const targetLayers = ints(draft, `${arch}.target_layers`);
  if (!targetLayers || targetLayers.length === 0) return `${arch}.target_layers is missing (the target layers it reads)`;
  const d2t = tensor(draft, 'd2t');
  const facts: ArtifactFacts = {
    hidden,
    targetLayers,
    targetHidden: kind === 'eagle3' ? (num(draft, 'eagle3.target_hidden_size') ?? 0) : hidden,
    ...(d2t ? { draftVocab: d2t.shape[0] } : {}),
    ownEmbeddings: tensor(draft, 'token_embd.weight') !== undefined,
    ownOutput: tensor(draft, 'output.weight') !== undefined,
  };
  if (kind !== 'eagle3') {
    const blockSize = num(draft, 'dflash.block_size') ?? 16;
    const anchor = meta(draft, 'dflash.sample_from_anchor');
    const sampleFromAnchor = anchor === undefined || (anchor.type === 'bool' ? anchor.value : String(anchor.value) === 'true');
    const mask = num(draft, 'tokenizer.ggml.mask_token_id');
    Object.assign(facts, {
      blockSize,
      ...(kind === 'dspark' ? { sampleFromAnchor } : {}),
      ...(mask !== undefined ? { maskToken: mask } : {}),
      maxDraft: kind === 'dspark' && sampleFromAnchor ? blockSize : blockSize - 1,
    });
  }
  return facts;
}

/**
 * Whether an artifact can propose K tokens per round: a DFlash block drafts at most block_size − 1
 * (anchor-first DSpark block_size). llama.cpp would silently clamp K; Power refuses instead, so a
 * profile never runs with another K than it says.
 */
export function checkDraftK(compat: DraftCompatibility, k: number): string | undefined {
  const max = compat.artifact?.maxDraft;
  if (max === undefined || k <= max) return undefined;
  return `K = ${k} exceeds what this ${compat.kind} artifact drafts in one round (block size ${compat.artifact?.blockSize}: at most ${max})`;
}

function checkArtifact(
  target: GgufInfo,
  draft: GgufInfo,
  kind: Exclude<DraftKind, 'draft-model' | 'mtp'>,
  facts: ArtifactFacts,
): string | undefined {
  const t = targetShape(target);
  if (!layerInputTargets().has(t.arch))
    return `llama.cpp does not expose the layer inputs of '${t.arch}' targets, which a ${kind} artifact reads`;
  if (t.hidden === undefined || t.layers === undefined) return 'the target header lacks its embedding length or block count';
  if (kind === 'eagle3' && facts.targetLayers.length !== 3) {
    return `an eagle3 artifact reads exactly 3 target layers (it declares ${facts.targetLayers.length})`;
  }
  const outside = facts.targetLayers.find((l) => !Number.isInteger(l) || l < 0 || l >= t.layers!);
  if (outside !== undefined) {
    return `it reads target layer ${outside}, but the target has layers 0..${t.layers - 1} (llama.cpp would abort)`;
  }
  if (facts.targetHidden !== t.hidden) {
    return kind === 'eagle3'
      ? `it was made for target hidden size ${facts.targetHidden} (eagle3.target_hidden_size), the target has ${t.hidden}`
      : `its hidden size ${facts.hidden} differs from the target's ${t.hidden} (a ${kind} artifact fuses target features of its own width)`;
  }
  // without its own embeddings or head the artifact borrows the target's: their rows must fit its hidden size
  if ((!facts.ownEmbeddings || !facts.ownOutput) && facts.hidden !== t.hidden) {
    return `it borrows the target's ${facts.ownEmbeddings ? 'output head' : 'token embeddings'}, but its hidden size ${facts.hidden} differs from the target's ${t.hidden}`;
  }
  const vocab = tokens(target)?.text.length ?? 0;
  const embd = tensor(draft, 'token_embd.weight');
  if (embd && embd.shape[1] !== vocab) return `its token embeddings cover ${embd.shape[1]} tokens, the target has ${vocab}`;
  const rows = facts.draftVocab ?? vocab;
  if (facts.draftVocab !== undefined && (facts.draftVocab < 1 || facts.draftVocab > vocab)) {
    return `its token map (d2t) has ${facts.draftVocab} entries for a ${vocab}-token vocabulary`;
  }
  const out = tensor(draft, 'output.weight');
  if (out && out.shape[1] !== rows) return `its output head has ${out.shape[1]} rows, expected ${rows}`;
  if (kind !== 'eagle3') {
    if (facts.maskToken === undefined) return 'it declares no mask token (tokenizer.ggml.mask_token_id), which its noise block needs';
    if (facts.maskToken < 0 || facts.maskToken >= vocab) return `its mask token ${facts.maskToken} is outside the vocabulary`;
    if ((facts.blockSize ?? 0) < 2) return `its block size ${facts.blockSize} leaves no position to draft`;
  }
  return undefined;
}

/** A per-layer key as llama.cpp reads it (get_key_or_arr): an array of one value per layer, or one value for all. */
function perLayer(info: GgufInfo, key: string, layers: number): (number | boolean)[] | undefined {
  const v = meta(info, key);
  if (!v) return undefined;
  if (v.type !== 'array')
    return v.type === 'string' ? undefined : Array<number | boolean>(layers).fill(v.type === 'bool' ? v.value : Number(v.value));
  if (v.itemType === 'string' || v.value.length !== layers) return undefined;
  return (v.value as (number | bigint | boolean)[]).map((x) => (typeof x === 'boolean' ? x : Number(x)));
}

/** One layer's attention as the KV cache stores it. */
interface LayerAttention {
  swa: boolean;
  kvHeads: number;
  headSize: number;
}

function attentionLayers(info: GgufInfo, arch: string, layers: number): LayerAttention[] | string {
  const swa = perLayer(info, `${arch}.attention.sliding_window_pattern`, layers);
  const heads = perLayer(info, `${arch}.attention.head_count`, layers);
  const kvHeads = perLayer(info, `${arch}.attention.head_count_kv`, layers) ?? heads;
  const full = num(info, `${arch}.attention.key_length`);
  const slide = num(info, `${arch}.attention.key_length_swa`) ?? full;
  if (!swa || !kvHeads || full === undefined || slide === undefined) {
    return `${arch}: the sliding-window pattern, head counts or key lengths are missing`;
  }
  return swa.map((s, i) => ({ swa: s === true || s === 1, kvHeads: Number(kvHeads[i]), headSize: s === true || s === 1 ? slide : full }));
}

/** Why a Gemma 4 assistant cannot draft for `target` (undefined: it can); after the vocabulary check. */
function checkAssistant(target: GgufInfo, draft: GgufInfo): string | undefined {
  const t = targetShape(target);
  const a = ASSISTANT_ARCH;
  if (t.hidden === undefined || t.layers === undefined || t.layers < 2)
    return 'the target header lacks its embedding length or block count';
  const hidden = num(draft, `${a}.embedding_length_out`);
  if (hidden !== t.hidden) {
    return `it was made for a target hidden size of ${hidden} (${a}.embedding_length_out), the target has ${t.hidden}`;
  }
  const tw = num(target, `${t.arch}.attention.sliding_window`);
  const aw = num(draft, `${a}.attention.sliding_window`);
  if (tw !== aw) return `it was made for a sliding window of ${aw} cells, the target's is ${tw}`;
  const tLayers = attentionLayers(target, t.arch, t.layers);
  if (typeof tLayers === 'string') return tLayers;
  const aLayers = attentionLayers(draft, a, num(draft, `${a}.block_count`) ?? 0);
  if (typeof aLayers === 'string') return aLayers;
  // llama.cpp shares the target's last layer with its full-attention layers, the one before with its sliding ones
  const shared = (swa: boolean) => t.layers! - (swa ? 2 : 1);
  for (const swa of [false, true]) {
    if (tLayers[shared(swa)]!.swa !== swa) {
      return `it reads target layer ${shared(swa)} as ${swa ? 'sliding-window' : 'full'} attention, but that layer is ${swa ? 'full' : 'sliding-window'} attention`;
    }
  }
  if (!aLayers.some((l) => l.swa)) return 'it has no sliding-window layer (llama.cpp requires one)';
  for (const [i, l] of aLayers.entries()) {
    const tl = tLayers[shared(l.swa)]!;
    if (l.kvHeads !== tl.kvHeads || l.headSize !== tl.headSize) {
      return `its layer ${i} reads ${l.kvHeads} KV heads of size ${l.headSize}, the target's ${l.swa ? 'sliding-window' : 'full-attention'} cache holds ${tl.kvHeads} of size ${tl.headSize}`;
    }
  }
  return undefined;
}

export function checkDraftCompatibility(target: GgufInfo, draft: GgufInfo): DraftCompatibility {
  const architecture = scalar(draft, 'general.architecture') ?? 'unknown';
  const kind = draftKind(draft);
  let artifact: ArtifactFacts | undefined;
  const no = (reason: string): DraftCompatibility => ({ architecture, kind, compatible: false, reason, ...(artifact ? { artifact } : {}) });
  const sidecar = kind === 'mtp' && architecture !== ASSISTANT_ARCH;
  if (sidecar) {
    const targetArch = scalar(target, 'general.architecture') ?? 'unknown';
    if (targetArch !== architecture) return no(`the MTP sidecar is a '${architecture}' model, the target a '${targetArch}' one`);
  } else if (kind === 'mtp') {
    const targetArch = scalar(target, 'general.architecture') ?? 'unknown';
    if (targetArch !== ASSISTANT_TARGET_ARCH) return no(`a ${ASSISTANT_ARCH} drafts for a gemma4 target, this one is '${targetArch}'`);
  } else if (kind !== 'draft-model') {
    const facts = artifactFacts(draft, kind);
    if (typeof facts === 'string') return no(facts);
    artifact = facts;
  }

  const tModel = scalar(target, 'tokenizer.ggml.model');
  const dModel = scalar(draft, 'tokenizer.ggml.model');
  if (tModel !== dModel) return no(`tokenizer type differs (target ${tModel}, draft ${dModel})`);

  const tTokens = tokens(target);
  const dTokens = tokens(draft);
  if (!tTokens || !dTokens) return no('a vocabulary is missing from the GGUF metadata');
  if (tTokens.text.length !== dTokens.text.length) {
    return no(`vocabulary size differs (target ${tTokens.text.length}, draft ${dTokens.text.length})`);
  }
  for (const key of ['bos_token_id', 'eos_token_id', 'eot_token_id']) {
    const t = scalar(target, `tokenizer.ggml.${key}`);
    const d = scalar(draft, `tokenizer.ggml.${key}`);
    if (t !== d) return no(`special token ${key} differs (target ${t}, draft ${d})`);
  }
  // compared as bytes: two different invalid byte sequences decode to the same text
  const mismatch = tTokens.text.findIndex((_, i) => !sameToken(tTokens, dTokens, i));
  if (mismatch >= 0) {
    if (tTokens.text[mismatch] !== dTokens.text[mismatch]) {
      return no(`token ${mismatch} differs (target '${tTokens.text[mismatch]}', draft '${dTokens.text[mismatch]}')`);
    }
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    return no(
      `token ${mismatch} differs in its bytes (target 0x${hex(tokenBytes(tTokens, mismatch))}, draft 0x${hex(tokenBytes(dTokens, mismatch))})`,
    );
  }
  if (kind !== 'draft-model' && kind !== 'mtp' && artifact) {
    const reason = checkArtifact(target, draft, kind, artifact);
    if (reason) return no(reason);
  }
  if (sidecar) {
    // its head reads the target's hidden rows
    const hidden = num(draft, `${architecture}.embedding_length`);
    const t = targetShape(target).hidden;
    if (hidden !== t) return no(`the MTP sidecar's hidden size ${hidden} differs from the target's ${t}`);
  } else if (kind === 'mtp') {
    const reason = checkAssistant(target, draft);
    if (reason) return no(reason);
  }
  return { architecture, kind, compatible: true, ...(artifact ? { artifact } : {}) };
}
