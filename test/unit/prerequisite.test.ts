// A missing prerequisite (test/fixtures/prerequisite.ts): outside CI the suite skips and the
// reason shows, in the spec reporter's line and in the list of skips scripts/test.mjs prints at
// the end (scripts/skip-report.mjs); in CI (CI=true) the suite fails with the same reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';
import { skipSummary } from '../../scripts/skip-report.mjs';
import { MissingPrerequisiteError, requirePrerequisite } from '../fixtures/prerequisite.js';

const REASON = 'the frobnicator is not installed (test)';

/** runs `body` with CI set to `ci` (undefined: unset), restoring it after */
function withCi<T>(ci: string | undefined, body: () => T): T {
  const saved = process.env.CI;
  if (ci === undefined) delete process.env.CI;
  else process.env.CI = ci;
  try {
    return body();
  } finally {
    if (saved === undefined) delete process.env.CI;
    else process.env.CI = saved;
  }
}

describe('a missing prerequisite', () => {
  test('present: no skip, in CI or not', () => {
    for (const ci of [undefined, 'true'])
      assert.equal(
        withCi(ci, () => requirePrerequisite(false)),
        false,
      );
  });

  test('outside CI: the reason is the skip reason', () => {
    for (const ci of [undefined, 'false', ''])
      assert.equal(
        withCi(ci, () => requirePrerequisite(REASON)),
        REASON,
      );
  });

  test('in CI (CI=true): it throws with the reason', () => {
    assert.throws(
      () => withCi('true', () => requirePrerequisite(REASON)),
      (e: unknown) => e instanceof MissingPrerequisiteError && e.message.startsWith(REASON),
    );
  });

  describe('a suite run by node --test as scripts/test.mjs runs it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'power-prerequisite-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'needs-frobnicator.test.ts');
    const skips = join(dir, 'skips.json');
    writeFileSync(
      file,
      [
        "import { describe, test } from 'node:test';",
        `import { requirePrerequisite } from ${JSON.stringify(pathToFileURL(join(ROOT, 'test/fixtures/prerequisite.ts')).href)};`,
        `describe('needs the frobnicator', { skip: requirePrerequisite(${JSON.stringify(REASON)}) }, () => {`,
        "  test('frobnicates', () => {});",
        '});',
        "test('another test of the file', (t) => {",
        `  const why = requirePrerequisite(${JSON.stringify(`${REASON}, inside a test`)});`,
        '  if (why) return t.skip(why);',
        '});',
      ].join('\n'),
    );
    const run = (ci: string | undefined) => {
      const env = { ...process.env };
      // the child is a test run of its own, not a file of this one
      delete env.NODE_TEST_CONTEXT;
      delete env.CI;
      if (ci !== undefined) env.CI = ci;
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '--test',
          '--test-reporter=spec',
          '--test-reporter-destination=stdout',
          `--test-reporter=${join(ROOT, 'scripts', 'skip-report.mjs')}`,
          `--test-reporter-destination=${skips}`,
          file,
        ],
        { cwd: ROOT, env, encoding: 'utf8' },
      );
      return { status: r.status, output: r.stdout + r.stderr + skipSummary(readFileSync(skips, 'utf8')) };
    };

    test('outside CI: it passes, and the reasons show where the skips happen and in the list at the end', () => {
      const { status, output } = run(undefined);
      assert.equal(status, 0, output);
      assert.match(output, new RegExp(`needs the frobnicator .*# ${REASON.replace(/[()]/g, '\\$&')}`));
      const list = output.slice(output.indexOf('skipped (2), each with its reason:'));
      assert.ok(list.length < output.length, output);
      assert.ok(list.includes(`needs the frobnicator: ${REASON}`), list);
      assert.ok(list.includes(`another test of the file: ${REASON}, inside a test`), list);
      assert.match(
        output.trimEnd().split('\n').at(-1)!,
        /^tests: 0 passed, 0 failed, 1 skipped$/,
        'the counts (of tests: the skipped suite is listed) close the run',
      );
    });

    test('in CI: the file fails, and its output gives the reason', () => {
      const { status, output } = run('true');
      assert.notEqual(status, 0, output);
      assert.ok(output.includes(`MissingPrerequisiteError: ${REASON} (CI=true`), output);
    });
  });
});
