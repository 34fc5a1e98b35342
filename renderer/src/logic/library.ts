// The model library as the Models dialog and the Model picker show it: models to chat with,
// draft models (smaller members of a family, or files named as drafts) and draft artifacts
// (EAGLE-3, DFlash, DSpark heads that only propose for a target). The service does not
// classify entries, so the kind is read from what the GGUF header says.
import { DRAFT_ARCHITECTURES, type Strategy } from '../../../app/contract/strategies.js';
import type { Draft, ModelEntry, Strategies } from '../api-types.js';

export type EntryKind = 'model' | 'draft' | 'artifact';

export interface LibraryGroups {
  models: ModelEntry[];
  drafts: ModelEntry[];
  artifacts: ModelEntry[];
}

/** "draft" as a word of the file name: llama-draft.gguf, Draft_0.5B, swa-draft-close */
const DRAFT_WORD = /(^|[-_.\s])draft([-_.\s]|$)/i;
/** an MTP sidecar's name (mtp-X.gguf: X's NextN block in a file of its own) */
const SIDECAR_NAME = /^mtp-/i;

/** A draft proposes for a model at least this many times its size (same architecture and vocabulary). */
const DRAFT_RATIO = 2;

export function isArtifact(entry: ModelEntry): boolean {
  return entry.facts !== null && entry.facts.architecture in DRAFT_ARCHITECTURES;
}

export function entryKind(entry: ModelEntry, all: readonly ModelEntry[]): EntryKind {
  if (isArtifact(entry)) return 'artifact';
  if (DRAFT_WORD.test(entry.name) || SIDECAR_NAME.test(entry.name)) return 'draft';
  const f = entry.facts;
  if (!f || f.parameters <= 0) return 'model';
  // a model with its own NextN/MTP head drafts for itself: a target, whatever its family holds
  if (f.nextnLayers > 0) return 'model';
  const larger = all.some(
    (o) =>
      o.id !== entry.id &&
      o.facts !== null &&
      o.problem === null &&
      !isArtifact(o) &&
      o.facts.architecture === f.architecture &&
      o.facts.vocabSize === f.vocabSize &&
      o.facts.parameters >= f.parameters * DRAFT_RATIO,
  );
  return larger ? 'draft' : 'model';
}

export function groupLibrary(entries: readonly ModelEntry[]): LibraryGroups {
  const groups: LibraryGroups = { models: [], drafts: [], artifacts: [] };
  for (const e of entries) {
    const kind = entryKind(e, entries);
    groups[kind === 'model' ? 'models' : kind === 'draft' ? 'drafts' : 'artifacts'].push(e);
  }
  return groups;
}

const usable = (e: ModelEntry): boolean => e.problem === null && e.facts !== null;

/** The model a fresh library starts with: the largest usable model (never a draft or an artifact). */
export function defaultTarget(entries: readonly ModelEntry[]): string | null {
  const models = groupLibrary(entries).models.filter(usable);
  let best: ModelEntry | null = null;
  for (const m of models) if (!best || m.sizeBytes > best.sizeBytes) best = m;
  return best?.id ?? null;
}

export interface MethodChoice {
  method: Strategy;
  draftId: string | null;
}

/**
 * The best method a target can serve with this library: its own MTP layers, else a compatible
 * draft model (the library's drafts of its architecture first), else ngram, else none.
 */
export function bestMethod(
  target: ModelEntry | undefined,
  strategies: Strategies | null,
  drafts: readonly Draft[],
  entries: readonly ModelEntry[],
): MethodChoice {
  if (strategies?.mtp?.available) return { method: 'mtp', draftId: null };
  const byId = new Map(entries.map((e) => [e.id, e]));
  // a Gemma 4 assistant in the library that fits this target: its own MTP drafter
  const assistant = drafts.find((d) => d.strategy === 'mtp' && d.compatible && byId.get(d.modelId)?.problem == null);
  if (assistant) return { method: 'mtp', draftId: assistant.modelId };
  const rank = (d: Draft): number => {
    const e = byId.get(d.modelId);
    if (!e) return 3;
    const draftKind = entryKind(e, entries) === 'draft';
    const sameArch = target?.facts && e.facts ? e.facts.architecture === target.facts.architecture : false;
    return draftKind && sameArch ? 0 : draftKind ? 1 : 2;
  };
  const candidates = drafts
    .filter((d) => d.strategy === 'draft-model' && d.compatible && byId.get(d.modelId)?.problem == null)
    .filter((d) => byId.get(d.modelId) === undefined || entryKind(byId.get(d.modelId)!, entries) === 'draft')
    .sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  if (candidates[0]) return { method: 'draft-model', draftId: candidates[0].modelId };
  if (!strategies || strategies.ngram?.available !== false) return { method: 'ngram', draftId: null };
  return { method: 'none', draftId: null };
}

/** What is wrong with a path typed into the Models dialog, before it is sent (null: fine). */
export function addPathProblem(kind: 'file' | 'folder', path: string): string | null {
  const p = path.trim();
  if (p === '') return 'Type the path of a GGUF file or a folder on the machine Power runs on.';
  if (kind === 'file' && !/\.gguf$/i.test(p)) return 'A model file ends in .gguf: for a folder, use Add model folder.';
  if (kind === 'folder' && /\.gguf$/i.test(p)) return 'That is a model file: use Add model file.';
  return null;
}

/** What models.add did, in words: "Added target, draft-close. Skipped 1: x.gguf (not a GGUF file)." */
export function describeAdded(result: {
  added: readonly { name: string }[];
  skipped: readonly { path: string; reason: string }[];
}): string {
  const parts: string[] = [];
  if (result.added.length > 0) parts.push(`Added ${result.added.map((a) => a.name).join(', ')}.`);
  else parts.push('Nothing was added.');
  if (result.skipped.length > 0) {
    parts.push(
      `Skipped ${result.skipped.length}: ${result.skipped.map((s) => `${s.path.split(/[\\/]/).pop()} (${s.reason})`).join('; ')}.`,
    );
  }
  return parts.join(' ');
}
