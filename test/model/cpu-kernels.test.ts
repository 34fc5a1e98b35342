// The default engine's CPU matrix kernels compute a row of a batch exactly as they compute the
// row alone, for every weight type, in the repacked and the plain weight buffers, on one and
// two threads (native/tools/kernel_rows.cpp; docs/exactness.md, matrix kernels): the 2D
// products (mul_mat) and a Mixture-of-Experts layer's expert products (mul_mat_id, each row
// routed to 2 of 8 experts), on which the cpu flavour's expertsBatchInvariant claim rests. As
// released, the repacked Q4_K gemm, llamafile's tinyBLAS for F32/F16/BF16/IQ4_NL and the IQ
// panel summed otherwise, so a speculative verify row left the one-row decode it stands for. On
// a CPU with AVX-512 VNNI the Q8_0, Q4_0, Q5_0 and IQ4_NL batches run the paired tinyBLAS kernel
// of ggml-cpu-llamafile-q0-pairs.patch, a faster kernel that must keep the same sums: the tool
// names the kernels it ran on, each test logs them, and where this CPU has AVX-512 VNNI the
// paired kernel must be among them (elsewhere the log says it was not exercised).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';

import { addonDir } from '../../app/engine/build-info.js';

const tool = join(addonDir('cpu'), 'power-kernel-rows');

interface KernelRows {
  code: number | null;
  /** one line per product checked: `TYPE BUFFER SHAPE: ok` or `...: differs at ...` */
  checks: string[];
  /** the `#` lines: the backend's features, the kernels each type ran on, the paired kernel's use */
  notes: string[];
  stderr: string;
}

function kernelRows(args: string[]): KernelRows {
  const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 600_000 });
  const lines = r.stdout.trim().split('\n');
  return {
    code: r.status,
    checks: lines.filter((l) => !l.startsWith('#')),
    notes: lines.filter((l) => l.startsWith('#')),
    stderr: r.stderr,
  };
}

/** The CPU's flags as Linux reports them; null where /proc/cpuinfo is not there to read. */
function cpuFlags(): Set<string> | null {
  try {
    const line = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return line ? new Set(line[1]!.trim().split(/\s+/)) : null;
  } catch {
    return null;
  }
}

// what ggml-cpu-llamafile-q0-pairs.patch compiles for (a native build on this CPU defines them all)
const PAIRED_FLAGS = ['avx512f', 'avx512bw', 'avx512dq', 'avx512_vnni'];
const PAIRED_TYPES = ['q8_0', 'q4_0', 'q5_0', 'iq4_nl'];

/** The tool's `#` lines in the run's output (`kernels: false`: the backend and the paired kernel's only). */
function logNotes(t: TestContext, r: KernelRows, { kernels = true } = {}): void {
  for (const note of r.notes) if (kernels || !note.startsWith('# kernels')) t.diagnostic(note.replace(/^# /, ''));
}

describe('CPU matrix kernels: a row of a batch equals the row alone', () => {
  for (const threads of ['1', '2']) {
    test(`every weight type, mul_mat and mul_mat_id, batches of 2-17 and 30-69 rows, ${threads} thread(s)`, (t) => {
      const r = kernelRows(['--threads', threads]);
      // the kernels are the same on any thread count: listed once
      logNotes(t, r, { kernels: threads === '1' });
      const differing = r.checks.filter((l) => !l.endsWith(': ok'));
      assert.deepEqual(differing, [], r.stderr);
      assert.equal(r.code, 0, r.stderr);
      const all = r.checks.join('\n');
      // the check ran: every type in a plain buffer, mul_mat at three heights, mul_mat_id at two
      // with shared and per-expert activations, and the repacked layouts
      // (every type llama-quantize writes: the 1- and 2-bit IQ and the ternary TQ ones too)
      for (const type of [
        'f32',
        'f16',
        'bf16',
        'q8_0',
        'q4_0',
        'q4_1',
        'q5_0',
        'q5_1',
        'iq4_nl',
        'q2_K',
        'q3_K',
        'q4_K',
        'q5_K',
        'q6_K',
        'iq4_xs',
        'iq3_s',
        'iq3_xxs',
        'iq2_s',
        'iq2_xs',
        'iq2_xxs',
        'iq1_s',
        'iq1_m',
        'tq1_0',
        'tq2_0',
        'mxfp4',
      ]) {
        assert.equal(r.checks.filter((l) => new RegExp(`^${type} plain \\d+x`).test(l)).length, 3, `${type}: ${all}`);
        assert.equal(r.checks.filter((l) => l.startsWith(`${type} plain mul_mat_id 8x`)).length, 4, `${type}: ${all}`);
      }
      if (process.arch === 'x64') {
        assert.ok(
          r.checks.some((l) => l.startsWith('q4_K repacked 640x')),
          all,
        );
        // ggml repacks Q2_K on AVX-512 only (its gemv given the gemm's order)
        if (/^# cpu backend:.* AVX512( |$)/m.test(r.notes.join('\n'))) assert.ok(r.checks.includes('q2_K repacked 640x2048: ok'), all);
        for (const type of ['q4_0', 'q4_K']) {
          for (const form of ['shared', 'per-expert']) {
            assert.ok(r.checks.includes(`${type} repacked mul_mat_id 8x128x2048 ${form}: ok`), `${type} ${form}: ${all}`);
          }
        }
      }
      assert.ok(
        r.notes.some((l) => l.startsWith('# kernels q8_0 plain mul_mat_id: ')),
        r.notes.join('\n'),
      );
    });
  }

  test('the AVX-512 VNNI paired tinyBLAS kernel computes the Q8_0, Q4_0, Q5_0 and IQ4_NL batches where the CPU has it', (t) => {
    const r = kernelRows(['--threads', '2', '--types', PAIRED_TYPES.join(','), '--ops', 'mul_mat']);
    logNotes(t, r);
    assert.deepEqual(
      r.checks.filter((l) => !l.endsWith(': ok')),
      [],
      r.stderr,
    );
    assert.equal(r.code, 0, r.stderr);
    const paired = r.notes.find((l) => l.startsWith('# tinyBLAS paired (AVX-512 VNNI): '));
    assert.ok(paired, r.notes.join('\n'));
    const flags = cpuFlags();
    const cpuHasIt = process.arch === 'x64' && flags !== null && PAIRED_FLAGS.every((f) => flags.has(f));
    if (cpuHasIt) {
      assert.equal(paired, `# tinyBLAS paired (AVX-512 VNNI): exercised by ${PAIRED_TYPES.join(' ')}`, r.notes.join('\n'));
      for (const type of PAIRED_TYPES) {
        assert.match(r.notes.join('\n'), new RegExp(`^# kernels ${type} plain mul_mat: .*tinyBLAS paired`, 'm'));
      }
    } else {
      // visible in the run's output: this machine's pass says nothing about the paired kernel
      const why = flags === null ? 'its flags could not be read' : `it lacks ${PAIRED_FLAGS.filter((f) => !flags.has(f)).join(', ')}`;
      t.diagnostic(
        `NOTE: the AVX-512 VNNI paired tinyBLAS kernel was NOT exercised on this CPU (${why}); its batch invariance is unchecked here`,
      );
      assert.match(paired, /: not exercised \(/);
    }
  });

  test('refuses an unknown weight type or op with a usage error', () => {
    const r = kernelRows(['--types', 'q4_Z']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown type q4_Z/);
    const op = kernelRows(['--ops', 'mul_mat,conv']);
    assert.equal(op.code, 2);
    assert.match(op.stderr, /unknown op conv/);
  });
});
