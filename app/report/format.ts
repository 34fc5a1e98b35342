// Number and text formatting shared by the Markdown and HTML renderings (the JSON and the CSV
// keep full precision).
import type { MemberSummary, ProfileRun, Spread } from '../contract/report/schema.js';

/** A fixed number of decimals, or '-' when there is no value. */
export function fixed(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${(value * 100).toFixed(1)}%`;
}

export function ratio(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${value.toFixed(2)}x`;
}

export function median(s: Spread | null, digits: number): string {
  return fixed(s?.median, digits);
}

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** "K7/S6", "K4" (S does not apply), or "AR" for the control. */
export function ks(p: Pick<ProfileRun, 'k' | 's'>): string {
  if (p.k === null) return 'AR';
  return p.s === null ? `K${p.k}` : `K${p.k}/S${p.s}`;
}

/**
 * A profile's settings: "K7/S6", with a chain, p-min, adaptive K and FR where they were on:
 * "K4/S3, chain ngram,mtp, p-min 0.2, adaptive K, FR 4096 tokens".
 */
export function profileSettings(p: ProfileRun): string {
  return [
    ks(p),
    ...(p.fallbacks ? [`chain ${[p.strategy, ...p.fallbacks].join(',')}`] : []),
    ...(p.pMin !== undefined ? [`p-min ${p.pMin}`] : []),
    ...(p.adaptiveK ? ['adaptive K'] : []),
    ...(p.frVocab !== undefined ? [`FR ${p.frVocab} tokens`] : []),
  ].join(', ');
}

/** A chain's members as one line: "ngram 30/40 in 12 rounds, mtp 9/12 in 3 rounds" (accepted/proposed). */
export function memberShare(members: readonly MemberSummary[]): string {
  return members.map((m) => `${m.strategy} ${m.accepted}/${m.proposed} in ${m.rounds} rounds`).join(', ');
}

/** The first 12 hex digits of a digest: enough to tell outputs apart in a table. */
export function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 12);
}

export function yesNo(value: boolean | null): string {
  return value === null ? '-' : value ? 'yes' : 'no';
}
