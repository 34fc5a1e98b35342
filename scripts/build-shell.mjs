#!/usr/bin/env node
// Builds what the Electron shell needs beyond `npm run build` (tsc): the preload as one
// CommonJS file, and the window icon (packaging/icon.png, drawn by make-icons.mjs). A sandboxed preload can require nothing but 'electron', so the PowerApi
// description and the IPC client (with zod) are bundled into dist/shell/preload.cjs.
import { copyFileSync, mkdirSync } from 'node:fs';

import { build } from 'esbuild';

await build({
  entryPoints: ['main/preload.ts'],
  outfile: 'dist/shell/preload.cjs',
  bundle: true,
  platform: 'browser',
  format: 'cjs',
  target: 'chrome130',
  external: ['electron'],
  logLevel: 'warning',
  legalComments: 'none',
});

mkdirSync('dist/shell', { recursive: true });
copyFileSync('packaging/icon.png', 'dist/shell/icon.png');
