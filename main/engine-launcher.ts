// The engine host as an Electron utility process: the same entry `power serve` forks
// (app/engine-host/host.js), started with utilityProcess so it is a Chromium-managed child of the
// app (listed in the task manager, killed with the app), and a native abort there leaves the
// window standing. host-channel.ts on the other side speaks parentPort.
import { utilityProcess } from 'electron';

import { PARENT_GONE } from '../app/engine-host/host-channel.js';
import type { EngineLauncher } from '../app/engine/launcher.js';

export const utilityProcessLauncher: EngineLauncher = ({ hostFile, env }) => {
  const child = utilityProcess.fork(hostFile, [], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    serviceName: 'Power engine',
  });
  let spawned = false;
  let exited = false;
  const queued: unknown[] = [];
  child.once('spawn', () => {
    spawned = true;
    for (const message of queued.splice(0)) child.postMessage(message);
  });
  child.once('exit', () => (exited = true));
  const post = (message: unknown): void => {
    if (exited) return;
    if (spawned) child.postMessage(message);
    else queued.push(message);
  };
  return {
    get pid() {
      return child.pid ?? null;
    },
    send: post,
    onMessage: (listener) => void child.on('message', listener),
    // utilityProcess reports only the exit code (a crash shows as a non-zero code)
    onExit: (listener) => void child.once('exit', (code) => listener(code, null)),
    stderr: child.stderr,
    disconnect: () => post(PARENT_GONE),
    kill: () => void child.kill(),
  };
};
