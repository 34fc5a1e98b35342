// How figures read on screen. A missing figure (no proposals yet, no second round) is a dash,
// never 0 or NaN.
import type { EngineEvidence, ModelEntry, ReplyStats } from '../api-types.js';

export const DASH = '—';

export function percent(fraction: number | null | undefined, digits = 1): string {
  if (fraction == null || !Number.isFinite(fraction)) return DASH;
  return `${(fraction * 100).toFixed(digits)}%`;
}

export function fixed(value: number | null | undefined, digits = 2): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  return value.toFixed(digits);
}

export function tokensPerSecond(value: number | null | undefined): string {
  if (value == null || !Number.isFinite(value)) return DASH;
  return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} tok/s`;
}

/** A reply's prompt: its tokens, those the previous request left in the context, and the images the projector encoded. */
export function promptFigure(stats: ReplyStats | null | undefined): string {
  if (!stats) return DASH;
  const parts = [`${stats.promptTokens} tokens`];
  if (stats.reusedPromptTokens) parts.push(`${stats.reusedPromptTokens} kept from the previous request`);
  if (stats.imagesEncoded !== undefined) {
    const n = stats.imagesEncoded;
    parts.push(n === 0 ? 'no image encoded (all kept)' : `${n} image${n === 1 ? '' : 's'} encoded`);
  }
  return parts.join(' · ');
}

export function duration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return DASH;
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function bytes(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n) || n < 0) return DASH;
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toFixed(value >= 100 ? 0 : 1)} ${UNITS[unit]}`;
}

/** What the entry's projector adds: "image via mmproj-x.gguf (4 tokens each)", or why it does not fit. */
function projectorSummary(p: ModelEntry['projector']): string | null {
  if (!p) return null;
  const file = p.path.split(/[\\/]/).pop() ?? p.path;
  if (!p.compatible) return `${file} does not fit: ${p.reason ?? 'unknown'}`;
  const what = [...(p.accepts.image ? ['image'] : []), ...(p.accepts.audio ? ['audio'] : [])].join(' + ');
  return `${what} via ${file}` + (p.accepts.image && p.tokensPerImage !== null ? ` (${p.tokensPerImage} tokens each)` : '');
}

/** "llama · 1.2 MiB · mostly Q4_0 · ctx 4096 · NextN 1 · image via mmproj-x.gguf (256 tokens each)" (or why the entry cannot be used). */
export function modelSummary(entry: ModelEntry): string {
  if (entry.problem) return `unusable: ${entry.problem}`;
  const f = entry.facts;
  if (!f) return bytes(entry.sizeBytes);
  const parts = [f.architecture + (f.hybrid ? ' (hybrid)' : f.recurrent ? ' (recurrent)' : ''), bytes(entry.sizeBytes), f.fileType];
  parts.push(`ctx ${f.contextLength > 0 ? f.contextLength : '?'}`, `NextN ${f.nextnLayers}`);
  const projector = projectorSummary(entry.projector);
  if (projector) parts.push(projector);
  return parts.join(' · ');
}

/**
 * The steady decode rate of a reply (after warm-up). One place reads the field, so the rename
 * to `steadyDecodeTokensPerSecond` (issue 8) is a one-line change.
 */
export function decodeRate(stats: ReplyStats | null | undefined): number | null {
  if (!stats) return null;
  const named = stats as unknown as Record<string, number | null | undefined>;
  return named['steadyDecodeTokensPerSecond'] ?? named['decodeTokensPerSecondMedian'] ?? null;
}

/** "sha256:abcd…1234" */
export function shortDigest(digest: string | null | undefined): string {
  if (!digest) return DASH;
  const hex = digest.replace(/^sha256:/, '');
  return `${hex.slice(0, 8)}…${hex.slice(-4)}`;
}

/**
 * What ran a reply, as its evidence states it: the flavour, Flash Attention, and whether each
 * verify row is computed exactly as a one-row decode (when not, greedy and seeded output can
 * leave the autoregressive control where two tokens are nearly tied).
 */
export function engineEvidence(backend: EngineEvidence | null | undefined): { text: string; exact: boolean | null } {
  if (!backend) return { text: DASH, exact: null };
  const kernels = backend.batchInvariant ? 'batch-invariant' : 'not batch-invariant: may differ from the control at near-ties';
  return { text: `${backend.flavour}, Flash Attention ${backend.flashAttn}, ${kernels}`, exact: backend.batchInvariant };
}
