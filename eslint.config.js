// Lint, including the layering law of docs/architecture.md "Layering" ("Bad layering" in VS Code):
//   app/       imports nothing of ours and nothing of Node or Electron (pure, both sides)
//   renderer/  imports app/ only; no Node, no Electron
//   main/      imports app/ and main/; only the Electron shell files import 'electron'
//   only the engine host (main/engine/binding.ts) loads the .node binding
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'module', 'url', 'util', 'worker_threads'];
const ELECTRON_SHELL = ['main/shell/**'];
const ENGINE_HOST = ['main/engine/host.ts', 'main/engine/binding.ts'];

const layer = (message, patterns) => ({
  'no-restricted-imports': ['error', { patterns: patterns.map((group) => ({ group: [group], message })) }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', '.cache/**', 'native/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['app/**/*.ts'],
    rules: layer('Bad layering: app/ is pure and imports nothing of ours, of Node or of Electron.', [
      '../main/**', '../renderer/**', '../native/**', 'electron', ...NODE_BUILTINS,
    ]),
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: layer('Bad layering: renderer/ imports app/ only (no Node, no Electron, no main/).', [
      '../main/**', '../../main/**', '**/main/**', '**/native/**', '**/test/**', '**/scripts/**', '**/bin/**', 'electron', ...NODE_BUILTINS,
    ]),
  },
  {
    files: ['main/**/*.ts'],
    ignores: [...ELECTRON_SHELL, ...ENGINE_HOST],
    rules: layer('Bad layering: only main/shell/ imports electron, only the engine host loads the native binding, main/ never imports renderer/.', [
      'electron', '**/renderer/**', '*.node', '**/*.node', '**/engine/binding.js',
    ]),
  },
  {
    // the shell's decisions are plain functions that the tests run under Node: types only
    files: ['main/shell/policy/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', allowTypeImports: true, message: 'Shell policies are pure and tested under Node: import Electron types only (import type).' }],
      }],
    },
  },
  {
    files: ENGINE_HOST,
    rules: layer('Bad layering: the engine host imports neither electron nor renderer/.', [
      'electron', '**/renderer/**',
    ]),
  },
);
