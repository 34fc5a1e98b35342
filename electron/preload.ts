// The preload (sandboxed, bundled into one CommonJS file by scripts/build-shell.mjs): builds the
// PowerApi client from the same description as every other transport and exposes it as
// `window.power`, named functions only. The page never gets ipcRenderer, a channel name or an
// event object: listeners receive the checked payload, and each subscription returns its
// unsubscribe function.
import { contextBridge, ipcRenderer } from 'electron';

import { powerApi } from '../contract/api/index.js';
import { createIpcClient, type IpcRendererPort } from './ipc/client.js';
import { IPC_PREFIX } from './ipc/protocol.js';

const port: IpcRendererPort = {
  invoke: (channel, arg) => {
    if (!channel.startsWith(IPC_PREFIX)) return Promise.reject(new Error(`not a Power channel: ${channel}`));
    return ipcRenderer.invoke(channel, arg);
  },
  on: (channel, listener) => {
    const wrapped = (_event: Electron.IpcRendererEvent, payload: unknown): void => listener(payload);
    ipcRenderer.on(channel, wrapped);
    return () => void ipcRenderer.removeListener(channel, wrapped);
  },
};

contextBridge.exposeInMainWorld('power', createIpcClient(powerApi, port, { errorsAsData: true }));
