// The per-type cost of one summation order stays measurable: `power-kernel-rows --time` times a
// product in the buffer llama.cpp would load the weights in, built against Power's kernels and
// against the released ones, and bench/kernel-tax.ts turns the two into the table of
// bench/RESULTS-cpu.md. Tiny shapes and one repetition: this checks that the bench runs and reads
// what the tool prints, not how fast anything is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { addonDir } from '../../app/engine/build-info.js';
import { ROOT } from '../../app/paths.js';

const tool = join(addonDir('cpu'), 'power-kernel-rows');

function kernelRows(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('per-type kernel timing', () => {
  test('power-kernel-rows --time prints one median per type and width, in the buffer each type loads in', () => {
    const r = kernelRows(['--time', '--types', 'f16,q4_0,q4_1', '--widths', '1,3', '--rows', '64', '--cols', '256', '--reps', '1']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter((l) => l && !l.startsWith('#'));
    assert.equal(lines.length, 6, r.stdout);
    for (const type of ['f16', 'q4_0', 'q4_1'])
      for (const width of [1, 3])
        assert.match(r.stdout, new RegExp(`^${type} (plain|repacked) 64x256 width ${width}: \\d+(\\.\\d+)? us$`, 'm'));
    // the repacked Q4_0 layout exists on x86 (AVX2 and up), as llama.cpp loads it there
    if (process.arch === 'x64') assert.match(r.stdout, /^q4_0 repacked /m);
  });

  test('power-kernel-rows --time says so when a row is not a whole number of a type’s blocks', () => {
    const r = kernelRows(['--time', '--types', 'q4_K,q8_0', '--widths', '1', '--rows', '16', '--cols', '640', '--reps', '1']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# q4_K: a row of 640 is not a whole number of its 256-value blocks$/m);
    assert.match(r.stdout, /^q8_0 plain 16x640 width 1: /m);
  });

  test('power-kernel-rows refuses a bad clock, a height off the tiles and a shape without --time', () => {
    for (const [args, message] of [
      [['--time', '--clock', 'sundial'], /--clock must be wall or cpu/],
      [['--time', '--rows', '100'], /--rows a multiple of 16/],
      [['--time', '--widths', '0'], /--widths 1 to 512/],
      [['--cols', '640'], /--cols \(with --time\) must be a multiple of 32/],
    ] as const) {
      const r = kernelRows([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, message);
    }
  });

  test('bench/kernel-tax.ts tables Power against the released kernels for each type and width', () => {
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'bench', 'kernel-tax.ts'),
        '--types',
        'f16,q8_0',
        '--threads',
        '1',
        '--rounds',
        '2',
        '--reps',
        '1',
        '--widths',
        '1,2',
        '--shape',
        '64x256',
        '--clock',
        'cpu',
      ],
      { encoding: 'utf8', cwd: ROOT, timeout: 300_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^## What one summation order costs, per weight type/m);
    assert.match(r.stdout, /^\| type \| buffer \| decode Power \| decode released \| 1 row \| 2 rows \|$/m);
    for (const type of ['f16', 'q8_0'])
      assert.match(r.stdout, new RegExp(`^\\| ${type} \\| plain \\| \\S+ .s \\| \\S+ .s \\| [\\d.]+× \\| [\\d.]+× \\|$`, 'm'));
    assert.match(r.stdout, /process CPU time/);
  });
});
