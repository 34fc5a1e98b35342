// A description looked up by names that came over the wire: own properties only, so
// "__proto__" or "toString" never reach an implementation.
import type { ConcernSpec, MethodSpec } from '../api/describe.js';

export type Description = Record<string, ConcernSpec>;

/** The method's spec, or null when the description has no such method. */
export function methodSpec(description: Description, concern: string, method: string): MethodSpec | null {
  if (!Object.hasOwn(description, concern)) return null;
  const c = description[concern]!;
  return Object.hasOwn(c.methods, method) ? c.methods[method]! : null;
}

/** The event's payload schema, or null when the description has no such event. */
export function eventSpec(description: Description, name: string) {
  const [concern = '', event = ''] = name.split('.');
  if (!Object.hasOwn(description, concern)) return null;
  const c = description[concern]!;
  return Object.hasOwn(c.events, event) ? c.events[event]! : null;
}
