// A message's versions and forks: ‹ 2/3 › on the first message of a version (Regenerate, the A/B
// and Edit keep the one they replace), and `Fork from here`, which opens a new chat holding the
// conversation up to that message.
import { useShallow } from 'zustand/react/shallow';

import { versionOf } from '../../../app/contract/branches.js';
import { usePower } from './store-context.js';

/** After a switch the message is another one (its own key): the same button takes the focus again. */
function refocus(index: number, label: string): void {
  requestAnimationFrame(() => {
    const button = document.querySelector<HTMLButtonElement>(`[data-versions-at="${index}"] button[aria-label="${label}"]`);
    (button && !button.disabled
      ? button
      : document.querySelector<HTMLElement>(`[data-versions-at="${index}"] button:not([disabled])`)
    )?.focus();
  });
}

/** ‹ n/m ›: the versions of the conversation from this message on; nothing when it has one. */
export function BranchSwitcher({ messageId }: { messageId: string }) {
  const { chat, busy, switchBranch } = usePower(
    useShallow((s) => ({
      chat: s.chat,
      busy: s.streaming !== null && s.streaming.chatId === s.chatId,
      switchBranch: s.switchBranch,
    })),
  );
  const index = chat ? chat.messages.findIndex((m) => m.id === messageId) : -1;
  const version = chat && index >= 0 ? versionOf(chat, index) : null;
  if (!version) return null;
  const { shown, count } = version;
  const why = busy ? 'wait for the reply to end' : undefined;
  const go = (to: number, label: string) => {
    void switchBranch(messageId, to).then(() => refocus(index, label));
  };
  return (
    <span className="versions" role="group" aria-label="Versions" data-versions-at={index}>
      <button
        type="button"
        className="small"
        aria-label="Previous version"
        title={why ?? 'show the previous version'}
        disabled={busy || shown === 0}
        onClick={() => go(shown - 1, 'Previous version')}
      >
        ‹
      </button>
      <span className="version-count" aria-live="polite" aria-label={`Version ${shown + 1} of ${count}`}>
        {shown + 1}/{count}
      </span>
      <button
        type="button"
        className="small"
        aria-label="Next version"
        title={why ?? 'show the next version'}
        disabled={busy || shown === count - 1}
        onClick={() => go(shown + 1, 'Next version')}
      >
        ›
      </button>
    </span>
  );
}

/** `Fork from here`: a new chat with the conversation up to and including this message, opened. */
export function ForkButton({ messageId, streaming = false }: { messageId: string; streaming?: boolean }) {
  const { shownHere, forkChat } = usePower(
    useShallow((s) => ({ shownHere: s.chat?.messages.some((m) => m.id === messageId) ?? false, forkChat: s.forkChat })),
  );
  // a version kept aside (the A/B's speculative reply) is no point of the conversation shown
  if (!shownHere) return null;
  return (
    <button
      type="button"
      className="small"
      disabled={streaming}
      title={streaming ? 'wait for the reply to end' : 'a new chat with the conversation up to here'}
      onClick={() => void forkChat(messageId)}
    >
      Fork from here
    </button>
  );
}
