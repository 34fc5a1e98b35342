// One channel layer for every boundary (the idea of VS Code's IChannel/IServerChannel):
// serveChannel and connectChannel over a ChannelPort, generated from a description, one
// wire protocol, and ChannelChecks saying which end validates what.
export { CHECKED_BY_CLIENT, CHECKED_BY_SERVER, type ChannelChecks, type Side } from './checks.js';
export { connectChannel, type ChannelConnection, type ConnectOptions } from './connect.js';
export { describeIssues } from './issues.js';
export type { ChannelPort } from './port.js';
export { ClientMessage, EventName, refusal, ServerMessage } from './protocol.js';
export { inProcess } from './in-process.js';
export { serveChannel, type ChannelServer, type ImplementationOf, type ServeOptions } from './serve.js';
