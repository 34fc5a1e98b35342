// The PowerApi wire protocol over one WebSocket (power serve's /ws), for any description:
//   client → server  { id, concern, method, input }        call a method
//                    { id, subscribe: "concern.onX" }      start receiving an event
//                    { id, unsubscribe: "concern.onX" }    stop
//   server → client  { id, result }  |  { id, error: { code, message } }
//                    { event: "concern.onX", payload }
// Text frames of JSON. The envelope is checked here; inputs, outputs and payloads are checked
// against the description's own schemas at both ends (ws-client.ts, node/serve/ws-transport.ts).
import { z } from 'zod';

import type { ConcernSpec } from '../api/describe.js';
import { ApiError } from '../api/errors.js';

const CallId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** "concern.onX" */
export const EventName = z.string().regex(/^[A-Za-z][\w]*\.on[A-Z]\w*$/);

export const WsCall = z.object({ id: CallId, concern: z.string().min(1), method: z.string().min(1), input: z.unknown() }).strict();
export const WsSubscribe = z.object({ id: CallId, subscribe: EventName }).strict();
export const WsUnsubscribe = z.object({ id: CallId, unsubscribe: EventName }).strict();
export const WsClientMessage = z.union([WsCall, WsSubscribe, WsUnsubscribe]);
export type WsClientMessage = z.infer<typeof WsClientMessage>;

export const WsResult = z.object({ id: CallId, result: z.unknown() }).strict();
export const WsError = z.object({ id: CallId.nullable(), error: ApiError }).strict();
export const WsEvent = z.object({ event: EventName, payload: z.unknown() }).strict();
export const WsServerMessage = z.union([WsResult, WsError, WsEvent]);
export type WsServerMessage = z.infer<typeof WsServerMessage>;

/** Largest message either end accepts (a long chat with its rounds fits well inside). */
export const WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The method's spec, or null when the description has no such method. */
export function methodSpec(description: Record<string, ConcernSpec>, concern: string, method: string) {
  if (!Object.hasOwn(description, concern)) return null;
  const c = description[concern]!;
  return Object.hasOwn(c.methods, method) ? c.methods[method]! : null;
}

/** The event's payload schema, or null when the description has no such event. */
export function eventSpec(description: Record<string, ConcernSpec>, name: string) {
  const [concern, event] = name.split('.') as [string, string];
  if (!Object.hasOwn(description, concern)) return null;
  const c = description[concern]!;
  return Object.hasOwn(c.events, event) ? c.events[event]! : null;
}

/** A zod failure as one readable line (path: message; ...). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}
