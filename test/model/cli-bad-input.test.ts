// Every bad input exits 2 with one `error:` line that says what was wrong; never a signal.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { K_MAX } from '../../app/contract/profile.js';
import { assertUsageError, power } from '../fixtures/cli.js';
import { makeBadFiles, syntheticModels, type BadFiles } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';
import type { ModelSet } from '../../tools/models/synthetic.js';

describe('bad input', () => {
  const dir = suiteTempDir('power-bad-');
  let bad: BadFiles;
  let models: ModelSet;

  before(async () => {
    bad = await makeBadFiles(dir());
    models = await syntheticModels();
  });

  const generate = (model: string, ...more: string[]) => power(['generate', '--model', model, '--prompt', 'hi', ...more]);

  test('a missing model file', () => {
    assertUsageError(generate(join(dir(), 'nope.gguf')), /model file not found: .*nope\.gguf/);
    assertUsageError(power(['info', join(dir(), 'nope.gguf')]), /model file not found/);
  });

  test('a file that is not GGUF', () => {
    assertUsageError(generate(bad.notGguf), /not a GGUF file/);
    assertUsageError(power(['info', bad.emptyFile]), /not a GGUF file|too short|empty/);
  });

  test('a truncated GGUF', () => {
    assertUsageError(generate(bad.truncated), /truncated/);
  });

  test('an architecture llama.cpp does not know', () => {
    assertUsageError(power(['info', bad.unknownArch]), /architecture 'nosucharch' is not supported/);
  });

  test('a well-formed GGUF that llama.cpp refuses says why', () => {
    assertUsageError(generate(bad.missingTensor), /could not load .*output_norm/);
  });

  test('a file that makes llama.cpp abort is contained in the engine host', () => {
    const run = generate(bad.duplicateTokens);
    assertUsageError(run, /crashed while loading/);
  });

  test('a prompt longer than --ctx', () => {
    const long = 'the quick brown fox jumps over the lazy dog '.repeat(20);
    assertUsageError(
      power(['generate', '--model', models['target.gguf'], '--prompt', long, '--ctx', '32']),
      // refused by its size before tokenising (a token covers at most the longest token's bytes)
      /the prompt is \d+ bytes, so at least \d+ tokens .* but the context holds 32/,
    );
  });

  test('unknown flags, commands and bad values', () => {
    const target = models['target.gguf'];
    assertUsageError(generate(target, '--frobnicate'), /unknown option '--frobnicate'/);
    assertUsageError(power(['frobnicate']), /unknown command 'frobnicate'/);
    assertUsageError(generate(target, '--max-tokens', '0'), /--max-tokens must be an integer from 1/);
    assertUsageError(generate(target, '--max-tokens', 'ten'), /--max-tokens must be an integer/);
    assertUsageError(generate(target, '--temperature=-1'), /--temperature must be a number from 0/);
    assertUsageError(generate(target, '--temperature', '-1'), /--temperature needs a value; .* write --temperature=VALUE/);
    assertUsageError(generate(target, '--top-p', '0'), /--top-p must be a number greater than 0/);
    assertUsageError(generate(target, '--gpu-layers', 'many'), /--gpu-layers must be an integer/);
    assertUsageError(generate(target, '--flash-attn', 'maybe'), /--flash-attn must be one of auto, on, off/);
    assertUsageError(generate(target, '--ctx', '8'), /--ctx must be an integer from 16/);
    assertUsageError(generate(target, '--strategy', 'magic'), /--strategy must be one of none, ngram/);
    assertUsageError(power(['generate', '--model', target]), /give a prompt with --prompt/);
    assertUsageError(power(['generate', '--model', target, '--prompt', 'a', '--prompt-tokens', '1']), /give only one of/);
    assertUsageError(power(['generate', '--model', target, '--prompt-tokens', '1,x']), /comma-separated token ids/);
    assertUsageError(power(['generate', '--model', target, '--prompt-tokens', '1,99999']), /outside the vocabulary/);
    assertUsageError(power(['generate', '--model', target, '--prompt-file', join(dir(), 'none.txt')]), /cannot read the prompt file/);
  });

  test('bad K, S, FR and profile values', async () => {
    const target = models['target.gguf'];
    const spec = (...more: string[]) => generate(target, '--strategy', 'ngram', ...more);
    assertUsageError(spec('--k', '0'), new RegExp(`--k must be an integer from 1 to ${K_MAX} \\(got '0'\\)`));
    assertUsageError(spec('--k', String(K_MAX + 1)), new RegExp(`--k must be an integer from 1 to ${K_MAX}`));
    assertUsageError(spec('--k', '3', '--s', '4'), /--s must be from 0 to K \(3\) \(got 4\)/);
    assertUsageError(spec('--s', 'x'), /--s must be an integer/);
    assertUsageError(spec('--fr-vocab', '8192'), /compact draft projection .* applies to strategy 'mtp' only, not 'ngram'/);
    assertUsageError(spec('--fr-vocab', '0'), /--fr-vocab must be an integer from 1/);
    const profile = async (name: string, text: string) => {
      const path = join(dir(), name);
      await writeFile(path, text);
      return path;
    };
    assertUsageError(spec('--profile', join(dir(), 'none.toml')), /cannot read the profile/);
    assertUsageError(spec('--profile', await profile('bad.toml', 'spec_mode = \n')), /is not valid TOML/);
    assertUsageError(spec('--profile', await profile('unknown.toml', 'spec_mode = "ngram"\nspec_turbo = 1\n')), /is invalid: .*spec_turbo/);
    assertUsageError(
      spec('--profile', await profile('big.toml', 'spec_mode = "ngram"\nspec_draft_max = 99\n')),
      /is invalid: spec_draft_max/,
    );
    assertUsageError(spec('--profile', await profile('mode.toml', 'spec_mode = "turbo"\n')), /is invalid: spec_mode/);
    assertUsageError(
      spec('--profile', await profile('s.toml', 'spec_mode = "ngram"\nspec_draft_max = 3\nspec_mtp_recurrent_snapshots = 5\n')),
      /must not exceed spec_draft_max/,
    );
    assertUsageError(
      spec('--profile', await profile('fr.toml', 'spec_mode = "ngram"\nspec_mtp_fr_vocab_size = 8192\n')),
      /compact draft projection .* applies to strategy 'mtp' only/,
    );
  });

  test('bad strategy lists and p-min values are refused with the reason', async () => {
    const target = models['target.gguf'];
    assertUsageError(generate(target, '--strategy', 'ngram,ngram'), /--strategy: 'ngram' appears twice in the strategy list/);
    assertUsageError(generate(target, '--strategy', 'none,ngram'), /--strategy: 'none' cannot be part of a strategy list/);
    assertUsageError(generate(target, '--strategy', 'ngram,,mtp'), /--strategy: the strategy list 'ngram,,mtp' has an empty member/);
    assertUsageError(generate(target, '--strategy', 'ngram,warp'), /--strategy: 'warp' is not a strategy/);
    assertUsageError(
      generate(target, '--strategy', 'draft-model,eagle3'),
      /--strategy: draft-model and eagle3 would each need their own --draft file; a chain takes one draft/,
    );
    // each member is checked as the strategy alone would be
    assertUsageError(generate(target, '--strategy', 'ngram,mtp'), /strategy 'mtp' is not available.*no NextN\/MTP layers/);
    assertUsageError(generate(target, '--strategy', 'ngram', '--p-min', '1.5'), /--p-min must be a number from 0 up to 1 \(got '1.5'\)/);
    assertUsageError(generate(target, '--strategy', 'ngram', '--p-min=-0.1'), /--p-min must be a number from 0 up to 1/);
    const profile = async (name: string, text: string) => {
      const path = join(dir(), name);
      await writeFile(path, text);
      return path;
    };
    assertUsageError(
      generate(target, '--profile', await profile('list.toml', 'spec_mode = "ngram,none"\n')),
      /is invalid: spec_mode: 'none' cannot be part of a strategy list/,
    );
    assertUsageError(
      generate(target, '--profile', await profile('pmin.toml', 'spec_mode = "ngram"\nspec_p_min = 2\n')),
      /is invalid: spec_p_min/,
    );
    assertUsageError(
      generate(target, '--profile', await profile('adaptive.toml', 'spec_mode = "ngram"\nspec_adaptive_k = "yes"\n')),
      /is invalid: spec_adaptive_k/,
    );
  });

  test('a strategy the model cannot serve is refused with the reason', () => {
    assertUsageError(generate(models['target.gguf'], '--strategy', 'mtp'), /strategy 'mtp' is not available.*no NextN\/MTP layers/);
    assertUsageError(generate(models['target.gguf'], '--strategy', 'eagle3'), /strategy 'eagle3' is not available.*needs --draft/);
    assertUsageError(
      generate(models['target.gguf'], '--strategy', 'draft-model', '--draft', models['draft-badvocab.gguf']),
      /draft is incompatible: vocabulary size differs/,
    );
  });

  test('a grammar or JSON schema file that cannot be used', async () => {
    const notJson = join(dir(), 'schema.txt');
    const badGrammar = join(dir(), 'bad.gbnf');
    await writeFile(notJson, 'type: object');
    await writeFile(badGrammar, 'root ::= "unclosed');
    const schema = join(dir(), 'schema.json');
    await writeFile(schema, '{"type": "object"}');
    const target = models['target.gguf'];
    assertUsageError(generate(target, '--grammar', join(dir(), 'none.gbnf')), /--grammar: cannot read .*none\.gbnf/);
    assertUsageError(generate(target, '--json-schema', notJson), /--json-schema: .*schema\.txt is not JSON/);
    assertUsageError(generate(target, '--grammar', badGrammar, '--json-schema', schema), /give --grammar or --json-schema, not both/);
    assertUsageError(generate(target, '--device', 'cpu', '--grammar', badGrammar), /GBNF parser refused the grammar/);
  });
});
