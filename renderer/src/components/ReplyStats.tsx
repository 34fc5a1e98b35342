import { replyParts } from '../../../app/contract/report/parts.js';
import { chainStatsParts } from '../logic/chain.js';
import { formatPart, partStatsPart, replyStatsParts, type ReplyView } from '../logic/reply.js';
import type { AssistantMessage } from '../api-types.js';
import { usePower } from './store-context.js';

/**
 * The figures under a reply (tokens, decode tok/s, TTFT, acceptance, mean length, stop reason, a
 * chain's members, the drafting policy; a reply that thought, its thinking's and its answer's
 * tokens, acceptance and tok/s); Inspect shows them in the Acceptance panel.
 */
export function ReplyStats({ reply, message }: { reply: ReplyView; message: AssistantMessage | null }) {
  const selected = usePower((s) => s.selectedReplyId === reply.messageId);
  const select = usePower((s) => s.selectReply);
  const stopReason = reply.stopReason ?? message?.stopReason ?? null;
  const format = formatPart(message?.sampling);
  const split = replyParts(reply);
  const strategy = message?.strategy ?? null;
  const parts = [
    ...replyStatsParts(reply, strategy, stopReason),
    ...(message ? chainStatsParts(reply.rounds, message) : []),
    ...(format ? [format] : []),
  ];
  return (
    <div className="reply-stats" role="group" aria-label="Reply stats" data-stop={stopReason ?? ''}>
      <span className="stats-text">{parts.join(' · ')}</span>
      {split && (
        <span className="stats-parts">
          {partStatsPart('thinking', split.thinking, strategy)} · {partStatsPart('answer', split.answer, strategy)}
        </span>
      )}
      <button
        type="button"
        className="small"
        aria-pressed={selected}
        onClick={() => select(selected ? null : reply.messageId)}
        title="Show this reply's figures in the Acceptance panel"
      >
        Inspect
      </button>
    </div>
  );
}
