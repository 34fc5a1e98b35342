// The borrowed-machine GPU check (test/gpu/native-check.sh, docs/testing.md) built and run here
// on the CPU, from a pack of its own: it must build (a source the engine starts to use must reach
// its CMake too), pass a short exactness matrix, and write the same models as the Node side. Its
// models are a C++ port (native/checker/models.cpp) of tools/models' generator with
// test/gpu/models.ts's shapes: the specs it prints must equal test/gpu/models.ts's at both scales,
// and the small models it writes must be byte-identical to the ones tools/models writes. About 3
// minutes on 2 cores, nearly all of it the build.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';
import { makeModelFiles } from '../../tools/models/synthetic.js';
import { gpuModels, type Scale } from '../gpu/models.js';

const packer = (await import(join(ROOT, 'scripts', 'pack-gpu-check.mjs'))) as { pack: (o: { out: string }) => unknown };

const SHARED = ['gpu-target.gguf', 'gpu-draft.gguf', 'gpu-hybrid.gguf'] as const;

interface Summary {
  ok: boolean;
  exactness: { summary: { cases: number; pass: number; failed: number; skipped: number } };
}

let dir = '';
let checker = '';
let run: { status: number | null; stdout: string; stderr: string };
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'power-native-check-'));
  packer.pack({ out: join(dir, 'gpu-check') });
  // the script's own build and a short matrix: ngram and the draft model, greedy and seeded,
  // past position 256, on the cpu sampling path
  const r = spawnSync(
    'bash',
    [
      join(ROOT, 'test', 'gpu', 'native-check.sh'),
      join(dir, 'out'),
      '--device',
      'cpu',
      '--jobs',
      String(availableParallelism()),
      '--budget',
      '1500',
      '--tokens',
      '300',
      '--paths',
      'cpu',
      '--strategies',
      'ngram,draft-model',
      '--no-variants',
      '--no-speed',
    ],
    { encoding: 'utf8', env: { ...process.env, POWER_CHECK_PACK: join(dir, 'gpu-check'), POWER_CHECK_WORK: join(dir, 'work') } },
  );
  run = { status: r.status, stdout: r.stdout, stderr: r.stderr };
  checker = join(dir, 'work', 'build-cpu', 'power-gpu-check');
});
after(() => rmSync(dir, { recursive: true, force: true }));

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

describe('the borrowed-machine GPU check, on the CPU', () => {
  test('builds from its pack and passes a short exactness matrix', () => {
    assert.equal(run.status, 0, `native-check.sh exited ${run.status}:\n${run.stderr.slice(-3000)}`);
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8')) as Summary;
    assert.equal(summary.ok, true);
    const s = summary.exactness.summary;
    assert.ok(s.cases >= 10, `${s.cases} cases`);
    assert.deepEqual([s.pass, s.failed, s.skipped], [s.cases, 0, 0]);
  });

  test('prints the specs of test/gpu/models.ts at both scales', () => {
    const r = spawnSync(checker, ['--model-specs'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const specs = JSON.parse(r.stdout) as Record<Scale, Record<string, Record<string, unknown>>>;
    for (const scale of ['small', 'full'] as const) {
      const ts = gpuModels(scale);
      for (const file of SHARED) {
        // every parameter of the Node side, but the vocabulary (the checker has only the default one)
        const { vocab, ...params } = ts[file].params as unknown as Record<string, unknown>;
        assert.ok(vocab === undefined || vocab === 'default', `${scale} ${file}: vocabulary ${String(vocab)}`);
        assert.deepEqual(specs[scale][file], params, `${scale} ${file}`);
      }
    }
  });

  test('writes small models byte-identical to the ones tools/models writes', async () => {
    const cpp = join(dir, 'cpp-models');
    const r = spawnSync(checker, ['--write-models', cpp, '--scale', 'small'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const all = gpuModels('small');
    const node = await makeModelFiles(join(dir, 'node-models'), {
      'gpu-target.gguf': all['gpu-target.gguf'],
      'gpu-draft.gguf': all['gpu-draft.gguf'],
      'gpu-hybrid.gguf': all['gpu-hybrid.gguf'],
    });
    for (const file of SHARED) assert.equal(sha256(join(cpp, file)), sha256(node[file]), file);
  });
});
