// npm run lint's check that every path cited in comments and docs exists
// (scripts/check-cited-paths.mjs): what counts as a citation, where it may resolve, and that a
// moved file's citation is reported.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { brokenCitations, citedPaths, citingText, resolves } from '../../scripts/check-cited-paths.mjs';

describe('cited paths', () => {
  test('comments of source files and all of a Markdown file are read; strings are not', () => {
    const ts = "const p = 'node/gone.ts'; const u = `a // node/gone.ts`; // see app/engine/client.ts\n/* and docs/cli.md */";
    assert.deepEqual(citedPaths(citingText('a.ts', ts)), ['app/engine/client.ts', 'docs/cli.md']);
    assert.deepEqual(citedPaths(citingText('x.md', 'See [the CLI](../docs/cli.md) and `app/engine/protocol.ts`.')), [
      '../docs/cli.md',
      'app/engine/protocol.ts',
    ]);
    assert.deepEqual(citedPaths(citingText('x.sh', 'echo a/b.txt # writes OUT/c.txt via scripts/x.mjs')), ['scripts/x.mjs']);
  });

  test('URLs, absolute paths, placeholders and bare file names are not citations', () => {
    assert.deepEqual(
      citedPaths(
        'https://example.com/a/b.md /tmp/x/y.json OUT_DIR/summary.md gpu-check/MANIFEST.json README.md app://power/%2e%2e/secret.txt',
      ),
      [],
    );
  });

  test('a citation resolves from the root, the citing folder or its ancestors, and a .js names its .ts', () => {
    const root = mkdtempSync(join(tmpdir(), 'power-cited-'));
    try {
      mkdirSync(join(root, 'renderer', 'src', 'logic'), { recursive: true });
      writeFileSync(join(root, 'renderer', 'src', 'logic', 'ab.ts'), '');
      assert.equal(resolves(root, 'renderer/src/store/session.ts', 'logic/ab.ts', null), true);
      assert.equal(resolves(root, 'README.md', 'renderer/src/logic/ab.js', null), true);
      assert.equal(resolves(root, 'README.md', 'logic/ab.ts', null), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a citation of a file that moved is reported with the citing file', () => {
    const root = mkdtempSync(join(tmpdir(), 'power-cited-'));
    try {
      mkdirSync(join(root, 'node'), { recursive: true });
      writeFileSync(join(root, 'node', 'a.ts'), '// the rules live in node/b.ts\nexport {};\n');
      writeFileSync(join(root, 'node', 'b.ts'), '// cited by node/a.ts\nexport {};\n');
      execFileSync('git', ['init', '-q'], { cwd: root });
      execFileSync('git', ['add', '.'], { cwd: root });
      assert.deepEqual(brokenCitations(root), []);
      execFileSync('git', ['mv', 'node/b.ts', 'node/c.ts'], { cwd: root });
      assert.deepEqual(brokenCitations(root), ['node/a.ts: node/b.ts']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
