import { useState } from 'react';

/** The clipboard, with the old execCommand fallback where the async API is refused. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/** `Copy`: the text to the clipboard; what happened is said next to it. */
export function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <button type="button" className="small" onClick={() => void copyText(text).then((ok) => setState(ok ? 'copied' : 'failed'))}>
        Copy
      </button>
      <span className="copy-state hint" role="status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'The browser refused the clipboard' : ''}
      </span>
    </>
  );
}
