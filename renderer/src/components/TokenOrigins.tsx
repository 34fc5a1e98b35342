import { memo } from 'react';

import type { Token } from '../api-types.js';

export const ORIGIN_LABELS: Record<Token['origin'], string> = {
  accepted: 'accepted proposal',
  correction: 'target correction',
  bonus: 'target bonus',
  target: 'target (no proposal)',
};

/** Each token coloured by where it came from; hovering shows its round (and, in a chain's reply, the member that drafted it). */
export const TokenOrigins = memo(function TokenOrigins({
  tokens,
  members = null,
}: {
  tokens: readonly Token[];
  members?: ReadonlyMap<number, string> | null;
}) {
  return (
    <div className="token-origins">
      {tokens.map((t, i) => (
        <span
          key={i}
          className={`tok tok-${t.origin}`}
          data-round={t.round}
          title={`round ${t.round}${members?.has(t.round) ? ` (${members.get(t.round)})` : ''}: ${ORIGIN_LABELS[t.origin]}`}
        >
          {t.text}
        </span>
      ))}
    </div>
  );
});

export function OriginLegend() {
  return (
    <ul className="legend" aria-label="Token origins">
      {(Object.keys(ORIGIN_LABELS) as Array<Token['origin']>).map((origin) => (
        <li key={origin}>
          <span className={`swatch tok-${origin}`} aria-hidden="true" />
          {ORIGIN_LABELS[origin]}
        </li>
      ))}
    </ul>
  );
}
