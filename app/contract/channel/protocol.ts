// The one wire protocol of every channel Power speaks (the page's /ws, Electron IPC, the engine
// host), for any description:
//   client → server  { id, concern, method, input }        call a method
//                    { id, subscribe: "concern.onX" }      start receiving an event
//                    { id, unsubscribe: "concern.onX" }    stop
//   server → client  { id, result }  |  { id, error: { code, message } }
//                    { event: "concern.onX", payload }
// Messages are plain values; their encoding (JSON text on a WebSocket, structured clone over
// Electron IPC and to the engine host, where typed arrays stay typed arrays) is the adapter's.
// Errors travel as data because neither encoding keeps an Error's fields. The envelope is
// always checked; what is inside it is checked by the side `ChannelChecks` names.
import { z } from 'zod';

import { ApiError } from '../api/errors.js';

const CallId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** "concern.onX" */
export const EventName = z.string().regex(/^[A-Za-z][\w]*\.on[A-Z]\w*$/);

export const CallMessage = z.object({ id: CallId, concern: z.string().min(1), method: z.string().min(1), input: z.unknown() }).strict();
export const SubscribeMessage = z.object({ id: CallId, subscribe: EventName }).strict();
export const UnsubscribeMessage = z.object({ id: CallId, unsubscribe: EventName }).strict();
export const ClientMessage = z.union([CallMessage, SubscribeMessage, UnsubscribeMessage]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const ResultMessage = z.object({ id: CallId, result: z.unknown() }).strict();
/** id null: a message the server could not tell the id of (not JSON, not an envelope) */
export const ErrorMessage = z.object({ id: CallId.nullable(), error: ApiError }).strict();
export const EventMessage = z.object({ event: EventName, payload: z.unknown() }).strict();
export const ServerMessage = z.union([ResultMessage, ErrorMessage, EventMessage]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/**
 * The answer to a message refused before it could be read as an envelope: under its id when
 * it has one that looks like an id, so a client still hears which of its calls failed.
 */
export function refusal(raw: unknown, error: ApiError): ServerMessage {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return { id: typeof id === 'number' ? id : null, error };
}
