// A/B: the last prompt re-run on the autoregressive control. The speculative reply is exact when
// both emitted the same tokens (same digest); the speedup compares steady decode rates measured
// on the same machine moments apart (request-wide rates too, which include prefill).
import type { ReplyStats } from '../api-types.js';
import { decodeRate } from './format.js';

export interface AbSide {
  messageId: string;
  profile: string;
  strategy: string;
  k: number | null;
  s: number | null;
  digest: string | null;
  stats: ReplyStats | null;
  tokens: number;
}

export interface AbResult {
  speculative: AbSide;
  control: AbSide;
  /** speculative steady decode tok/s ÷ the control's (null when either is unknown) */
  decodeSpeedup: number | null;
  /** the same for request-wide tok/s */
  requestSpeedup: number | null;
  digestsMatch: boolean | null;
}

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return null;
  return a / b;
}

export function compareAb(speculative: AbSide, control: AbSide): AbResult {
  return {
    speculative,
    control,
    decodeSpeedup: ratio(decodeRate(speculative.stats), decodeRate(control.stats)),
    requestSpeedup: ratio(speculative.stats?.requestTokensPerSecond, control.stats?.requestTokensPerSecond),
    digestsMatch: speculative.digest && control.digest ? speculative.digest === control.digest : null,
  };
}
