// The one place that knows how the renderer reaches PowerApi: inside Electron the preload puts
// it on `window.power`; in a browser opened by `power serve` it is the WebSocket at /ws, with the
// page's token (the server also set it as a cookie when the page was loaded with ?token=).
import { powerApi } from '../../app/contract/api/index.js';
import { createApiClient } from '../../app/contract/transport/ws-client.js';
import type { PowerApi } from './api-types.js';

declare global {
  interface Window {
    power?: PowerApi;
  }
}

export interface Connection {
  api: PowerApi;
  kind: 'electron' | 'websocket';
  /** resolves when the connection is gone for good */
  closed: Promise<void>;
}

export function socketUrl(location: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const url = new URL(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  const token = new URLSearchParams(location.search).get('token');
  if (token) url.searchParams.set('token', token);
  return url.toString();
}

export async function connect(): Promise<Connection> {
  if (window.power) return { api: window.power, kind: 'electron', closed: new Promise<void>(() => {}) };
  const socket = new WebSocket(socketUrl(window.location));
  // the description power serve answers on /ws (PowerApi)
  const client = createApiClient(powerApi, socket);
  const failed = new Promise<never>((_, reject) =>
    socket.addEventListener('close', () => reject(new Error('Power refused the connection (is the token in the address right?)'))),
  );
  await Promise.race([client.ready, failed]);
  failed.catch(() => {});
  return { api: client.api, kind: 'websocket', closed: client.closed };
}
