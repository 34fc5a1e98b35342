#!/usr/bin/env node
// `npm run dist`: builds the packages of electron-builder.yml for this platform (Linux:
// AppImage + deb; Windows: NSIS). Needs Electron's binaries, so a machine with internet access:
// electron-builder downloads the Electron release it packages. Builds everything first (the
// TypeScript, the preload, the renderer), then names the addon flavours the package carries.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const run = (cmd, args, env = process.env) => {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env, shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run('npm', ['run', '--silent', 'build:app']);
const flavours = readdirSync('build')
  .filter((d) => d.startsWith('addon-') && existsSync(join('build', d, 'power.node')))
  .map((d) => d.slice('addon-'.length))
  .sort((a, b) => (a === 'cpu' ? -1 : b === 'cpu' ? 1 : a.localeCompare(b)));
if (flavours.length === 0) {
  console.error('power: no addon is built (npm install builds it); nothing to package');
  process.exit(1);
}
console.log(`power: packaging with the ${flavours.join(' + ')} engine`);
run('npx', ['electron-builder', '--config', 'electron-builder.yml', '--publish', 'never', ...process.argv.slice(2)], {
  ...process.env,
  POWER_PACKAGE_FLAVOURS: flavours.join('-'),
});
