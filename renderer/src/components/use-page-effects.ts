// Page-wide effects: the theme on <html>, Escape (closes an open popover, else stops the reply
// of the open chat), and an outside click closing popovers.
import { useEffect } from 'react';

import { resolveTheme } from '../logic/theme.js';
import { usePower } from './store-context.js';

export function useTheme(): void {
  const theme = usePower((s) => s.theme);
  useEffect(() => {
    const media = window.matchMedia?.('(prefers-color-scheme: dark)');
    const apply = (): void => {
      document.documentElement.dataset['theme'] = resolveTheme(theme, media?.matches ?? false);
      document.documentElement.dataset['themeChoice'] = theme;
    };
    apply();
    media?.addEventListener('change', apply);
    return () => media?.removeEventListener('change', apply);
  }, [theme]);
}

function openPopovers(): HTMLDetailsElement[] {
  return Array.from(document.querySelectorAll<HTMLDetailsElement>('details.popover[open]'));
}

export function useGlobalKeys(): void {
  const stop = usePower((s) => s.stop);
  const hereStreaming = usePower((s) => s.streaming !== null && s.streaming.chatId === s.chatId);
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      // a modal dialog handles its own Escape
      if (document.querySelector('dialog[open]')) return;
      const popovers = openPopovers();
      if (popovers.length > 0) {
        popovers.forEach((p) => (p.open = false));
        return;
      }
      if (hereStreaming) {
        e.preventDefault();
        void stop();
      }
    };
    const onPointer = (e: PointerEvent): void => {
      for (const p of openPopovers()) if (!p.contains(e.target as Node)) p.open = false;
    };
    window.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      window.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [stop, hereStreaming]);
}
