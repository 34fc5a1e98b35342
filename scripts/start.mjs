#!/usr/bin/env node
// `npm start`: builds what the desktop app needs and launches it in Electron, with the real model
// (scripts/install-real-model.mjs) offered as the default where it is installed: added to the
// library and loaded when nothing else was chosen (app/service/default-model.ts). Where the
// Electron binary is not installed, says so in one line and points to `npx power serve` (the
// same app in a browser), exit code 1, no stack trace.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

import { electronBinary } from './electron-binary.mjs';

const REAL_MODEL = resolve('.cache', 'real', 'gemma-3-270m-q4_k_m.gguf');

const electron = electronBinary();
if (!electron.path) {
  console.error(
    `power: cannot start the desktop app: ${electron.reason}; run the same app in your browser with \`npx power serve\` (where GitHub can be reached, \`node node_modules/electron/install.js\` downloads Electron's binary)`,
  );
  process.exit(1);
}

const built = spawnSync(process.execPath, ['scripts/build-app.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const env = { ...process.env };
if (!env.POWER_DEFAULT_MODEL && existsSync(REAL_MODEL)) env.POWER_DEFAULT_MODEL = REAL_MODEL;
const child = spawn(electron.path, ['.', ...process.argv.slice(2)], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
