// When an engine whose model is split over remote machines dies mid-request, which machine
// went away: each server is asked again (a dead one refuses the connection, a live one answers
// once the dead engine's connection to it is closed), so the error names it and says what
// still works. The tokens committed before the failure are the caller's to keep.
import { PowerError } from '../contract/api/errors.js';
import { EngineCrashedError } from '../engine/client.js';
import { probeRpcServer, RpcUnavailableError } from '../engine/rpc.js';
import type { RemoteDevice } from '../engine/split.js';

/** `error` as it was, or, for a crash of an engine with remote devices, a PowerError naming the servers that no longer answer. */
export async function explainRemoteLoss(error: unknown, remote: readonly RemoteDevice[]): Promise<unknown> {
  const crashed = error instanceof EngineCrashedError || (error instanceof PowerError && error.code === 'engine-crashed');
  if (!crashed || remote.length === 0) return error;
  const endpoints = [...new Set(remote.map((d) => d.endpoint))];
  const gone: { endpoint: string; text: string }[] = [];
  for (const endpoint of endpoints) {
    try {
      await probeRpcServer(endpoint, { timeoutMs: 3000 });
    } catch (e) {
      if (!(e instanceof RpcUnavailableError)) throw e;
      const names = remote
        .filter((d) => d.endpoint === endpoint)
        .map((d) => d.name)
        .join(', ');
      const why = e.message.startsWith(`cannot reach the RPC server at ${endpoint}: `)
        ? e.message.slice(`cannot reach the RPC server at ${endpoint}: `.length)
        : e.message;
      gone.push({ endpoint, text: `${names} at ${endpoint} (${why})` });
    }
  }
  const message = (error as Error).message.replace(/^the engine crashed: /, '');
  if (gone.length === 0)
    return new PowerError(
      'engine-crashed',
      `the engine crashed while the model was split over remote machines (every server still answers): ${message}`,
    );
  const left = endpoints.filter((e) => !gone.some((g) => g.endpoint === e));
  return new PowerError(
    'engine-crashed',
    `a remote machine went away during the request: ${gone.map((g) => g.text).join('; ')} no longer answers; ` +
      `the engine stopped (${message}). Load again without it${left.length > 0 ? ` (--rpc ${left.join(',')})` : ' (no --rpc)'}`,
  );
}
