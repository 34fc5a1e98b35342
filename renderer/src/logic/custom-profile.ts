// The Custom profile form: K and S as typed, and the drafting policy (p-min, adaptive K, FR),
// checked before anything is sent. S is the number of recurrent rollback snapshots: it only
// exists for recurrent/hybrid targets (attention-only targets roll back KV rows for free) and
// never exceeds K. FR narrows the MTP head, so it needs a loaded chain with mtp in it (a Custom
// profile runs on the loaded strategy or chain).
import { frProblem, K_MAX } from '../../../app/contract/profile.js';
import type { Strategy } from '../api-types.js';
import { draftingParts } from './chain.js';

/** The form's drafting fields as typed: p-min and FR's N empty mean off. */
export interface PolicyFields {
  pMin: string;
  adaptiveK: boolean;
  frVocab: string;
}

export const NO_POLICY: PolicyFields = { pMin: '', adaptiveK: false, frVocab: '' };

export type CustomCheck =
  | {
      ok: true;
      k: number;
      s: number | null;
      /** absent: off (0 is off too) */
      pMin?: number;
      adaptiveK?: true;
      frVocab?: number;
    }
  | { ok: false; kError: string | null; sError: string | null; pMinError?: string | null; frError?: string | null };

function integer(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  return Number(trimmed);
}

/** Why FR cannot be set for the loaded chain (null: it can): FR's rule is the contract's frProblem. */
export function frUnavailable(chain: readonly Strategy[] | null): string | null {
  if (!chain) return 'FR needs a loaded model whose draft method includes mtp.';
  return frProblem(chain);
}

/**
 * `recurrent` is the target's recurrent state (null: unknown, nothing chosen yet; S is then
 * checked as if it applied). An empty S means "S = K". `chain` is the loaded draft method's
 * [strategy, ...fallbacks] (null: nothing loaded).
 */
export function checkCustomProfile(
  kText: string,
  sText: string,
  recurrent: boolean | null,
  policy: PolicyFields = NO_POLICY,
  chain: readonly Strategy[] | null = null,
): CustomCheck {
  let kError: string | null = null;
  let sError: string | null = null;
  let pMinError: string | null = null;
  let frError: string | null = null;
  const k = integer(kText);
  if (k === null || k < 1 || k > K_MAX) kError = `K must be a whole number from 1 to ${K_MAX}.`;

  let s: number | null = null;
  if (recurrent !== false && sText.trim() !== '') {
    s = integer(sText);
    if (s === null || s > K_MAX) sError = `S must be a whole number from 0 to ${K_MAX}.`;
    else if (k !== null && !kError && s > k) sError = `S must not exceed K (${k}): a snapshot beyond the proposal width is never used.`;
  }

  let pMin: number | undefined;
  const pText = policy.pMin.trim();
  if (pText !== '') {
    const value = /^(\d+\.?\d*|\.\d+)$/.test(pText) ? Number(pText) : NaN;
    if (!(value >= 0 && value <= 1)) pMinError = 'p-min must be a number from 0 to 1 (empty: off).';
    else if (value > 0) pMin = value;
  }

  let frVocab: number | undefined;
  if (policy.frVocab.trim() !== '') {
    const n = integer(policy.frVocab);
    const refused = frUnavailable(chain);
    if (n === null || n < 1) frError = 'FR vocabulary must be a whole number from 1 (empty: the whole vocabulary).';
    else if (refused) frError = refused;
    else frVocab = n;
  }

  if (kError || sError || pMinError || frError) return { ok: false, kError, sError, pMinError, frError };
  return {
    ok: true,
    k: k!,
    s,
    ...(pMin !== undefined ? { pMin } : {}),
    ...(policy.adaptiveK ? { adaptiveK: true as const } : {}),
    ...(frVocab !== undefined ? { frVocab } : {}),
  };
}

/** The form's problems in one line. */
export function customProblems(check: Extract<CustomCheck, { ok: false }>): string {
  return [check.kError, check.sError, check.pMinError, check.frError].filter(Boolean).join(' ');
}

/** The name a custom profile is saved under: "Custom K5/S3", "Custom K7 · p-min 0.3 · adaptive K · FR 4096". */
export function customProfileName(
  k: number,
  s: number | null,
  policy: { pMin?: number; adaptiveK?: boolean; frVocab?: number } = {},
): string {
  return [s === null ? `Custom K${k}` : `Custom K${k}/S${s}`, ...draftingParts(policy)].join(' · ');
}
