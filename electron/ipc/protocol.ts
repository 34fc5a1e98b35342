// The PowerApi protocol over Electron IPC, for any description (the same description the
// WebSocket transport is generated from, so the two cannot drift). Pure: no Electron here; the
// preload and electron/ipc.ts only connect these pieces to ipcRenderer and ipcMain.
//   renderer → main   invoke  power:call:<concern>.<method>   input          → IpcReply
//                     invoke  power:subscribe                  "concern.onX"  → IpcReply (null)
//                     invoke  power:unsubscribe                "concern.onX"  → IpcReply (null)
//   main → renderer   send    power:event:<concern>.<onX>      payload
// Replies are envelopes rather than rejections: Electron turns a rejected invoke into an Error
// whose message is prefixed and whose fields are lost, so the ApiError code would not survive.
import { z } from 'zod';

import type { ConcernSpec } from '../../contract/api/describe.js';
import { ApiError } from '../../contract/api/errors.js';
import { EventName } from '../../contract/transport/ws-protocol.js';

export const IPC_PREFIX = 'power:';
export const SUBSCRIBE_CHANNEL = 'power:subscribe';
export const UNSUBSCRIBE_CHANNEL = 'power:unsubscribe';

export function callChannel(concern: string, method: string): string {
  return `${IPC_PREFIX}call:${concern}.${method}`;
}

export function eventChannel(name: string): string {
  return `${IPC_PREFIX}event:${name}`;
}

export const IpcReply = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }).strict(),
  z.object({ ok: z.literal(false), error: ApiError }).strict(),
]);
export type IpcReply = z.infer<typeof IpcReply>;

export const IpcEventName = EventName;

/** Every method and event a description has, as channel data (what both ends register). */
export interface ApiShape {
  calls: { concern: string; method: string; channel: string }[];
  events: { name: string; channel: string }[];
}

export function apiShape(description: Record<string, ConcernSpec>): ApiShape {
  const calls: ApiShape['calls'] = [];
  const events: ApiShape['events'] = [];
  for (const [concern, spec] of Object.entries(description)) {
    for (const method of Object.keys(spec.methods)) calls.push({ concern, method, channel: callChannel(concern, method) });
    for (const event of Object.keys(spec.events)) events.push({ name: `${concern}.${event}`, channel: eventChannel(`${concern}.${event}`) });
  }
  return { calls, events };
}
