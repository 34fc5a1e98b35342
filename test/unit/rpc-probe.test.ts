// The probe that asks an RPC endpoint for its protocol version before the engine host connects
// (ggml-rpc would abort the host on an unreachable server, or wait on a busy one): against fake
// servers on loopback that answer like llama.cpp's, with another version, with something else,
// or not at all.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';

import { probeRpcServer, RpcUnavailableError } from '../../app/engine/rpc.js';

const servers: Server[] = [];
after(() => servers.forEach((s) => s.close()));

/** A server on a free loopback port whose connections `onConnection` handles. */
async function fake(onConnection: (socket: Socket, request: Buffer) => void): Promise<string> {
  const server = createServer((socket) => {
    let got = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 1 + 8 + 24) onConnection(socket, got);
    });
    socket.on('error', () => {});
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function helloResponse(major: number, minor: number): Buffer {
  const out = Buffer.alloc(8 + 28);
  out.writeBigUInt64LE(28n, 0);
  out[8] = major;
  out[9] = minor;
  return out;
}

const refusedWith = (pattern: RegExp) => (e: unknown) => e instanceof RpcUnavailableError && pattern.test(e.message);

describe('the RPC probe', () => {
  test('sends HELLO (command 14, 24 bytes of capabilities) and accepts protocol v6.x with a minor not newer than ours', async () => {
    let request: Buffer | null = null;
    const endpoint = await fake((socket, got) => {
      request = got;
      socket.write(helloResponse(6, 0));
    });
    assert.deepEqual(await probeRpcServer(endpoint), { version: '6.0.0' });
    assert.equal(request![0], 14);
    assert.equal(request!.readBigUInt64LE(1), 24n);
  });

  test('another protocol version is refused with both versions', async () => {
    const endpoint = await fake((socket) => socket.write(helloResponse(5, 0)));
    await assert.rejects(probeRpcServer(endpoint), refusedWith(/speaks protocol v5\.0\.0; this llama\.cpp speaks v6\.0/));
    const newer = await fake((socket) => socket.write(helloResponse(6, 1)));
    await assert.rejects(probeRpcServer(newer), refusedWith(/speaks protocol v6\.1\.0/));
  });

  test('a server that answers something else, or closes, is not an RPC server', async () => {
    const http = await fake((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await assert.rejects(probeRpcServer(http), refusedWith(/answered, but not as llama\.cpp's RPC server/));
    const closes = await fake((socket) => socket.destroy());
    await assert.rejects(probeRpcServer(closes), refusedWith(/closed the connection before answering|ECONNRESET/));
  });

  test('a server that accepts but does not answer (busy with another client) is refused after the time limit, not waited on', async () => {
    const busy = await fake(() => {});
    await assert.rejects(
      probeRpcServer(busy, { timeoutMs: 300 }),
      refusedWith(/accepted the connection but did not answer within 0\.3 s \(it serves one client at a time/),
    );
  });

  test('nothing listening is refused at once', async () => {
    await assert.rejects(
      probeRpcServer('127.0.0.1:1'),
      refusedWith(/^cannot reach the RPC server at 127\.0\.0\.1:1: nothing listens there$/),
    );
  });
});
