// The main-process end of PowerApi over Electron IPC, Electron-free: main/ipc.ts hands it
// every message with what it knows of the sending frame. A frame the trust policy refuses is
// answered with an error and reaches nothing; the app's own page gets a channel server of its
// own (serveChannel, CHECKED_BY_SERVER: inputs, outputs and payloads are checked here), whose
// subscriptions end when the page goes.
import type { ApiOf, ConcernSpec } from '../../app/contract/api/describe.js';
import type { ImplementationOf } from '../../app/contract/channel/index.js';
import { CHECKED_BY_SERVER } from '../../app/contract/channel/checks.js';
import { refusal } from '../../app/contract/channel/protocol.js';
import { serveChannel, type ChannelServer } from '../../app/contract/channel/serve.js';

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
  /** the sender policy (main/policy/sender.ts): only the app's own main frame passes */
  isTrustedSender: (sender: SenderInfo) => boolean;
  /** a refused message or a service result that breaks the contract */
  log?: (line: string) => void;
}

export interface IpcDispatcher {
  /** one message from a frame; `reply` answers that frame (and, for the page, carries its events) */
  receive(sender: SenderInfo, message: unknown, reply: (message: unknown) => void): void;
  /** the page is gone (closed, reloaded, crashed): end its subscriptions, drop its late answers */
  dropSender(senderId: number): void;
  /** how many subscriptions are live (tests: nothing leaks after a page goes) */
  subscriptionCount(): number;
}

/** One page's channel: its server, and where its messages go in and out. */
interface Page {
  server?: ChannelServer;
  deliver: (message: unknown) => void;
  reply: (message: unknown) => void;
}

export function createIpcDispatcher<D extends Record<string, ConcernSpec>>(
  description: D,
  api: ImplementationOf<D> | ApiOf<D>,
  options: IpcDispatcherOptions,
): IpcDispatcher {
  const log = options.log ?? (() => {});
  const pages = new Map<number, Page>();

  function pageOf(senderId: number): Page {
    const known = pages.get(senderId);
    if (known) return known;
    const page: Page = { reply: () => {}, deliver: () => {} };
    // every trusted message of a page comes from its main frame, so its latest reply reaches the
    // page; the port never closes by itself: a page's going is news from Electron (dropSender)
    const port = {
      send: (message: unknown) => page.reply(message),
      onMessage: (listener: Page['deliver']) => (page.deliver = listener),
      onClose: () => {},
    };
    page.server = serveChannel(description, api, port, { checks: CHECKED_BY_SERVER, log });
    pages.set(senderId, page);
    return page;
  }

  return {
    receive(sender, message, reply) {
      if (!options.isTrustedSender(sender)) {
        log(`refused a message from an untrusted frame (${sender.url ?? 'no URL'}${sender.isMainFrame ? '' : ', not the main frame'})`);
        reply(refusal(message, { code: 'bad-input', message: 'this frame may not use PowerApi' }));
        return;
      }
      const page = pageOf(sender.id);
      page.reply = reply;
      page.deliver(message);
    },

    dropSender(senderId) {
      pages.get(senderId)?.server?.close();
      pages.delete(senderId);
    },

    subscriptionCount() {
      let n = 0;
      for (const page of pages.values()) n += page.server?.subscriptionCount() ?? 0;
      return n;
    },
  };
}
