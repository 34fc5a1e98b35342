// Lint, including the layering law of docs/architecture.md "Layering" ("Bad layering" in VS Code).
// The top level says which process code runs in, and a rule at each boundary:
//   app/             the Node side: never electron, renderer/, main/ or tools/ (make-models excepted)
//     contract/      the shared contract: imports nothing of ours outside it, nothing of Node or Electron
//     engine-host/   the engine host process: the only folder that loads the .node (binding.ts); imports
//                    app/contract/, app/paths.ts and the protocol it speaks (app/engine/protocol.ts,
//                    build-info.ts, sampling-path.ts) only
//     engine/        the engine as the parent sees it (protocol, client, devices); below runtime/
//     runtime/ → service/ → cli/, serve/   never back up
//   main/            the Electron main process and preload: the only folder that imports 'electron'
//   renderer/        the page: imports app/contract/ only
//   tools/, bench/   the synthetic models and the benchmarks: nothing product-side imports them
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'module', 'url', 'util', 'worker_threads'];
const NATIVE_BINDING = ['*.node', '**/*.node', '**/engine-host/binding.js', '**/engine-host/host.js'];
// what the engine host may import from app/ besides app/contract/
// (gitignore rules: a folder a pattern takes cannot be given back below it, so it is given back first)
const HOST_IMPORTS = [
  '../*',
  '!../contract',
  '!../paths.js',
  '!../engine',
  '../engine/*',
  '!../engine/protocol.js',
  '!../engine/build-info.js',
  '!../engine/sampling-path.js',
];
// what no file of app/ imports (the rules of its sub-folders add theirs)
const NODE_SIDE = [...NATIVE_BINDING, 'electron', '**/renderer/**', '**/main/**', '**/tools/**'];
// a specifier that climbs out of app/contract/ from a file `depth` folders below it
const outOfContract = (depth) => '../'.repeat(depth + 1) + '**';

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
  // app/ first: the folders inside it that have their own rule come after, and replace it
  {
    files: ['app/**/*.ts'],
    ignores: ['app/cli/make-models.ts'],
    rules: layer(
      'Bad layering: app/ never imports electron, renderer/, main/ or tools/, and only the engine host loads the native binding.',
      NODE_SIDE,
    ),
  },
  {
    files: ['app/cli/make-models.ts'],
    rules: layer('Bad layering: make-models is the front door of tools/models; it imports no electron, renderer/ or native binding.', [
      ...NATIVE_BINDING,
      'electron',
      '**/renderer/**',
      '**/main/**',
    ]),
  },
  ...[0, 1, 2].map((depth) => ({
    files: [`app/contract/${'*/'.repeat(depth)}*.ts`],
    rules: layer('Bad layering: app/contract/ is pure and imports nothing of ours outside it, of Node or of Electron.', [
      outOfContract(depth),
      'electron',
      ...NODE_BUILTINS,
    ]),
  })),
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: layer('Bad layering: renderer/ imports app/contract/ only (no Node, no Electron, no other part of app/, main/ or tools/).', [
      ['**/app/*', '!**/app/contract'],
      '**/main/**',
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
    files: ['app/engine-host/**/*.ts'],
    ignores: ['app/engine-host/host.ts', 'app/engine-host/binding.ts'],
    rules: layer(
      'Bad layering: in the engine host only host.ts and binding.ts load the native binding; app/engine-host/ imports app/contract/, app/paths.ts and the engine protocol only.',
      [...NATIVE_BINDING, './binding.js', './host.js', HOST_IMPORTS, 'electron'],
    ),
  },
  {
    files: ['app/engine-host/host.ts', 'app/engine-host/binding.ts'],
    rules: layer('Bad layering: the engine host imports app/contract/, app/paths.ts and the engine protocol only.', [
      HOST_IMPORTS,
      'electron',
    ]),
  },
  {
    // inside the Node side: front doors → service → runtime → engine client, never back up
    files: ['app/service/**/*.ts'],
    rules: layer('Bad layering: app/service/ is called by the front doors (cli/, serve/), never the other way.', [
      ...NODE_SIDE,
      '**/cli/**',
      '**/serve/**',
    ]),
  },
  {
    files: ['app/runtime/**/*.ts'],
    rules: layer('Bad layering: app/runtime/ is used by the service; it imports neither the service nor a front door.', [
      ...NODE_SIDE,
      '**/cli/**',
      '**/serve/**',
      '**/service/**',
    ]),
  },
  {
    files: ['app/engine/**/*.ts'],
    rules: layer('Bad layering: app/engine/ (the engine client) imports neither runtime/, the service nor a front door.', [
      ...NODE_SIDE,
      '**/cli/**',
      '**/serve/**',
      '**/service/**',
      '**/runtime/**',
    ]),
  },
  {
    files: ['main/**/*.ts'],
    rules: layer('Bad layering: the shell never loads the native binding, imports renderer/ or tools/.', [
      ...NATIVE_BINDING,
      '**/renderer/**',
      '**/tools/**',
    ]),
  },
  {
    // the shell's decisions are plain functions that the tests run under Node: types only
    files: ['main/policy/**/*.ts'],
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
    files: ['main/ipc/**/*.ts'],
    rules: layer('Bad layering: main/ipc/ is Electron-free (the preload bundles the client; tests run the dispatcher under Node).', [
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
      '**/main/**',
    ]),
  },
);
