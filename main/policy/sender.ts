// Who may use PowerApi over IPC: the app's own page, in its top frame. An iframe (even one of
// ours), a page that navigated elsewhere, or a frame that is already gone is refused, so a
// compromised or foreign document cannot reach the engine or the file system.
import type { SenderInfo } from '../ipc/dispatcher.js';
import { isAppUrl } from './origin.js';

export function isTrustedSender(sender: SenderInfo): boolean {
  return sender.isMainFrame && isAppUrl(sender.url);
}
