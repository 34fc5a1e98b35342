// Connects the Electron-free IPC dispatcher (electron/ipc/dispatcher.ts) to ipcMain: one handler per
// PowerApi method channel plus subscribe/unsubscribe, each passing the sender frame so the
// dispatcher can refuse anything but the app's own main frame. Subscriptions die with the page
// (navigation, reload, crash, close).
import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';

import type { ApiOf, ConcernSpec } from '../contract/api/describe.js';
import { eventChannel, SUBSCRIBE_CHANNEL, UNSUBSCRIBE_CHANNEL } from './ipc/protocol.js';
import { createIpcDispatcher, type SenderInfo } from './ipc/dispatcher.js';
import { isTrustedSender } from './policy/sender.js';

function senderOf(event: IpcMainInvokeEvent): SenderInfo {
  const frame = event.senderFrame;
  return { id: event.sender.id, url: frame?.url ?? null, isMainFrame: frame !== null && frame.parent === null };
}

/** Registers the handlers; returns the function that removes them. */
export function servePowerApiOverIpc<D extends Record<string, ConcernSpec>>(description: D, api: ApiOf<D>, log: (line: string) => void): () => void {
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

  for (const { concern, method, channel } of dispatcher.shape.calls) {
    ipcMain.handle(channel, (event, input: unknown) => dispatcher.call(concern, method, senderOf(event), input));
  }
  ipcMain.handle(SUBSCRIBE_CHANNEL, (event, name: unknown) => {
    const contents = event.sender;
    watch(contents);
    return dispatcher.subscribe(senderOf(event), name, (payload) => {
      if (!contents.isDestroyed()) contents.send(eventChannel(String(name)), payload);
    });
  });
  ipcMain.handle(UNSUBSCRIBE_CHANNEL, (event, name: unknown) => dispatcher.unsubscribe(senderOf(event), name));

  return () => {
    for (const { channel } of dispatcher.shape.calls) ipcMain.removeHandler(channel);
    ipcMain.removeHandler(SUBSCRIBE_CHANNEL);
    ipcMain.removeHandler(UNSUBSCRIBE_CHANNEL);
  };
}
