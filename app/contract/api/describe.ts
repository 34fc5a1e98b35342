// How PowerApi is described: plain data (zod schemas per method and event) from which each
// transport (WebSocket now, Electron IPC later) is generated, and the TypeScript types derived
// from the same objects, so a channel cannot be typed twice and drift (VS Code's ProxyChannel).
import type { z } from 'zod';

export interface MethodSpec {
  input: z.ZodType;
  output: z.ZodType;
}

export interface ConcernSpec {
  methods: Record<string, MethodSpec>;
  events: Record<string, z.ZodType>;
}

/** Declares one concern; the identity function keeps the literal types for ApiOf. */
export function concern<M extends Record<string, MethodSpec>, E extends Record<string, z.ZodType>>(c: { methods: M; events: E }) {
  return c;
}

/**
 * The callable shape of a description: a method takes exactly one input object and returns a
 * Promise of its output (failing with an ApiError); an event `onX` takes a listener and returns
 * the function that unsubscribes it.
 */
export type ApiOf<D extends Record<string, ConcernSpec>> = {
  [C in keyof D]: {
    [M in keyof D[C]['methods']]: (input: z.input<D[C]['methods'][M]['input']>) => Promise<z.output<D[C]['methods'][M]['output']>>;
  } & {
    [E in keyof D[C]['events']]: (listener: (payload: z.output<D[C]['events'][E]>) => void) => () => void;
  };
};
