#!/usr/bin/env node
// Builds everything the desktop app runs: the TypeScript and the renderer (npm run build), then
// the preload bundle and the window icon (build-shell.mjs).
// The native addon is built by npm install (scripts/build-native.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const run = (args) => {
  const r = spawnSync('npm', args, { stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run(['run', '--silent', 'build']);
const r = spawnSync(process.execPath, ['scripts/build-shell.mjs'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
if (!existsSync('dist/renderer/index.html')) console.error('power: the renderer was not built into dist/renderer; the window will say so');
