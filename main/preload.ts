// The preload (sandboxed, bundled into one CommonJS file by scripts/build-shell.mjs): builds the
// PowerApi client from the same description as every other transport and exposes it as
// `window.power`, named functions only. The page never gets ipcRenderer, a channel name or an
// event object: everything goes over POWER_CHANNEL, listeners receive the payload, and each
// subscription returns its unsubscribe function.
import { contextBridge, ipcRenderer } from 'electron';

import { powerApi } from '../app/contract/api/index.js';
import { createIpcClient, type IpcRendererPort } from './ipc/client.js';
import { POWER_CHANNEL } from './ipc/protocol.js';

const port: IpcRendererPort = {
  send: (message) => ipcRenderer.send(POWER_CHANNEL, message),
  onMessage: (listener) => void ipcRenderer.on(POWER_CHANNEL, (_event, message: unknown) => listener(message)),
};

contextBridge.exposeInMainWorld('power', createIpcClient(powerApi, port, { errorsAsData: true }));
