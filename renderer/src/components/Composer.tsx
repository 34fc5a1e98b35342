// The message box: System prompt and Sampling in popovers above it, then Send / Stop /
// Regenerate with the profile that will run and, when Send cannot, the reason in words. Images
// join the message by the attach button, a paste or a drop onto the composer (ImageAttachments:
// shown as thumbnails with their remove buttons until the message is sent).
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { chainLabel } from '../logic/chain.js';
import { ChatServers } from './ChatServers.js';
import { AttachButton, filesOf, PendingImages, useImageAttachments } from './ImageAttachments.js';
import { checkSampling, SAMPLING_GRID, SAMPLING_LABELS, samplingProblem } from '../logic/sampling.js';
import { profileToRun } from '../logic/send-gate.js';
import { Popover } from './Popover.js';
import { useSendBlocker } from './use-send-gate.js';
import { usePower } from './store-context.js';

function SamplingSettings() {
  const sampling = usePower((s) => s.sampling);
  const setField = usePower((s) => s.setSamplingField);
  const check = checkSampling(sampling);
  const errors = check.ok ? {} : check.errors;
  return (
    <Popover summary="Sampling" className="sampling" align="up">
      <div className="sampling-grid">
        {SAMPLING_GRID.map((field) => (
          <div className="field narrow" key={field}>
            <label htmlFor={`sampling-${field}`}>{SAMPLING_LABELS[field]}</label>
            <input
              id={`sampling-${field}`}
              inputMode="decimal"
              value={sampling[field]}
              placeholder={field === 'seed' ? 'random' : ''}
              aria-invalid={errors[field] !== undefined}
              aria-describedby={errors[field] ? 'sampling-errors' : undefined}
              onChange={(e) => setField(field, e.target.value)}
            />
          </div>
        ))}
      </div>
      <div className="thinking-settings">
        <label className="toggle">
          <input
            type="checkbox"
            role="switch"
            id="sampling-thinking"
            checked={sampling.thinking !== 'off'}
            onChange={(e) => setField('thinking', e.target.checked ? 'on' : 'off')}
          />{' '}
          Thinking
        </label>
        {sampling.thinking !== 'off' && (
          <div className="field narrow">
            <label htmlFor="sampling-thinkingBudget">{SAMPLING_LABELS.thinkingBudget}</label>
            <input
              id="sampling-thinkingBudget"
              inputMode="numeric"
              value={sampling.thinkingBudget}
              placeholder="no limit"
              aria-invalid={errors.thinkingBudget !== undefined}
              aria-describedby={errors.thinkingBudget ? 'sampling-errors' : 'sampling-thinking-hint'}
              onChange={(e) => setField('thinkingBudget', e.target.value)}
            />
          </div>
        )}
        <small className="hint" id="sampling-thinking-hint">
          A thinking model reasons before it answers; the budget ends its thinking after that many tokens (empty: no limit).
        </small>
      </div>
      <div className="field">
        <label htmlFor="sampling-format">Reply format</label>
        <select id="sampling-format" value={sampling.format} onChange={(e) => setField('format', e.target.value)}>
          <option value="text">Text</option>
          <option value="json">JSON</option>
        </select>
      </div>
      {sampling.format === 'json' && (
        <div className="field">
          <label htmlFor="sampling-jsonSchema">JSON schema</label>
          <textarea
            id="sampling-jsonSchema"
            rows={4}
            spellCheck={false}
            value={sampling.jsonSchema}
            placeholder="empty: any JSON object"
            aria-invalid={errors.jsonSchema !== undefined}
            aria-describedby={errors.jsonSchema ? 'sampling-errors' : undefined}
            onChange={(e) => setField('jsonSchema', e.target.value)}
          />
        </div>
      )}
      <p id="sampling-errors" className="form-errors">
        {check.ok ? '' : samplingProblem(errors)}
      </p>
      <small className="hint">
        Temperature 0 is greedy (exactly the target&apos;s own tokens); a stochastic reply without a seed gets a random one.
      </small>
    </Popover>
  );
}

function SystemPrompt() {
  const systemPrompt = usePower((s) => s.systemPrompt);
  const setSystemPrompt = usePower((s) => s.setSystemPrompt);
  return (
    <Popover summary={systemPrompt.trim() ? 'System prompt (set)' : 'System prompt'} className="system-prompt" align="up">
      <textarea
        aria-label="System prompt"
        rows={3}
        value={systemPrompt}
        placeholder="(none)"
        onChange={(e) => setSystemPrompt(e.target.value)}
      />
    </Popover>
  );
}

function RunLine({ blocker }: { blocker: string | null }) {
  const { active, custom, method, model } = usePower(
    useShallow((s) => ({
      active: s.profiles.find((p) => p.id === s.activeProfileId),
      custom: s.profileChoice === 'custom',
      method: s.engine?.options ? chainLabel(s.engine.options.draftMethod.strategy, s.engine.options.draftMethod.fallbacks) : null,
      model: s.engine?.model?.name ?? null,
    })),
  );
  // an unapplied Custom form runs nothing: Send waits for Apply
  const customPending = custom && (!active || active.preset);
  return (
    <p className="run-line" id="send-reason" aria-live="polite">
      <span>
        Profile <strong className="profile-to-run">{customPending ? 'Custom (not applied)' : profileToRun(active)}</strong>
        {model ? ` on ${model} (${method})` : ''}
      </span>
      {blocker && <span className="reason"> · {blocker}</span>}
    </p>
  );
}

export function Composer() {
  const { hereStreaming, hasReply, send, stop, regenerate } = usePower(
    useShallow((s) => ({
      hereStreaming: s.streaming !== null && s.streaming.chatId === s.chatId,
      hasReply: s.chat?.messages.some((m) => m.role === 'assistant') ?? false,
      send: s.send,
      stop: s.stop,
      regenerate: s.regenerate,
    })),
  );
  const blocker = useSendBlocker();
  const attachments = useImageAttachments();
  const { images, setImages, attach } = attachments;
  const [text, setText] = useState('');
  const [dragging, setDragging] = useState(false);

  const empty = text.trim() === '' && images.length === 0;
  const submit = async (): Promise<void> => {
    if (blocker || empty) return;
    const content = text;
    const sent = images;
    setText('');
    setImages([]);
    if (
      !(await send(
        content,
        sent.map((i) => i.image),
      ))
    ) {
      setText(content);
      setImages(sent);
    }
  };

  return (
    <form
      className={dragging ? 'composer dragging' : 'composer'}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onDragOver={(e) => {
        if (!Array.from(e.dataTransfer.types).includes('Files')) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        void attach(filesOf(e.dataTransfer));
      }}
    >
      <div className="composer-tools">
        <SystemPrompt />
        <SamplingSettings />
        <ChatServers />
        <AttachButton attachments={attachments} />
      </div>
      <PendingImages attachments={attachments} label="Attached images" />
      <textarea
        aria-label="Message"
        rows={2}
        value={text}
        placeholder="Message (Enter sends, Shift+Enter for a new line, Escape stops a reply)"
        onChange={(e) => setText(e.target.value)}
        onPaste={(e) => {
          const files = filesOf(e.clipboardData);
          if (files.length === 0) return;
          e.preventDefault();
          void attach(files);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            void submit();
          }
        }}
      />
      <div className="send-bar">
        <RunLine blocker={blocker} />
        <div className="buttons">
          <button type="submit" className="primary" disabled={blocker !== null || empty} aria-describedby="send-reason">
            Send
          </button>
          <button
            type="button"
            onClick={() => void stop()}
            disabled={!hereStreaming}
            title={hereStreaming ? 'Stop the reply (Escape)' : undefined}
          >
            Stop
          </button>
          <button type="button" onClick={() => void regenerate()} disabled={blocker !== null || !hasReply} title={blocker ?? undefined}>
            Regenerate
          </button>
        </div>
      </div>
    </form>
  );
}
