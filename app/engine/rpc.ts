// llama.cpp's RPC backend from the Node side: endpoints as the user writes them, and a probe
// that asks a server for its protocol version before the engine host connects to it.
//
// Why the probe: ggml-rpc aborts the process that uses a server it cannot reach or that does
// not answer its handshake (GGML_ABORT "Failed to connect to …"), and a server serves one client
// at a time, so a busy one would keep the engine waiting without a word. The probe speaks the
// first message of the protocol itself (RPC_CMD_HELLO) with a time limit, so an unreachable,
// busy or foreign endpoint is refused with the reason, and the engine host is asked to connect
// only to servers that just answered.
import { isIPv4, Socket } from 'node:net';

/** ggml-rpc.h of the bundled release: RPC_PROTO_MAJOR_VERSION 6, minor 0. */
export const RPC_PROTOCOL = { major: 6, minor: 0 } as const;
/** GGML_RPC_MAX_SERVERS */
export const MAX_RPC_SERVERS = 16;
/** what `power rpc` listens on without --port (llama.cpp's rpc-server default) */
export const DEFAULT_RPC_PORT = 50052;

const RPC_CMD_HELLO = 14;
const CONN_CAPS_SIZE = 24; // transport.h RPC_CONN_CAPS_SIZE
const HELLO_RESPONSE_SIZE = 4 + CONN_CAPS_SIZE;

export class RpcEndpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcEndpointError';
  }
}

/** The server cannot be used (unreachable, busy, not an RPC server, another protocol version). */
export class RpcUnavailableError extends Error {
  constructor(
    readonly endpoint: string,
    message: string,
  ) {
    super(message);
    this.name = 'RpcUnavailableError';
  }
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** One `host:port`; ggml-rpc takes IPv4 addresses and host names (it splits at the first ':', so no IPv6). */
export function parseEndpoint(raw: string): { host: string; port: number; endpoint: string } {
  const text = raw.trim();
  const colon = text.lastIndexOf(':');
  if (colon <= 0 || text.indexOf(':') !== colon) {
    throw new RpcEndpointError(
      `'${raw}' is not host:port (an IPv4 address or a host name, then the port; IPv6 is not supported by llama.cpp's RPC)`,
    );
  }
  const host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) throw new RpcEndpointError(`'${raw}': the port must be from 1 to 65535`);
  if (!isIPv4(host) && !HOSTNAME.test(host)) throw new RpcEndpointError(`'${raw}': '${host}' is not an IPv4 address or a host name`);
  return { host, port, endpoint: `${host}:${port}` };
}

/** `--rpc a:1,b:2`: distinct endpoints, at most GGML_RPC_MAX_SERVERS. */
export function parseEndpointList(raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new RpcEndpointError('give at least one host:port');
  const out = [...new Set(items.map((i) => parseEndpoint(i).endpoint))];
  if (out.length > MAX_RPC_SERVERS)
    throw new RpcEndpointError(`at most ${MAX_RPC_SERVERS} servers (llama.cpp's GGML_RPC_MAX_SERVERS); got ${out.length}`);
  return out;
}

export interface ProbeOptions {
  /** how long the connection and the answer may take (default 5 s) */
  timeoutMs?: number;
}

/**
 * Connects to `endpoint`, sends the protocol's HELLO and reads the answer: resolves with the
 * server's protocol version, rejects with an RpcUnavailableError that says why not. The
 * connection is closed again at once (the server then accepts its next client).
 */
export function probeRpcServer(endpoint: string, options: ProbeOptions = {}): Promise<{ version: string }> {
  const { host, port } = parseEndpoint(endpoint);
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let received = Buffer.alloc(0);
    let done = false;
    let connected = false;
    const finish = (error: RpcUnavailableError | null, version?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve({ version: version! });
    };
    const timer = setTimeout(() => {
      finish(
        new RpcUnavailableError(
          endpoint,
          connected
            ? `the RPC server at ${endpoint} accepted the connection but did not answer within ${timeoutMs / 1000} s ` +
                '(it serves one client at a time: is another Power or llama.cpp using it? or it is not an RPC server)'
            : `cannot reach the RPC server at ${endpoint} within ${timeoutMs / 1000} s`,
        ),
      );
    }, timeoutMs);
    socket.once('connect', () => {
      connected = true;
      // | rpc_cmd (1 byte) | request_size (8 bytes, little-endian) | rpc_msg_hello_req (24 bytes of capabilities: none) |
      const hello = Buffer.alloc(1 + 8 + CONN_CAPS_SIZE);
      hello.writeUInt8(RPC_CMD_HELLO, 0);
      hello.writeBigUInt64LE(BigInt(CONN_CAPS_SIZE), 1);
      socket.write(hello);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 8) return;
      const size = Number(received.readBigUInt64LE(0));
      if (size !== HELLO_RESPONSE_SIZE) {
        finish(
          new RpcUnavailableError(endpoint, `${endpoint} answered, but not as llama.cpp's RPC server of protocol v${RPC_PROTOCOL.major}.x`),
        );
        return;
      }
      if (received.length < 8 + size) return;
      const [major, minor, patch] = [received[8]!, received[9]!, received[10]!];
      const version = `${major}.${minor}.${patch}`;
      // the client's own rule (ggml-rpc.cpp, negotiate_hello): same major, minor not newer
      if (major !== RPC_PROTOCOL.major || minor > RPC_PROTOCOL.minor) {
        finish(
          new RpcUnavailableError(
            endpoint,
            `the RPC server at ${endpoint} speaks protocol v${version}; this llama.cpp speaks v${RPC_PROTOCOL.major}.${RPC_PROTOCOL.minor} ` +
              '(run the same Power or llama.cpp release on both machines)',
          ),
        );
        return;
      }
      finish(null, version);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'ECONNREFUSED' ? 'nothing listens there' : error.code === 'ENOTFOUND' ? 'no such host' : error.message;
      finish(new RpcUnavailableError(endpoint, `cannot reach the RPC server at ${endpoint}: ${why}`));
    });
    socket.once('close', () => {
      if (!done) finish(new RpcUnavailableError(endpoint, `the RPC server at ${endpoint} closed the connection before answering`));
    });
    socket.connect({ host, port });
  });
}
