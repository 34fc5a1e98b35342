/**
 * What a channel needs of whatever carries its messages (a WebSocket, Electron IPC, the engine
 * host's process channel): the adapter encodes and decodes, the channel sees plain messages.
 */
export interface ChannelPort {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /** the other end is gone; `reason` is what the client's pending calls fail with, if given */
  onClose(listener: (reason?: unknown) => void): void;
}
