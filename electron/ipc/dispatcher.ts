// The main-process end of the PowerApi IPC protocol (electron/ipc/protocol.ts), generated
// from a description and Electron-free: electron/ipc.ts registers one ipcMain handler per
// channel and passes each message here with what it knows of the sender. Every message is
// checked twice before the service sees it: the sender frame against the trust policy, the
// input against the description's schema. Outputs and event payloads are checked on the way
// out, so a bug in the service cannot hand the page something the contract does not allow.
import type { ApiOf, ConcernSpec } from '../../contract/api/describe.js';
import { toApiError, type ApiError } from '../../contract/api/errors.js';
import { apiShape, IpcEventName, type ApiShape, type IpcReply } from './protocol.js';
import { describeIssues, eventSpec, methodSpec } from '../../contract/transport/ws-protocol.js';

/** What the shell knows about the frame that sent a message. */
export interface SenderInfo {
  /** webContents id: subscriptions are kept per page */
  id: number;
  /** the sending frame's URL; null when the frame is gone */
  url: string | null;
  /** whether the sending frame is the page's top frame (not an iframe) */
  isMainFrame: boolean;
}

export interface IpcDispatcherOptions {
  /** the sender policy (electron/policy/sender.ts): only the app's own main frame passes */
  isTrustedSender: (sender: SenderInfo) => boolean;
  /** a refused message or a service result that breaks the contract */
  log?: (line: string) => void;
}

export interface IpcDispatcher {
  shape: ApiShape;
  call(concern: string, method: string, sender: SenderInfo, input: unknown): Promise<IpcReply>;
  /** starts delivering `name` to the sender through `deliver` (one delivery per page and event) */
  subscribe(sender: SenderInfo, name: unknown, deliver: (payload: unknown) => void): IpcReply;
  unsubscribe(sender: SenderInfo, name: unknown): IpcReply;
  /** the page is gone (closed, reloaded, crashed): drop everything it subscribed to */
  dropSender(senderId: number): void;
  /** how many subscriptions are live (tests: nothing leaks after a page goes) */
  subscriptionCount(): number;
}

type AnyApi = Record<string, Record<string, unknown>>;
type Method = (input: unknown) => Promise<unknown>;
type Event = (listener: (payload: unknown) => void) => () => void;

const fail = (error: ApiError): IpcReply => ({ ok: false, error });

export function createIpcDispatcher<D extends Record<string, ConcernSpec>>(
  description: D,
  api: ApiOf<D>,
  options: IpcDispatcherOptions,
): IpcDispatcher {
  const impl = api as unknown as AnyApi;
  const log = options.log ?? (() => {});
  const subscriptions = new Map<number, Map<string, () => void>>();

  const refuse = (sender: SenderInfo, what: string): IpcReply | null => {
    if (options.isTrustedSender(sender)) return null;
    log(`refused ${what} from an untrusted frame (${sender.url ?? 'no URL'}${sender.isMainFrame ? '' : ', not the main frame'})`);
    return fail({ code: 'bad-input', message: 'this frame may not use PowerApi' });
  };

  return {
    shape: apiShape(description),

    async call(concern, method, sender, input) {
      const refused = refuse(sender, `${concern}.${method}`);
      if (refused) return refused;
      const spec = methodSpec(description, concern, method);
      if (!spec) return fail({ code: 'not-found', message: `no method ${concern}.${method}` });
      const checked = spec.input.safeParse(input);
      if (!checked.success) return fail({ code: 'bad-input', message: `${concern}.${method}: ${describeIssues(checked.error)}` });
      let result: unknown;
      try {
        result = await (impl[concern]![method] as Method).call(impl[concern], checked.data);
      } catch (error) {
        return fail(toApiError(error));
      }
      const out = spec.output.safeParse(result);
      if (!out.success) {
        log(`${concern}.${method} answered with a result that does not match the description: ${describeIssues(out.error)}`);
        return fail({ code: 'internal', message: `${concern}.${method} produced an invalid result` });
      }
      return { ok: true, value: out.data };
    },

    subscribe(sender, name, deliver) {
      const refused = refuse(sender, `a subscription`);
      if (refused) return refused;
      const parsedName = IpcEventName.safeParse(name);
      const schema = parsedName.success ? eventSpec(description, parsedName.data) : null;
      if (!parsedName.success || !schema) return fail({ code: 'not-found', message: `no event ${String(name)}` });
      const event = parsedName.data;
      let own = subscriptions.get(sender.id);
      if (!own) subscriptions.set(sender.id, (own = new Map()));
      if (!own.has(event)) {
        const [concern, member] = event.split('.') as [string, string];
        const stop = (impl[concern]![member] as Event).call(impl[concern], (payload) => {
          const checked = schema.safeParse(payload);
          if (!checked.success) {
            log(`dropped a ${event} payload that does not match the description: ${describeIssues(checked.error)}`);
            return;
          }
          deliver(checked.data);
        });
        own.set(event, stop);
      }
      return { ok: true, value: null };
    },

    unsubscribe(sender, name) {
      const refused = refuse(sender, `an unsubscription`);
      if (refused) return refused;
      if (typeof name !== 'string') return fail({ code: 'bad-input', message: 'an event name is a string' });
      const own = subscriptions.get(sender.id);
      own?.get(name)?.();
      own?.delete(name);
      return { ok: true, value: null };
    },

    dropSender(senderId) {
      const own = subscriptions.get(senderId);
      if (!own) return;
      for (const stop of own.values()) stop();
      subscriptions.delete(senderId);
    },

    subscriptionCount() {
      let n = 0;
      for (const own of subscriptions.values()) n += own.size;
      return n;
    },
  };
}
