// Who checks what against the description. Each boundary validates once, on the side that
// cannot trust the other: a page is not trusted by the process that serves it, so that server
// checks every input and every output before the page sees it; the engine host runs native
// code on files from anywhere and is not trusted by the process that started it, so that
// client checks the params it sends (filling in their defaults) and everything the host returns.
export type Side = 'client' | 'server';

export interface ChannelChecks {
  /** which side checks a method's input (and fills in its defaults) */
  inputs: Side;
  /** which side checks a method's output and every event payload */
  outputs: Side;
}

/** The page's boundaries: Electron IPC, the /ws of `power serve`. */
export const CHECKED_BY_SERVER: ChannelChecks = Object.freeze({ inputs: 'server', outputs: 'server' });
/** The engine host's boundary. */
export const CHECKED_BY_CLIENT: ChannelChecks = Object.freeze({ inputs: 'client', outputs: 'client' });
