#!/usr/bin/env node
// Builds everything the desktop app runs: the TypeScript (npm run build), the preload bundle
// and window icon (build-shell.mjs), and the renderer when the project has its build script.
// The native addon is built by npm install (scripts/build-native.mjs).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const run = (args) => {
  const r = spawnSync('npm', args, { stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run(['run', '--silent', 'build']);
const r = spawnSync(process.execPath, ['scripts/build-shell.mjs'], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts ?? {};
if (scripts['build:renderer']) run(['run', '--silent', 'build:renderer']);
else console.error('power: no renderer build script yet; the window will say the user interface is not built');
