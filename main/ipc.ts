// Connects the Electron-free IPC dispatcher (main/ipc/dispatcher.ts) to ipcMain: every
// message on POWER_CHANNEL goes to it with the sending frame, so it can refuse anything but the
// app's own main frame, and is answered to that frame. A page's subscriptions die with the page
// (navigation, reload, crash, close).
import { ipcMain, type IpcMainEvent, type WebContents } from 'electron';

import type { ApiOf, ConcernSpec } from '../app/contract/api/describe.js';
import type { ImplementationOf } from '../app/contract/channel/index.js';
import { createIpcDispatcher, type SenderInfo } from './ipc/dispatcher.js';
import { POWER_CHANNEL } from './ipc/protocol.js';
import { isTrustedSender } from './policy/sender.js';

function senderOf(event: IpcMainEvent): SenderInfo {
  const frame = event.senderFrame;
  return { id: event.sender.id, url: frame?.url ?? null, isMainFrame: frame !== null && frame.parent === null };
}

/** Listens on POWER_CHANNEL; returns the function that stops, ending every subscription. */
export function servePowerApiOverIpc<D extends Record<string, ConcernSpec>>(
  description: D,
  api: ImplementationOf<D> | ApiOf<D>,
  log: (line: string) => void,
): () => void {
  const dispatcher = createIpcDispatcher(description, api, { isTrustedSender, log });
  const watched = new Set<number>();

  const watch = (contents: WebContents): void => {
    if (watched.has(contents.id)) return;
    watched.add(contents.id);
    const id = contents.id;
    const drop = (): void => dispatcher.dropSender(id);
    contents.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) drop();
    });
    contents.on('render-process-gone', drop);
    contents.once('destroyed', () => {
      drop();
      watched.delete(id);
    });
  };

  const onMessage = (event: IpcMainEvent, message: unknown): void => {
    const contents = event.sender;
    watch(contents);
    dispatcher.receive(senderOf(event), message, (answer) => {
      if (!contents.isDestroyed()) event.reply(POWER_CHANNEL, answer);
    });
  };
  ipcMain.on(POWER_CHANNEL, onMessage);

  return () => {
    ipcMain.removeListener(POWER_CHANNEL, onMessage);
    for (const id of watched) dispatcher.dropSender(id);
  };
}
