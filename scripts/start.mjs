#!/usr/bin/env node
// `npm start`: builds what the desktop app needs and launches it in Electron. Where the
// Electron binary is not installed, says so in one line and points to `npx power serve`
// (the same app in a browser), exit code 1, no stack trace.
import { spawn, spawnSync } from 'node:child_process';

import { electronBinary } from './electron-binary.mjs';

const electron = electronBinary();
if (!electron.path) {
  console.error(
    `power: cannot start the desktop app: ${electron.reason}; run the same app in your browser with \`npx power serve\` (with internet access, \`node node_modules/electron/install.js\` installs Electron)`,
  );
  process.exit(1);
}

const built = spawnSync(process.execPath, ['scripts/build-app.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const child = spawn(electron.path, ['.', ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
