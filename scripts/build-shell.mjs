#!/usr/bin/env node
// Builds what the Electron shell needs beyond `npm run build` (tsc): the preload as one
// CommonJS file. A sandboxed preload can require nothing but 'electron', so the PowerApi
// description and the IPC client (with zod) are bundled into dist/shell/preload.cjs.
import { build } from 'esbuild';

await build({
  entryPoints: ['main/shell/preload.ts'],
  outfile: 'dist/shell/preload.cjs',
  bundle: true,
  platform: 'browser',
  format: 'cjs',
  target: 'chrome130',
  external: ['electron'],
  logLevel: 'warning',
  legalComments: 'none',
});
