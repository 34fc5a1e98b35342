// A user message with Copy, Edit and Fork from here; Edit writes a new version of its text and
// images and continues from it (the old one and what followed it stay as the other version, as
// chats.editAndContinue keeps them: ‹ n/m › shows them). The edit form shows the
// message's images with their remove buttons and attaches more as the composer does.
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import type { UserMessage } from '../api-types.js';
import { CopyButton } from './CopyButton.js';
import { AttachButton, filesOf, PendingImages, useImageAttachments } from './ImageAttachments.js';
import { ImageThumb } from './ImageThumb.js';
import { useSendBlocker } from './use-send-gate.js';
import { BranchSwitcher, ForkButton } from './Versions.js';
import { usePower } from './store-context.js';

function EditForm({ message, onDone }: { message: UserMessage; onDone: () => void }) {
  const { edit } = usePower(useShallow((s) => ({ edit: s.editAndContinue })));
  const blocker = useSendBlocker();
  const [text, setText] = useState(message.content);
  const attachments = useImageAttachments(message.images ?? []);
  const empty = text.trim() === '' && attachments.images.length === 0;
  return (
    <form
      className="edit-message"
      onSubmit={(e) => {
        e.preventDefault();
        if (blocker || empty) return;
        void edit(
          message.id,
          text,
          attachments.images.map((i) => i.image),
        ).then((ok) => ok && onDone());
      }}
    >
      <PendingImages attachments={attachments} label="Images of the message" />
      <textarea
        aria-label="Edit message"
        rows={3}
        value={text}
        autoFocus
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onDone()}
        onPaste={(e) => {
          const files = filesOf(e.clipboardData);
          if (files.length === 0) return;
          e.preventDefault();
          void attachments.attach(files);
        }}
      />
      <p className="hint">A new version of the message is replied to; the old one and its replies stay (‹ › shows them).</p>
      <div className="buttons">
        <button type="submit" className="primary" disabled={blocker !== null || empty} title={blocker ?? undefined}>
          Save and continue
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <AttachButton attachments={attachments} />
      </div>
      {blocker && <p className="hint">{blocker}</p>}
    </form>
  );
}

export function UserMessageView({ message }: { message: UserMessage }) {
  const [editing, setEditing] = useState(false);
  const streaming = usePower((s) => s.streaming !== null);
  return (
    <article className="message user" aria-label="You" data-message-id={message.id}>
      {editing ? (
        <EditForm message={message} onDone={() => setEditing(false)} />
      ) : (
        <>
          {message.images && message.images.length > 0 && (
            <div className="message-images" aria-label="Images">
              {message.images.map((image, i) => (
                <ImageThumb key={`${image.sha256}-${i}`} image={image} />
              ))}
            </div>
          )}
          {message.content && <p>{message.content}</p>}
          <div className="actions">
            <BranchSwitcher messageId={message.id} />
            <CopyButton text={message.content} />
            <button
              type="button"
              className="small"
              disabled={streaming}
              title={streaming ? 'wait for the reply to end' : 'edit and continue from here'}
              onClick={() => setEditing(true)}
            >
              Edit
            </button>
            <ForkButton messageId={message.id} />
          </div>
        </>
      )}
    </article>
  );
}
