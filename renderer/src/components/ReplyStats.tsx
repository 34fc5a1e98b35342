import { chainStatsParts } from '../logic/chain.js';
import { formatPart, replyStatsParts, type ReplyView } from '../logic/reply.js';
import type { AssistantMessage } from '../api-types.js';
import { usePower } from './store-context.js';

/** The figures under a reply (tokens, decode tok/s, TTFT, acceptance, mean length, stop reason, a chain's members, the drafting policy); Inspect shows them in the Acceptance panel. */
export function ReplyStats({ reply, message }: { reply: ReplyView; message: AssistantMessage | null }) {
  const selected = usePower((s) => s.selectedReplyId === reply.messageId);
  const select = usePower((s) => s.selectReply);
  const stopReason = reply.stopReason ?? message?.stopReason ?? null;
  const format = formatPart(message?.sampling);
  const parts = [
    ...replyStatsParts(reply, message?.strategy ?? null, stopReason),
    ...(message ? chainStatsParts(reply.rounds, message) : []),
    ...(format ? [format] : []),
  ];
  return (
    <div className="reply-stats" role="group" aria-label="Reply stats" data-stop={stopReason ?? ''}>
      <span className="stats-text">{parts.join(' · ')}</span>
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
