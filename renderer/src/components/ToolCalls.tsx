// The tool calls of a reply: each a folded block with the tool's name, its server and what became
// of it; unfolded, its arguments as JSON and its result or error. A call waiting for the user
// shows the approval prompt (Allow once, Always allow the tool, Deny) unfolded; once answered
// it folds, and the reply that goes on from the results follows as any reply does.
import { useEffect, useId, useRef, useState } from 'react';

import { callStateLine, prettyArguments } from '../logic/mcp.js';
import type { ChatToolCall, ToolCallDecision } from '../api-types.js';
import { usePower } from './store-context.js';

function Approval({ messageId, call }: { messageId: string; call: ChatToolCall }) {
  const answer = usePower((s) => s.answerToolCall);
  const [sent, setSent] = useState(false);
  const decide = (decision: ToolCallDecision): void => {
    setSent(true);
    void answer(messageId, call.id, decision).finally(() => setSent(false));
  };
  return (
    <div className="tool-approval" role="group" aria-label={`Run ${call.name}?`}>
      <span className="tool-question">
        Run {call.tool ?? call.name}
        {call.server ? ` on ${call.server}` : ''}?
      </span>
      <button type="button" className="primary" disabled={sent} onClick={() => decide('once')}>
        Allow once
      </button>
      <button type="button" disabled={sent} onClick={() => decide('always')}>
        Always allow {call.tool ?? call.name}
      </button>
      <button type="button" disabled={sent} onClick={() => decide('deny')}>
        Deny
      </button>
    </div>
  );
}

function ToolCallBlock({ messageId, call, answerable }: { messageId: string; call: ChatToolCall; answerable: boolean }) {
  const bodyId = useId();
  const waiting = call.state === 'pending' && answerable;
  const [open, setOpen] = useState(waiting);
  // fold once, when the call is answered; what the user chooses after that stays
  const wasWaiting = useRef(waiting);
  useEffect(() => {
    if (wasWaiting.current && !waiting) setOpen(false);
    wasWaiting.current = waiting;
  }, [waiting]);
  return (
    <section className="tool-call" aria-label={`Tool call ${call.name}`} data-state={call.state}>
      <button type="button" className="tool-call-toggle" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)}>
        <span className="chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>{' '}
        <span className="tool-call-header">
          Tool {call.name}
          {call.server ? ` · ${call.server}` : ''} · <span className="tool-call-state">{callStateLine(call, answerable)}</span>
        </span>
      </button>
      <div id={bodyId} className="tool-call-body" hidden={!open}>
        <p className="hint">Arguments</p>
        <pre className="tool-arguments" aria-label="Arguments">
          <code>{prettyArguments(call.arguments)}</code>
        </pre>
        {call.result !== undefined && (
          <>
            <p className="hint">Result</p>
            <pre className="tool-result" aria-label="Result">
              <code>{call.result}</code>
            </pre>
          </>
        )}
        {call.state === 'denied' && <p className="muted">You denied it: the model was told so.</p>}
      </div>
      {call.error && <p className="reply-error tool-error">{call.error}</p>}
      {waiting && <Approval messageId={messageId} call={call} />}
    </section>
  );
}

/** the calls of one reply; `answerable`: the reply is the chat's last (only its calls can be answered) */
export function ToolCalls({ messageId, calls, answerable }: { messageId: string; calls: readonly ChatToolCall[]; answerable: boolean }) {
  return (
    <div className="tool-calls">
      {calls.map((c) => (
        <ToolCallBlock key={c.id} messageId={messageId} call={c} answerable={answerable} />
      ))}
    </div>
  );
}
