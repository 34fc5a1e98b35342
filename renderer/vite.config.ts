// Builds the renderer into dist/renderer, which `power serve` serves at `/` (and the Electron
// shell will load from disk: hence relative asset URLs).
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'renderer',
  base: './',
  logLevel: 'warn',
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 1024,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
