// The one BrowserWindow's options: Electron's security checklist in one object, which a static
// test reads (test/unit/shell-window-options.test.ts). Type-only import: no Electron at run time.
import type { BrowserWindowConstructorOptions, Rectangle } from 'electron';

import { MIN_SIZE } from './window-state.js';

export function mainWindowOptions(options: {
  bounds: Partial<Rectangle> & { width: number; height: number };
  preload: string;
  icon?: string;
}): BrowserWindowConstructorOptions {
  return {
    ...options.bounds,
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    title: 'Power',
    show: false, // shown on ready-to-show: no white flash
    backgroundColor: '#111318',
    ...(options.icon ? { icon: options.icon } : {}),
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      devTools: true, // the View menu's toggle; a packaged app disables the inspector through fuses
    },
  };
}
