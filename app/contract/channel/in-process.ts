// An implementation called in its own process (the CLI, tests, anything that holds the service
// itself) with the check a transport's server makes: every method's input against the
// description, its defaults filled in, a refusal as PowerError('bad-input'). Outputs and events
// pass through: the caller is the implementation's own process.
import type { ApiOf, ConcernSpec } from '../api/describe.js';
import { PowerError } from '../api/errors.js';
import { describeIssues } from './issues.js';
import type { ImplementationOf } from './serve.js';

type AnyImplementation = Record<string, Record<string, (input: unknown) => unknown>>;

export function inProcess<D extends Record<string, ConcernSpec>>(description: D, implementation: ImplementationOf<D>): ApiOf<D> {
  const impl = implementation as unknown as AnyImplementation;
  const api: Record<string, Record<string, unknown>> = {};
  for (const [concern, spec] of Object.entries(description)) {
    const own = impl[concern]!;
    const members: Record<string, unknown> = {};
    for (const [method, { input }] of Object.entries(spec.methods)) {
      members[method] = async (raw: unknown) => {
        const checked = input.safeParse(raw ?? {});
        if (!checked.success) throw new PowerError('bad-input', `${concern}.${method}: ${describeIssues(checked.error)}`);
        return own[method]!.call(own, checked.data);
      };
    }
    for (const event of Object.keys(spec.events)) members[event] = own[event];
    api[concern] = members;
  }
  return api as ApiOf<D>;
}
