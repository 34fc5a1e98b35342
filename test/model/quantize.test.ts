// `power quantize`: llama.cpp's quantizer through the engine. Each tensor of the written file has
// the type its recipe names, or llama.cpp's documented fallback when its rows do not fill that
// type's blocks (q6_K → q8_0, q4_K → q5_0 below a multiple of 256); `power info --json` groups
// them; a TBQ4 artifact loads and MTP on it stays exact, greedy and seeded; bad input is refused
// with the reason, and no output (nor a temporary file) is left behind.
import assert from 'node:assert/strict';
import { copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { GenerationResult } from '../../app/contract/generation-result.js';
import { EngineClient, type EngineCallError } from '../../app/engine/client.js';
import { readGgufInfo } from '../../app/gguf/reader.js';
import type { GgufInfo } from '../../app/gguf/types.js';
import { ggmlTypeName, nextnBlocks, tensorGroup, type GroupTypes, type TensorGroup } from '../../app/models/tensor-groups.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertUsageError, jsonOf, power } from '../fixtures/cli.js';
import { makeBadFiles, syntheticModels } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

/** TBQ4's type per group (docs/cli.md "power quantize"); 'other' holds the recurrent projections. */
const TBQ4: Record<TensorGroup, string> = {
  mtp: 'q6_K',
  draftHead: 'q4_K',
  ffn: 'q4_0',
  attention: 'q4_K',
  embeddings: 'q6_K',
  other: 'q4_K',
};
/** llama.cpp's tensor_type_fallback for the types these recipes use */
const FALLBACK: Record<string, string> = { q6_K: 'q8_0', q4_K: 'q5_0' };
const BLOCK: Record<string, number> = { q6_K: 256, q4_K: 256, q4_0: 32, q8_0: 32, f16: 1 };

/** Whether llama.cpp quantizes this tensor at all (tensor_allows_quantization, for these models). */
function quantizable(name: string, shape: number[]): boolean {
  return shape.length >= 2 && name.endsWith('weight') && !name.includes('_norm.weight') && !name.includes('ssm_conv1d');
}

/** The type each tensor of `input` should have after a recipe that wants `want(name)`. */
function expectedTypes(input: GgufInfo, want: (name: string) => string): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of input.tensors) {
    if (!quantizable(t.name, t.shape)) {
      out.set(t.name, ggmlTypeName(t.typeName));
      continue;
    }
    const type = want(t.name);
    out.set(t.name, t.shape[0]! % BLOCK[type]! === 0 ? type : FALLBACK[type]!);
  }
  return out;
}

async function actualTypes(path: string): Promise<Map<string, string>> {
  return new Map((await readGgufInfo(path)).tensors.map((t) => [t.name, ggmlTypeName(t.typeName)]));
}

const groupsOf = (path: string): GroupTypes[] => {
  const run = power(['info', path, '--json']);
  assert.equal(run.code, 0, run.stderr);
  return jsonOf<{ tensorGroups: GroupTypes[] }>(run).tensorGroups;
};
const group = (groups: GroupTypes[], g: TensorGroup) => groups.find((x) => x.group === g)!.types;

describe('power quantize', () => {
  let models: ModelSet;
  const dir = suiteTempDir('power-quantize-');
  before(async () => {
    models = await syntheticModels();
  });

  /** `power quantize` to a new file of the suite's folder; no temporary file is left behind */
  const quantize = async (input: string, out: string, ...args: string[]): Promise<string> => {
    const run = power(['quantize', input, join(dir(), out), ...args]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      (await readdir(dir())).filter((f) => f.includes('.partial-')),
      [],
    );
    return run.stdout;
  };
  const tbq4 = new Map<string, Promise<string>>();
  /** the tbq4 artifact of a synthetic model, made once for the tests that need it */
  const tbq4Of = (name: 'hybrid-mtp-e256.gguf' | 'hybrid-mtp.gguf'): Promise<string> => {
    if (!tbq4.has(name))
      tbq4.set(
        name,
        quantize(models[name], `tbq4-${name}`, '--recipe', 'tbq4').then(() => join(dir(), `tbq4-${name}`)),
      );
    return tbq4.get(name)!;
  };

  for (const name of ['hybrid-mtp-e256.gguf', 'hybrid-mtp.gguf'] as const) {
    test(`tbq4 on ${name}: every tensor at the recipe's type, or llama.cpp's fallback for rows K-quants cannot hold`, async () => {
      const stdout = await quantize(models[name], `tbq4-again-${name}`, '--recipe', 'tbq4');
      assert.match(stdout, /^wrote .* \(recipe tbq4, [\d.]+ MiB\)\n {2}mtp block: /);
      const out = join(dir(), `tbq4-again-${name}`);
      const input = await readGgufInfo(models[name]);
      const mtp = new Set(nextnBlocks(input));
      assert.deepEqual(
        await actualTypes(out),
        expectedTypes(input, (n) => TBQ4[tensorGroup(n, mtp)]),
      );
    });
  }

  test('power info --json groups a tbq4 artifact by part, with the types TBQ4 gives on rows of 256', async () => {
    const groups = groupsOf(await tbq4Of('hybrid-mtp-e256.gguf'));
    // the MTP block: its matrices at q6_K, but attn_output (rows of 128) at llama.cpp's q8_0
    assert.deepEqual(group(groups, 'mtp'), { f32: 7, q6_K: 7, q8_0: 1 });
    assert.deepEqual(group(groups, 'draftHead'), { q4_K: 1 });
    assert.deepEqual(group(groups, 'ffn'), { q4_0: 12 });
    assert.deepEqual(group(groups, 'attention'), { q4_K: 10, q5_0: 2 });
    assert.deepEqual(group(groups, 'embeddings'), { q6_K: 2 });
    // the f32 original: every group f32
    for (const g of groupsOf(models['hybrid-mtp-e256.gguf'])) assert.deepEqual(Object.keys(g.types), g.tensors > 0 ? ['f32'] : []);
  });

  test('a standard recipe (q8_0) on target.gguf: every matrix at q8_0, the norms as they were', async () => {
    await quantize(models['target.gguf'], 'target-q8_0.gguf', '--recipe', 'Q8_0');
    const out = join(dir(), 'target-q8_0.gguf');
    assert.deepEqual(
      await actualTypes(out),
      expectedTypes(await readGgufInfo(models['target.gguf']), () => 'q8_0'),
    );
    const groups = groupsOf(out);
    assert.deepEqual(group(groups, 'ffn'), { q8_0: 12 });
    assert.deepEqual(group(groups, 'attention'), { q8_0: 16 });
    assert.deepEqual(group(groups, 'embeddings'), { q8_0: 2 });
  });

  test('an input already quantized (target-q8_0.gguf): refused with the flag that allows it, then q4_0 with --allow-requantize', async () => {
    const input = models['target-q8_0.gguf'];
    const refused = power(['quantize', input, join(dir(), 'refused-q4_0.gguf'), '--recipe', 'q4_0']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /is already quantized: --allow-requantize quantizes it again/);
    assert.deepEqual(
      (await readdir(dir())).filter((f) => f.includes('refused-q4_0')),
      [],
    );
    await quantize(input, 'requantized-q4_0.gguf', '--recipe', 'q4_0', '--allow-requantize');
    assert.deepEqual(
      await actualTypes(join(dir(), 'requantized-q4_0.gguf')),
      // llama.cpp's q4_0 mix keeps the output head at q6_K, q8_0 on these rows of 128
      expectedTypes(await readGgufInfo(input), (name) => (name === 'output.weight' ? 'q6_K' : 'q4_0')),
    );
  });

  test('a pattern file: its types win over the recipe, comments and blank lines skipped, the first match wins', async () => {
    const file = join(dir(), 'types.txt');
    await writeFile(file, '# custom mix\n\nattn_v\\.weight$ = q4_0\nffn_down=f16\nffn_down=q4_0\n');
    await quantize(models['target.gguf'], 'target-custom.gguf', '--recipe', 'q8_0', '--tensor-types', file);
    const out = join(dir(), 'target-custom.gguf');
    const want = (n: string) => (/attn_v\.weight$/.test(n) ? 'q4_0' : /ffn_down/.test(n) ? 'f16' : 'q8_0');
    assert.deepEqual(await actualTypes(out), expectedTypes(await readGgufInfo(models['target.gguf']), want));
  });

  /** --strategy mtp on `model` equals its control over 300 tokens, greedy and seeded, K3/S3 and K7/S2, and drafts */
  const mtpEqualsControl = (
    model: string,
    ks: readonly (readonly [string, string])[] = [
      ['3', '3'],
      ['7', '2'],
    ],
  ): void => {
    const generate = (...args: string[]) => {
      const run = power([
        'generate',
        '--json',
        '--threads',
        '1',
        '--model',
        model,
        '--prompt-tokens',
        '1,42',
        '--max-tokens',
        '300',
        ...args,
      ]);
      assert.equal(run.code, 0, run.stderr);
      return GenerationResult.parse(jsonOf(run));
    };
    for (const [how, sampling] of [
      ['greedy', []],
      ['seeded', ['--temperature', '0.9', '--seed', '11']],
    ] as const) {
      const control = generate('--strategy', 'none', ...sampling);
      assert.equal(control.tokens.length, 300, `${how}: past 256 positions`);
      for (const [k, s] of ks) {
        const mtp = generate('--strategy', 'mtp', '--k', k, '--s', s, ...sampling);
        assert.equal(mtp.digest, control.digest, `${how} K${k} S${s}`);
        assert.ok(mtp.stats.proposed > 0 && mtp.stats.accepted > 0, `${how} K${k} S${s}: the head proposed and was accepted`);
      }
    }
  };

  for (const name of ['hybrid-mtp-e256.gguf', 'hybrid-mtp.gguf'] as const) {
    test(`the tbq4 artifact of ${name} loads, and --strategy mtp equals the control over 300 tokens, greedy and seeded`, async () => {
      mtpEqualsControl(await tbq4Of(name));
    });
  }

  // Q2_K is repacked on AVX-512 CPUs (its gemv given its gemm's order), plain elsewhere: either way
  // a verify row of the mostly-Q2_K copy must equal its decode
  test('a q2_k copy of hybrid-mtp-e256.gguf (rows of 256): --strategy mtp equals the control over 300 tokens, greedy and seeded', async () => {
    await quantize(models['hybrid-mtp-e256.gguf'], 'q2_k-hybrid-mtp-e256.gguf', '--recipe', 'q2_k');
    const types = [...(await actualTypes(join(dir(), 'q2_k-hybrid-mtp-e256.gguf'))).values()];
    assert.ok(types.filter((t) => t === 'q2_K').length >= 4, types.join(' '));
    mtpEqualsControl(join(dir(), 'q2_k-hybrid-mtp-e256.gguf'));
  });

  // the i-quants take ggml-cpu's IQ panel for a batch of 8 rows or more on AVX2 CPUs (their
  // vec_dot given the panel's order), vec_dot below: K7's and K15's verifies are panels, K3's is not
  test('an iq4_xs copy of hybrid-mtp-e256.gguf (rows of 256): --strategy mtp at K3, K7 and K15 equals the control over 300 tokens, greedy and seeded', async () => {
    await quantize(models['hybrid-mtp-e256.gguf'], 'iq4_xs-hybrid-mtp-e256.gguf', '--recipe', 'iq4_xs');
    const types = [...(await actualTypes(join(dir(), 'iq4_xs-hybrid-mtp-e256.gguf'))).values()];
    assert.ok(types.filter((t) => t === 'iq4_xs').length >= 4, types.join(' '));
    mtpEqualsControl(join(dir(), 'iq4_xs-hybrid-mtp-e256.gguf'), [
      ['3', '3'],
      ['7', '7'],
      ['15', '15'],
    ]);
  });

  describe('bad input is refused with the reason, and nothing is written', () => {
    const bad = suiteTempDir('power-quantize-bad-');
    let input = '';
    before(async () => {
      input = join(bad(), 'in.gguf');
      await copyFile(models['target.gguf'], input);
    });
    /** refused with one error line, and the folder holds what it held */
    const refused = async (args: string[], pattern: RegExp) => {
      const before = (await readdir(bad())).sort();
      assertUsageError(power(['quantize', ...args]), pattern);
      assert.deepEqual((await readdir(bad())).sort(), before);
    };
    const out = () => join(bad(), 'out.gguf');

    test('an unknown recipe', () => refused([input, out(), '--recipe', 'q4_k_x'], /^error: unknown recipe 'q4_k_x' \(known: tbq4, f32, /));
    test('no recipe', () => refused([input, out()], /^error: power quantize needs --recipe/));
    test('an input that is not a GGUF file, or is cut short', async () => {
      const files = await makeBadFiles(join(bad(), 'files'));
      await refused([files.notGguf, out(), '--recipe', 'q8_0'], /not a GGUF file/);
      await refused([files.truncated, out(), '--recipe', 'q8_0'], /truncated\.gguf: /);
    });
    test('a missing input', () => refused([join(bad(), 'nope.gguf'), out(), '--recipe', 'q8_0'], /model file not found: .*nope\.gguf/));
    test('the output is the input', () =>
      refused([input, join(bad(), '.', 'in.gguf'), '--recipe', 'q8_0'], /the output .* is the input file/));
    test('an existing output without --force: refused and left as it was; --force replaces it', async () => {
      const kept = join(bad(), 'kept.gguf');
      await writeFile(kept, 'keep me');
      await refused([input, kept, '--recipe', 'q8_0'], /the output .*kept\.gguf exists \(--force replaces it\)/);
      assert.equal(await readFile(kept, 'utf8'), 'keep me');
      const run = power(['quantize', input, kept, '--recipe', 'q8_0', '--force']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal((await readGgufInfo(kept)).tensors.length, (await readGgufInfo(input)).tensors.length);
      assert.deepEqual(
        (await readdir(bad())).filter((f) => f.includes('.partial-')),
        [],
      );
    });
    test('an output folder that does not exist', () =>
      refused([input, join(bad(), 'no', 'out.gguf'), '--recipe', 'q8_0'], /its directory .* does not exist/));
    const patterns = async (text: string, pattern: RegExp, recipe = 'q8_0') => {
      const file = join(bad(), 'types.txt');
      await writeFile(file, text);
      await refused([input, out(), '--recipe', recipe, '--tensor-types', file], pattern);
    };
    test('a pattern file line without =, with its line number', () =>
      patterns('# ok\nattn_v=q4_0\nffn_up q4_0\n', /types\.txt:3: expected regex=type \(got 'ffn_up q4_0'\)/));
    test('a type llama.cpp does not know', () => patterns('attn_v=q4_9\n', /types\.txt:1: unknown tensor type 'q4_9'/));
    test('a type that needs an importance matrix', () => patterns('attn_v=iq2_xxs\n', /types\.txt:1: unknown tensor type 'iq2_xxs'/));
    test('a pattern that is not a regular expression', () =>
      patterns('\n(attn=q4_0\n', /types\.txt:2: '\(attn' is not a regular expression/));
    test('an empty pattern file', () => patterns('# nothing\n', /types\.txt: no regex=type line/));
    test('per-tensor types over a recipe that does not quantize', () =>
      patterns('attn_v=q4_0\n', /applies per-tensor types only over a quantized recipe, not 'f16'/, 'f16'));
    test('an unreadable pattern file', () =>
      refused(
        [input, out(), '--recipe', 'q8_0', '--tensor-types', join(bad(), 'missing.txt')],
        /cannot read the tensor types file .*missing\.txt: no such file/,
      ));
  });

  describe('the engine refuses what llama.cpp cannot take, and writes nothing', () => {
    let engine: EngineClient;
    before(() => {
      engine = EngineClient.start();
    });
    after(() => engine.close());
    const call = (input: string, overrides: { pattern: string; type: string }[]) =>
      engine.call('quantize', { input, output: join(dir(), 'engine-out.gguf'), ftype: 7, overrides });

    test('a pattern std::regex cannot compile, a type name ggml does not have, a file llama.cpp cannot read', async () => {
      await assert.rejects(call(models['target.gguf'], [{ pattern: '(', type: 'q4_0' }]), (e: EngineCallError) =>
        /pattern '\(' is not a regular expression/.test(e.message),
      );
      await assert.rejects(call(models['target.gguf'], [{ pattern: 'attn', type: 'q9_9' }]), (e: EngineCallError) =>
        /llama\.cpp knows no tensor type 'q9_9'/.test(e.message),
      );
      const text = join(dir(), 'text.gguf');
      await writeFile(text, 'not a model\n'.repeat(10));
      await assert.rejects(call(text, []), (e: EngineCallError) =>
        /^llama\.cpp could not quantize .*text\.gguf: .*failed to quantize/.test(e.message),
      );
      await assert.rejects(stat(join(dir(), 'engine-out.gguf')));
    });
  });
});
