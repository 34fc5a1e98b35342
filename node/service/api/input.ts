// A method's input checked against the contract: bad input is a typed error, not a crash. The
// one input check of every front door (the transports carry what they get; this is where it
// enters the service), which also fills the schema's defaults.
import type { z } from 'zod';

import { PowerError } from '../../../contract/api/errors.js';
import { powerApi } from '../../../contract/api/index.js';

type Desc = typeof powerApi;
export type In<C extends keyof Desc, M extends keyof Desc[C]['methods']> = z.output<Desc[C]['methods'][M] extends { input: infer I extends z.ZodType } ? I : never>;

export function input<C extends keyof Desc, M extends keyof Desc[C]['methods'] & string>(c: C, m: M, raw: unknown): In<C, M> {
  const spec = (powerApi[c].methods as Record<string, { input: z.ZodType }>)[m]!;
  const parsed = spec.input.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PowerError('bad-input', `${c}.${m}: ${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
  }
  return parsed.data as In<C, M>;
}
