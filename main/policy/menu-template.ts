// The native menu: the usual roles (so copy/paste, undo, zoom, full screen and the platform's
// window commands behave as users expect) plus the model library's two dialogs. Type-only
// Electron import: the template is plain data that a test reads.
import type { MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  addModelFile: () => void;
  addModelFolder: () => void;
  openDataFolder: () => void;
}

export function menuTemplate(actions: MenuActions, platform: NodeJS.Platform): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  return [
    ...(mac ? [{ role: 'appMenu' as const }] : []),
    {
      label: '&File',
      submenu: [
        { label: 'Add Model File…', accelerator: 'CmdOrCtrl+O', click: actions.addModelFile },
        { label: 'Add Model Folder…', accelerator: 'CmdOrCtrl+Shift+O', click: actions.addModelFolder },
        { type: 'separator' },
        { label: 'Open Data Folder', click: actions.openDataFolder },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: '&View',
      submenu: [
        { role: 'reload' },
        { role: 'toggleDevTools' },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    { role: 'help', submenu: [{ role: 'about' }] },
  ];
}
