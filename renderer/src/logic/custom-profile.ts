// The Custom profile form: K and S as typed, checked before anything is sent. S is the number
// of recurrent rollback snapshots: it only exists for recurrent/hybrid targets (attention-only
// targets roll back KV rows for free) and never exceeds K.
import { K_MAX } from '../../../app/contract/profile.js';

export type CustomCheck = { ok: true; k: number; s: number | null } | { ok: false; kError: string | null; sError: string | null };

function integer(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  return Number(trimmed);
}

/**
 * `recurrent` is the target's recurrent state (null: unknown, nothing chosen yet; S is then
 * checked as if it applied). An empty S means "S = K".
 */
export function checkCustomProfile(kText: string, sText: string, recurrent: boolean | null): CustomCheck {
  let kError: string | null = null;
  let sError: string | null = null;
  const k = integer(kText);
  if (k === null || k < 1 || k > K_MAX) kError = `K must be a whole number from 1 to ${K_MAX}.`;

  let s: number | null = null;
  if (recurrent !== false && sText.trim() !== '') {
    s = integer(sText);
    if (s === null || s > K_MAX) sError = `S must be a whole number from 0 to ${K_MAX}.`;
    else if (k !== null && !kError && s > k) sError = `S must not exceed K (${k}): a snapshot beyond the proposal width is never used.`;
  }
  if (kError || sError) return { ok: false, kError, sError };
  return { ok: true, k: k!, s };
}

/** The name a custom profile is saved under. */
export function customProfileName(k: number, s: number | null): string {
  return s === null ? `Custom K${k}` : `Custom K${k}/S${s}`;
}
