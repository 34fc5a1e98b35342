// electron-builder.yml against electron-builder's own JSON schema (app-builder-lib's
// scheme.json, the version `npm run dist` uses), plus what Power needs of it: the targets,
// the addon outside the asar, the fuses, and artifact names with version and flavour.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { Ajv } from 'ajv';
import { load } from 'js-yaml';

import { ROOT } from '../../app/paths.js';

const require = createRequire(import.meta.url);
const schema = JSON.parse(await readFile(require.resolve('app-builder-lib/scheme.json'), 'utf8')) as object;
const config = load(await readFile(join(ROOT, 'electron-builder.yml'), 'utf8')) as Record<string, unknown> & {
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
  linux: { target: string[]; icon: string };
  win: { target: { target: string }[]; icon: string };
  artifactName: string;
};

// compiled once: the schema is large
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);

describe('electron-builder.yml', () => {
  test('is valid against electron-builder’s own schema', () => {
    const valid = validate(config);
    assert.equal(valid, true, JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  });

  test('the schema check is not a formality: a misspelt key is reported', () => {
    assert.equal(validate({ ...config, productname: 'Power' }), false);
    assert.equal(validate({ ...config, electronFuses: { runAsNod: false } }), false);
  });

  test('product Power: Linux AppImage and deb, Windows NSIS, with icons', async () => {
    assert.equal(config.productName, 'Power');
    assert.deepEqual(config.linux.target, ['AppImage', 'deb']);
    assert.deepEqual(
      config.win.target.map((t) => t.target),
      ['nsis'],
    );
    for (const icon of [config.linux.icon, config.win.icon]) {
      const bytes = await readFile(join(ROOT, icon));
      assert.ok(bytes.length > 100, icon);
    }
    const png = await readFile(join(ROOT, config.linux.icon));
    assert.equal(png.readUInt32BE(16), 512, 'Linux wants a 512 px icon');
    const ico = await readFile(join(ROOT, config.win.icon));
    assert.equal(ico.readUInt16LE(2), 1, 'an ICO file');
    const sizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => ico[6 + 16 * i] || 256);
    assert.ok(sizes.includes(256) && sizes.includes(16), `ICO sizes ${sizes}`);
  });

  test('the addon and llama.cpp libraries ship outside the asar; build-only packages stay out', () => {
    assert.equal(config.asar, true);
    assert.ok(config.files.includes('build/addon-*/**/*'));
    assert.ok(config.asarUnpack.includes('build/addon-*/**/*'));
    for (const pkg of ['node-llama-cpp', '@node-llama-cpp', 'cmake-js']) assert.ok(config.files.includes(`!node_modules/${pkg}/**/*`), pkg);
    assert.equal(config.npmRebuild, false);
  });

  test('artifact names carry version and flavour', () => {
    assert.match(config.artifactName, /\$\{version\}/);
    assert.match(config.artifactName, /\$\{env\.POWER_PACKAGE_FLAVOURS\}/);
  });

  test('fuses: no run-as-node, no NODE_OPTIONS, no inspector flags, asar only and checked, cookies encrypted', () => {
    assert.deepEqual(config.electronFuses, {
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  test('the packaged entry is the shell’s main process', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { main: string };
    assert.equal(pkg.main, 'dist/main/main.js');
    assert.ok(
      config.files.includes('dist/app/**/*') &&
        config.files.includes('dist/main/**/*') &&
        config.files.includes('dist/shell/**/*') &&
        config.files.includes('dist/renderer/**/*'),
    );
  });
});
