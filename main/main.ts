// The Electron main process: a thin front door over the one PowerService. It only wires things
// together: single-instance lock, app:// scheme, the locked-down session and window, PowerApi
// over IPC (generated from the description), the engine host as a utility process, the menu
// and its dialogs, and a quit that stops the reply, saves and disposes before exiting.
import { join } from 'node:path';

import { app, Menu, session, shell, dialog, type BrowserWindow } from 'electron';

import { powerApi } from '../app/contract/api/index.js';
import { setDefaultEngineLauncher } from '../app/engine/launcher.js';
import { ROOT } from '../app/paths.js';
import { createPowerService, defaultDataDir, type PowerService } from '../app/service/index.js';
import { registerAppScheme, serveAppScheme } from './app-protocol.js';
import { utilityProcessLauncher } from './engine-launcher.js';
import { servePowerApiOverIpc } from './ipc.js';
import { addModelsFromDialog } from './model-dialogs.js';
import { menuTemplate } from './policy/menu-template.js';
import { createQuitSequence } from './policy/quit.js';
import { createMainWindow, lockDownContents, lockDownSession } from './window.js';

const RENDERER_DIR = join(ROOT, 'dist', 'renderer');
const PRELOAD = join(ROOT, 'dist', 'shell', 'preload.cjs');
const ICON = join(ROOT, 'dist', 'shell', 'icon.png');
/** the service's close stops the reply and disposes the engine; past this the app exits anyway */
const QUIT_TIMEOUT_MS = 15_000;

const log = (line: string): void => console.error(`power: ${line}`);
const dataDir = defaultDataDir();

registerAppScheme();
// Chromium's own storage (caches, local storage) lives beside Power's data, not in a second folder
app.setPath('userData', join(dataDir, 'chromium'));

if (!app.requestSingleInstanceLock()) {
  // another Power is running: it focuses its window (second-instance below); this one leaves
  app.quit();
} else {
  let window: BrowserWindow | null = null;
  let service: PowerService | null = null;
  let stopIpc: () => void = () => {};

  const quit = createQuitSequence({
    close: async () => {
      stopIpc();
      await service?.close();
    },
    exit: (code) => app.exit(code),
    timeoutMs: QUIT_TIMEOUT_MS,
    log,
  });
  app.on('before-quit', (event) => quit.onBeforeQuit(event));
  app.on('window-all-closed', () => app.quit());
  // Ctrl-C in the terminal of `npm start`, or a session logout: the same orderly quit
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  app.on('second-instance', () => {
    if (!window) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('web-contents-created', (_event, contents) => lockDownContents(contents));

  const start = async (): Promise<void> => {
    await app.whenReady();
    lockDownSession(session.defaultSession);
    setDefaultEngineLauncher(utilityProcessLauncher);
    serveAppScheme(RENDERER_DIR);
    // npm start names the real model here when it is installed (scripts/start.mjs)
    const defaultModel = process.env.POWER_DEFAULT_MODEL;
    const api = await createPowerService({ dataDir, ...(defaultModel ? { defaultModel: { path: defaultModel, log } } : {}) });
    service = api;
    // the IPC server checks every input: it serves the implementation, not the in-process API
    stopIpc = servePowerApiOverIpc(powerApi, api.implementation, log);
    Menu.setApplicationMenu(
      Menu.buildFromTemplate(
        menuTemplate(
          {
            addModelFile: () => void addModelsFromDialog(window, api, 'file'),
            addModelFolder: () => void addModelsFromDialog(window, api, 'folder'),
            openDataFolder: () => void shell.openPath(dataDir),
          },
          process.platform,
        ),
      ),
    );
    window = await createMainWindow({ dataDir, preload: PRELOAD, icon: ICON });
    window.on('closed', () => (window = null));
  };

  start().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    log(`could not start: ${message}`);
    dialog.showErrorBox('Power could not start', message);
    app.exit(1);
  });
}
