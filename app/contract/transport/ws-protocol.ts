// The channel protocol (app/contract/channel/protocol.ts) on a WebSocket (power serve's /ws): each
// message is one text frame of JSON, both ways, of at most WS_MAX_MESSAGE_BYTES. Both ends
// (ws-client.ts, app/serve/ws-transport.ts) read frames through `decodeFrame`.

/** Largest message either end accepts (a long chat with its rounds fits well inside). */
export const WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export function encodeFrame(message: unknown): string {
  return JSON.stringify(message);
}

/** The message a text frame holds, or null when it is not JSON. */
export function decodeFrame(data: string): { message: unknown } | null {
  try {
    return { message: JSON.parse(data) };
  } catch {
    return null;
  }
}
