// How the build asks the compiler what a CPU backend targets (scripts/native/cpu-features.mjs):
// the compile command taken apart and rerun as a macro listing, -march=native replaced by what
// gcc's driver passes on an AMX Xeon, and the AMX test ggml-cpu itself applies.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  featuresFromMacros,
  macroCommand,
  NATIVE_ON_AMX_XEON,
  putsWeightsInAmx,
  splitCommand,
} from '../../scripts/native/cpu-features.mjs';

describe('cpu-features', () => {
  test('splitCommand keeps quoted and escaped arguments whole', () => {
    assert.deepEqual(splitCommand(`/usr/bin/cc -DNAME="a b" -I'/x y' a\\ b.c  -O3`), [
      '/usr/bin/cc',
      '-DNAME=a b',
      '-I/x y',
      'a b.c',
      '-O3',
    ]);
    assert.deepEqual(splitCommand('cc -DEMPTY="" x.c'), ['cc', '-DEMPTY=', 'x.c']);
  });

  test('macroCommand drops the object and dependency outputs and -c, and lists the macros', () => {
    const args = ['cc', '-O3', '-march=native', '-mno-amx-int8', '-MD', '-MT', 't.o', '-MF', 't.d', '-o', 't.o', '-c', 'x.c'];
    assert.deepEqual(macroCommand(args), ['cc', '-O3', '-march=native', '-mno-amx-int8', 'x.c', '-dM', '-E']);
  });

  test('on an AMX Xeon, -march=native becomes the explicit flags the driver passes there, in place', () => {
    const args = ['cc', '-march=native', '-mno-amx-int8', 'x.c'];
    assert.deepEqual(macroCommand(args, { onAmxXeon: true }), ['cc', ...NATIVE_ON_AMX_XEON, '-mno-amx-int8', 'x.c', '-dM', '-E']);
    assert.ok(NATIVE_ON_AMX_XEON.includes('-mamx-int8'));
  });

  test('featuresFromMacros names what is defined, in ggml feature names', () => {
    const listing =
      '#define __AVX2__ 1\n#define __AVX512F__ 1\n#define __AVX512VNNI__ 1\n#define __AMX_INT8__ 1\n#define __AMX_TILEX__ 1\n';
    assert.deepEqual(featuresFromMacros(listing), ['AVX2', 'AVX512', 'AVX512_VNNI', 'AMX_INT8']);
  });

  test('weights go to the AMX buffer only with AMX_INT8 and AVX512_VNNI, as ggml-cpu decides', () => {
    assert.equal(putsWeightsInAmx(['AVX512_VNNI', 'AMX_INT8']), true);
    assert.equal(putsWeightsInAmx(['AMX_INT8']), false);
    assert.equal(putsWeightsInAmx(['AVX512_VNNI', 'AMX_TILE']), false);
  });
});
