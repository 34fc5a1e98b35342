// power rpc: serves this machine's devices to another Power (or llama.cpp) through llama.cpp's
// own RPC server (ggml_backend_rpc_start_server, in an engine host), until Ctrl-C, SIGTERM or SIGHUP.
// llama.cpp's RPC has no authentication and no encryption: it listens on loopback unless told
// otherwise, and then says on stderr that anyone who can reach the port can use it.
import { isIPv4 } from 'node:net';

import { PowerError } from '../contract/api/errors.js';
import type { DeviceInfo } from '../contract/engine-types.js';
import { describeDevice, DEVICE_REQUESTS, type DeviceRequest } from '../engine/device-select.js';
import { DEFAULT_RPC_PORT } from '../engine/rpc.js';
import { startOnDevice } from '../runtime/open-model.js';
import { int, parseFlags, str } from './args.js';
import { cliError, FailureError, UsageError } from './errors.js';
import type { Io } from './generate.js';

export const RPC_USAGE = `power rpc [--host 127.0.0.1] [--port ${DEFAULT_RPC_PORT}] [--device auto|cuda|vulkan|cpu|NAME,...] [--threads N] [--verbose]
  Serves this machine's devices (every GPU, else the CPU; or the devices named) to other
  machines over llama.cpp's RPC protocol, for their --rpc HOST:PORT. Prints one line,
  "Power RPC server at HOST:PORT serving ...", when it accepts connections; runs until Ctrl-C,
  SIGTERM or SIGHUP. The protocol has no authentication: listen on loopback (the default) and reach it
  through an SSH tunnel, or on a private network only (docs/devices.md).`;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  device: { type: 'string' },
  threads: { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

export interface RpcIo extends Io {
  /** resolves when the process is asked to stop (SIGINT, SIGTERM, SIGHUP; SIGBREAK on Windows) */
  stopSignal: () => Promise<string>;
}

/** The warning a non-loopback address gets: the protocol lets anyone who reaches it in. */
export function exposureWarning(endpoint: string): string {
  return (
    `warning: llama.cpp's RPC protocol has no authentication and no encryption: anyone who can reach ${endpoint} ` +
    "can use this machine's devices and memory and send it any data. Serve on a private network only, " +
    'or keep the default 127.0.0.1 and connect through an SSH tunnel (ssh -L; docs/devices.md)\n'
  );
}

/** --device: auto|cuda|vulkan|cpu (as the other commands), or device names as llama.cpp's rpc-server takes them. */
function deviceChoice(raw: string | undefined): { request: DeviceRequest; names: string[] } {
  if (raw === undefined) return { request: 'auto', names: [] };
  if ((DEVICE_REQUESTS as readonly string[]).includes(raw)) return { request: raw as DeviceRequest, names: [] };
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0 || names.some((n) => !/^[\w.[\]:-]{1,64}$/.test(n))) {
    throw new UsageError(
      `--device takes auto, cuda, vulkan, cpu or device names such as CPU, CUDA0,CUDA1 or Vulkan0 (got '${raw}'; power devices lists them)`,
    );
  }
  const request = names.some((n) => /^CUDA/i.test(n)) ? 'cuda' : names.some((n) => /^Vulkan/i.test(n)) ? 'vulkan' : 'cpu';
  return { request, names };
}

export async function rpcCommand(argv: string[], io: RpcIo): Promise<number> {
  const { values } = parseFlags(argv, FLAGS, 0);
  const host = str(values, 'host') ?? '127.0.0.1';
  // ggml's server binds an IPv4 address it parses itself (no names, no IPv6)
  if (!isIPv4(host)) throw new UsageError(`--host must be an IPv4 address such as 127.0.0.1 or 0.0.0.0 (got '${host}')`);
  const port = int(values, 'port', { min: 0, max: 65535 }) ?? DEFAULT_RPC_PORT;
  const threads = int(values, 'threads', { min: 1, max: 1024 }) ?? 0;
  const { request, names } = deviceChoice(str(values, 'device'));

  const started = await startOnDevice(request, values.verbose === true).catch((error: unknown) => {
    throw cliError(error);
  });
  const { engine } = started;
  try {
    const devices =
      names.length > 0
        ? names
        : request === 'cpu'
          ? [started.device.name]
          : started.kind === 'cuda'
            ? started.devices.filter((d) => d.backend === 'CUDA').map((d) => d.name)
            : [started.device.name];
    const unknown = devices.filter((n) => !started.devices.some((d) => d.name === n));
    if (unknown.length > 0) {
      throw new UsageError(
        `--device: no device named ${unknown.join(', ')} in the ${started.flavour} flavour (it has ${started.devices.map((d) => d.name).join(', ')})`,
      );
    }
    let served;
    try {
      served = await engine.call('rpcServe', { host, port, devices, threads });
    } catch (error) {
      const mapped = cliError(error);
      // the host's own failures (the server did not come up) are ours: exit 1, one line
      throw mapped instanceof PowerError || mapped === error ? new FailureError((error as Error).message) : mapped;
    }
    const loopback = host.startsWith('127.');
    if (!loopback) io.err(exposureWarning(served.endpoint));
    if (started.note) io.err(`[${started.note}]\n`);
    io.out(`Power RPC server at ${served.endpoint} serving ${served.devices.map((d) => describeServed(d)).join(', ')}\n`);

    // serves until asked to stop, or until its engine host ends (then something went wrong)
    const hostGone = new Promise<string>((resolve) => engine.onHostExit((error) => resolve(error.message)));
    const outcome = await Promise.race([io.stopSignal().then((signal) => ({ signal })), hostGone.then((crash) => ({ crash }))]);
    if ('crash' in outcome) throw new FailureError(`the RPC server stopped: ${outcome.crash}`);
    io.err(`power rpc: ${outcome.signal}: stopping\n`);
    return 0;
  } finally {
    await engine.close();
  }
}

const GIB = 1024 ** 3;

/** "CPU: cpu (AMD EPYC), 20.1 of 23.0 GiB free" / "CUDA0: CUDA0 (NVIDIA …, 139.4 of 140.0 GiB free)" */
function describeServed(d: DeviceInfo): string {
  if (d.type !== 'cpu') return describeDevice(d);
  return `${d.name}: ${describeDevice(d)}, ${(d.freeBytes / GIB).toFixed(1)} of ${(d.totalBytes / GIB).toFixed(1)} GiB free`;
}
