// A thinking reply's reasoning, in a block of its own above the answer: open while the model
// thinks (it streams there), folded as soon as the answer starts; its header, a button, unfolds
// it again and says how long the thinking took and how many tokens it spent.
import { useEffect, useId, useRef, useState } from 'react';

import type { ReplyThinking } from '../../../app/contract/api/generation.js';
import { thinkingHeader, type ReplyStatus } from '../logic/reply.js';
import { Markdown } from './Markdown.js';

export function ThinkingBlock({ thinking, status }: { thinking: ReplyThinking; status: ReplyStatus }) {
  const bodyId = useId();
  const [open, setOpen] = useState(!thinking.done);
  // fold once, when the answer starts; what the user chooses after that stays
  const wasDone = useRef(thinking.done);
  useEffect(() => {
    if (thinking.done && !wasDone.current) setOpen(false);
    wasDone.current = thinking.done;
  }, [thinking.done]);
  const header = thinkingHeader(thinking, status);
  return (
    <section
      className="thinking"
      aria-label="Thinking"
      data-done={String(thinking.done)}
      data-forced={String(thinking.forced)}
      aria-busy={!thinking.done && status === 'streaming'}
    >
      <button type="button" className="thinking-toggle" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)}>
        <span className="chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>{' '}
        <span className="thinking-header">{header}</span>
      </button>
      <div id={bodyId} className="thinking-body" hidden={!open}>
        {thinking.text === '' ? <p className="muted">{thinking.done ? '(no thinking text)' : '…'}</p> : <Markdown source={thinking.text} />}
      </div>
    </section>
  );
}
