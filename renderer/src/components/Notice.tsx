import { usePower } from './store-context.js';

/** The last error, in words, with what to do; shown just above the message box. */
export function NoticeBanner() {
  const notice = usePower((s) => s.notice);
  const dismiss = usePower((s) => s.showNotice);
  if (!notice) return null;
  return (
    <div className="notice" role="alert" data-code={notice.code}>
      <strong>{notice.title} failed.</strong> {notice.message} <span className="action">{notice.action}</span>
      <button type="button" className="icon" aria-label="Dismiss" onClick={() => dismiss(null)}>
        ✕
      </button>
    </div>
  );
}
