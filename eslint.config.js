// Lint, including the layering law of docs/architecture.md "Layering" ("Bad layering" in VS Code).
// Each top-level folder is named for where its code runs, and a rule at each boundary:
//   contract/  the shared contract: imports nothing of ours outside it, nothing of Node or Electron
//   renderer/  the page: imports contract/ only
//   engine/    the engine host process: the only folder that loads the .node (engine/binding.ts);
//              imports contract/ and node/paths.ts only
//   node/      the Node side (front doors cli/ and serve/ → service/ → runtime/ → engine/, the
//              engine client); never electron, the renderer, the shell or tools/
//   electron/  the Electron shell and preload: the only folder that imports 'electron'
//   tools/, bench/  the synthetic models and the benchmarks: nothing product-side imports them
//              (the `power make-models` command excepted)
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'module', 'url', 'util', 'worker_threads'];
const NATIVE_BINDING = ['*.node', '**/*.node', '**/engine/binding.js', '**/engine/host.js'];

// a pattern given as an array is one group: a negation (!) belongs with what it excepts
const layer = (message, patterns) => ({
  'no-restricted-imports': ['error', { patterns: patterns.map((group) => ({ group: Array.isArray(group) ? group : [group], message })) }],
});

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', '.cache/**', 'native/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['contract/**/*.ts'],
    rules: layer('Bad layering: contract/ is pure and imports nothing of ours outside it, of Node or of Electron.', [
      '**/engine/**',
      '**/node/**',
      '**/electron/**',
      '**/tools/**',
      '**/renderer/**',
      '**/native/**',
      'electron',
      ...NODE_BUILTINS,
    ]),
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: layer('Bad layering: renderer/ imports contract/ only (no Node, no Electron, no engine/, node/, electron/ or tools/).', [
      '**/engine/**',
      '**/node/**',
      '**/electron/**',
      '**/tools/**',
      '**/native/**',
      '**/test/**',
      '**/scripts/**',
      '**/bin/**',
      'electron',
      ...NODE_BUILTINS,
    ]),
  },
  {
    files: ['engine/**/*.ts'],
    ignores: ['engine/host.ts', 'engine/binding.ts'],
    rules: layer(
      'Bad layering: in the engine host only host.ts and binding.ts load the native binding; engine/ imports contract/ and node/paths.ts only.',
      [
        ...NATIVE_BINDING,
        './binding.js',
        './host.js',
        ['**/node/**', '!**/node/paths.js'],
        '**/electron/**',
        '**/tools/**',
        '**/renderer/**',
        'electron',
      ],
    ),
  },
  {
    files: ['engine/host.ts', 'engine/binding.ts'],
    rules: layer('Bad layering: the engine host imports contract/, engine/ and node/paths.ts only.', [
      ['**/node/**', '!**/node/paths.js'],
      '**/electron/**',
      '**/tools/**',
      '**/renderer/**',
      'electron',
    ]),
  },
  {
    files: ['node/**/*.ts'],
    ignores: ['node/cli/make-models.ts'],
    rules: layer(
      'Bad layering: node/ never imports electron, renderer/, electron/ or tools/, and only the engine host loads the native binding.',
      [...NATIVE_BINDING, 'electron', '**/renderer/**', '**/electron/**', '**/tools/**'],
    ),
  },
  {
    files: ['node/cli/make-models.ts'],
    rules: layer('Bad layering: make-models is the front door of tools/models; it imports no electron, renderer/ or native binding.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/electron/**',
    ]),
  },
  {
    // inside the Node side: front doors → service → runtime → engine client, never back up
    files: ['node/service/**/*.ts'],
    rules: layer('Bad layering: node/service/ is called by the front doors (cli/, serve/), never the other way.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/electron/**',
      '**/tools/**',
      '**/cli/**',
      '**/serve/**',
    ]),
  },
  {
    files: ['node/runtime/**/*.ts'],
    rules: layer('Bad layering: node/runtime/ is used by the service; it imports neither the service nor a front door.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/electron/**',
      '**/tools/**',
      '**/cli/**',
      '**/serve/**',
      '**/service/**',
    ]),
  },
  {
    files: ['node/engine/**/*.ts'],
    rules: layer('Bad layering: node/engine/ (the engine client) imports neither runtime/, the service nor a front door.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/electron/**',
      '**/tools/**',
      '**/cli/**',
      '**/serve/**',
      '**/service/**',
      '**/runtime/**',
    ]),
  },
  {
    files: ['electron/**/*.ts'],
    rules: layer('Bad layering: the shell never loads the native binding, imports renderer/ or tools/.', [
      ...NATIVE_BINDING,
      '**/renderer/**',
      '**/tools/**',
    ]),
  },
  {
    // the shell's decisions are plain functions that the tests run under Node: types only
    files: ['electron/policy/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'electron',
              allowTypeImports: true,
              message: 'Shell policies are pure and tested under Node: import Electron types only (import type).',
            },
          ],
        },
      ],
    },
  },
  {
    // the IPC client runs in the sandboxed preload, the dispatcher under Node in tests
    files: ['electron/ipc/**/*.ts'],
    rules: layer('Bad layering: electron/ipc/ is Electron-free (the preload bundles the client; tests run the dispatcher under Node).', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/tools/**',
      ...NODE_BUILTINS,
    ]),
  },
  {
    files: ['tools/**/*.ts', 'bench/**/*.ts'],
    rules: layer('Bad layering: tools/ and bench/ run under Node: no electron, no renderer/, no native binding.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/electron/**',
    ]),
  },
);
