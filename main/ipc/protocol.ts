// The channel protocol (app/contract/channel/protocol.ts) over Electron IPC: every message, both
// ways, goes on this one channel by structured clone (renderer: ipcRenderer.send and .on;
// main: ipcMain.on and the sending frame's reply). Errors are data inside the messages, so
// nothing depends on how Electron carries a rejected invoke (it keeps only the message).
export const POWER_CHANNEL = 'power:channel';
