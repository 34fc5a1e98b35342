// The one window: options from policy/window-options.ts, bounds restored from and saved to the
// data folder, the app loaded from app://, and every navigation, new window, <webview> and
// permission refused through the policy functions (http(s) links go to the system browser).
import { join } from 'node:path';

import { BrowserWindow, screen, shell, type Session, type WebContents } from 'electron';

import { navigationDecision, webviewAllowed, windowOpenDecision } from './policy/navigation.js';
import { devicePermissionDecision, permissionCheckDecision, permissionRequestDecision } from './policy/permissions.js';
import { APP_ENTRY_URL } from './policy/origin.js';
import { mainWindowOptions } from './policy/window-options.js';
import { loadWindowState, restoredBounds, saveWindowState } from './policy/window-state.js';

const SAVE_DELAY_MS = 500;

/** Session-wide refusals: permissions and device pickers. */
export function lockDownSession(session: Session): void {
  session.setPermissionRequestHandler((contents, permission, callback) =>
    callback(permissionRequestDecision(permission, contents.getURL())),
  );
  session.setPermissionCheckHandler((_contents, permission, origin) => permissionCheckDecision(permission, origin));
  session.setDevicePermissionHandler(() => devicePermissionDecision());
}

/** Navigation, new windows and webviews, for every web contents the app ever creates. */
export function lockDownContents(contents: WebContents): void {
  const leave = (url: string | null): void => {
    if (url) void shell.openExternal(url);
  };
  // will-frame-navigate fires for every frame (the main one included): decide there once
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-frame-navigate', (event) => {
    event.preventDefault();
    leave(navigationDecision(event.url, event.isMainFrame).openExternally);
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.setWindowOpenHandler((details) => {
    const decision = windowOpenDecision(details);
    leave(decision.openExternally);
    return { action: decision.action };
  });
  contents.on('will-attach-webview', (event) => {
    if (!webviewAllowed()) event.preventDefault();
  });
}

export async function createMainWindow(options: { dataDir: string; preload: string; icon?: string }): Promise<BrowserWindow> {
  const stateFile = join(options.dataDir, 'window.json');
  const saved = await loadWindowState(stateFile);
  const { bounds, maximized } = restoredBounds(
    saved,
    screen.getAllDisplays().map((d) => d.workArea),
  );
  const window = new BrowserWindow(
    mainWindowOptions({ bounds, preload: options.preload, ...(options.icon ? { icon: options.icon } : {}) }),
  );
  if (maximized) window.maximize();
  window.once('ready-to-show', () => window.show());

  let timer: NodeJS.Timeout | undefined;
  const save = (): void => {
    if (window.isDestroyed()) return;
    const b = window.getNormalBounds();
    saveWindowState(stateFile, { ...b, maximized: window.isMaximized() }).catch(() => {});
  };
  const later = (): void => {
    clearTimeout(timer);
    timer = setTimeout(save, SAVE_DELAY_MS);
  };
  window.on('resize', later);
  window.on('move', later);
  window.on('maximize', later);
  window.on('unmaximize', later);
  window.on('close', () => {
    clearTimeout(timer);
    save();
  });

  await window.loadURL(APP_ENTRY_URL);
  return window;
}
