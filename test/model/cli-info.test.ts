// `power info` on every synthetic model reports what the GGUF holds, as llama.cpp reads it.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { STRATEGIES } from '../../app/contract/strategies.js';
import { readGgufInfo, parameterCount } from '../../app/gguf/reader.js';
import type { DraftCompatibility } from '../../app/models/draft-compat.js';
import { SYNTHETIC_MODELS, type ModelSet, type SyntheticModelName } from '../../tools/models/synthetic.js';
import { jsonOf, power } from '../fixtures/cli.js';
import { syntheticModels } from '../fixtures/models.js';

interface InfoJson {
  architecture: string;
  parameters: number;
  fileType: string;
  contextLength: number;
  layers: number;
  nextnLayers: number;
  recurrent: boolean;
  vocabType: string;
  vocabSize: number;
  chatTemplate: boolean;
  strategies: Record<string, { available: boolean; reason?: string }>;
  draft?: DraftCompatibility & { path: string };
}

describe('power info', () => {
  let models: ModelSet;
  before(async () => {
    models = await syntheticModels();
  });

  for (const name of Object.keys(SYNTHETIC_MODELS) as SyntheticModelName[]) {
    test(`reports ${name} as written`, async () => {
      const run = power(['info', models[name], '--json']);
      assert.equal(run.code, 0, run.stderr);
      const info = jsonOf<InfoJson>(run);
      const gguf = await readGgufInfo(models[name]);
      const arch = gguf.metadata.get('general.architecture')!.value as string;
      const num = (key: string) => Number(gguf.metadata.get(`${arch}.${key}`)!.value);

      assert.equal(info.architecture, arch);
      // llama.cpp counts every weight the file holds, the NextN block included
      assert.equal(info.parameters, parameterCount(gguf));
      // the file type llama.cpp names from general.file_type (the writer's F16/Q8_0/Q4_0 models)
      const { params } = SYNTHETIC_MODELS[name];
      const dtype = ('dtype' in params ? params.dtype : undefined) ?? 'f32';
      assert.equal(info.fileType, { f32: 'all F32', f16: 'F16', q8_0: 'Q8_0', q4_0: 'Q4_0' }[dtype]);
      assert.equal(info.contextLength, num('context_length'));
      // a gemma4-assistant's blocks are all NextN blocks (an MTP drafter of its own)
      const nextn = arch === 'qwen35' || arch === 'gemma4-assistant' ? num('nextn_predict_layers') : 0;
      assert.equal(info.nextnLayers, nextn);
      assert.equal(info.layers + info.nextnLayers, num('block_count'));
      assert.equal(info.recurrent, arch === 'qwen35');
      assert.equal(info.vocabType, 'spm');
      const tokens = gguf.metadata.get('tokenizer.ggml.tokens')!;
      assert.equal(info.vocabSize, tokens.type === 'array' ? tokens.value.length : -1);
      assert.equal(info.chatTemplate, gguf.metadata.has('tokenizer.chat_template'));
      assert.deepEqual(Object.keys(info.strategies).sort(), [...STRATEGIES].sort());
      if (arch === 'gemma4-assistant' || name.startsWith('mtp-')) {
        // a file of NextN blocks only drafts: no strategy runs it as a target, and each says why
        for (const strategy of STRATEGIES) assert.match(info.strategies[strategy]!.reason!, /it is a draft .*--draft beside its target/);
        return;
      }
      assert.deepEqual(info.strategies.none, { available: true });
      assert.deepEqual(info.strategies.ngram, { available: true });
      if (nextn > 0) {
        assert.deepEqual(info.strategies.mtp, { available: true });
      } else {
        assert.equal(info.strategies.mtp!.available, false);
        assert.match(info.strategies.mtp!.reason!, /no NextN\/MTP layers/);
      }
      assert.match(info.strategies['draft-model']!.reason!, /needs --draft/);
    });
  }

  test('checks a draft against the target', () => {
    const good = jsonOf<InfoJson>(power(['info', models['target.gguf'], '--draft', models['draft-close.gguf'], '--json']));
    assert.deepEqual(good.strategies['draft-model'], { available: true });
    assert.match(good.strategies.eagle3!.reason!, /'llama' model, not an eagle3 artifact/);
    const bad = jsonOf<InfoJson>(power(['info', models['target.gguf'], '--draft', models['draft-badvocab.gguf'], '--json']));
    assert.match(bad.strategies['draft-model']!.reason!, /incompatible: vocabulary size differs/);
  });

  test('shows whether a Gemma 4 assistant or an MTP sidecar fits the target, as its mtp draft', () => {
    const fits = jsonOf<InfoJson>(power(['info', models['gemma4-target.gguf'], '--draft', models['gemma4-assistant.gguf'], '--json']));
    assert.deepEqual(fits.strategies.mtp, { available: true });
    assert.deepEqual([fits.draft?.kind, fits.draft?.compatible], ['mtp', true]);
    const misfit = jsonOf<InfoJson>(power(['info', models['target.gguf'], '--draft', models['gemma4-assistant.gguf'], '--json']));
    assert.match(misfit.strategies.mtp!.reason!, /a gemma4-assistant drafts for a gemma4 target, this one is 'llama'/);
    const sidecar = jsonOf<InfoJson>(power(['info', models['hybrid-mtp.gguf'], '--draft', models['mtp-hybrid.gguf'], '--json']));
    assert.deepEqual(sidecar.strategies.mtp, { available: true });
    const text = power(['info', models['gemma4-target.gguf'], '--draft', models['gemma4-assistant.gguf']]).stdout;
    assert.match(text, /kind {8}Gemma 4 assistant for --strategy mtp/);
    assert.match(text, /fits target yes/);
  });

  test('reports what a draft artifact is, what it declares and whether it fits', () => {
    const eagle3 = jsonOf<InfoJson>(power(['info', models['target.gguf'], '--draft', models['eagle3-close.gguf'], '--json']));
    assert.equal(eagle3.draft?.kind, 'eagle3');
    assert.equal(eagle3.draft?.compatible, true);
    assert.deepEqual(eagle3.draft?.artifact?.targetLayers, [1, 2, 3]);
    assert.match(eagle3.strategies['draft-model']!.reason!, /eagle3 artifact, not a plain draft model/);
    const dspark = power(['info', models['target.gguf'], '--draft', models['dspark-close.gguf']]);
    assert.match(dspark.stdout, /\n {2}kind {8}dspark artifact \(general\.architecture dflash\)\n/);
    assert.match(dspark.stdout, /\n {2}block {7}8 \(at most 8 proposals per round: K ≤ 8\); mask token 0\n/);
    const wrong = power(['info', models['target.gguf'], '--draft', models['eagle3-wrong-hidden.gguf']]);
    assert.equal(wrong.code, 0, wrong.stderr);
    assert.match(
      wrong.stdout,
      /\n {2}fits target no: it was made for target hidden size 96 \(eagle3\.target_hidden_size\), the target has 128\n/,
    );
  });

  test('prints a readable summary without --json', () => {
    const run = power(['info', models['hybrid-mtp.gguf']]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /architecture {2}qwen35 \(hybrid: recurrent \+ attention\)/);
    assert.match(run.stdout, /layers {8}4 \+ 1 NextN\/MTP/);
    assert.match(run.stdout, /recurrent {5}yes/);
    assert.match(run.stdout, /\n {2}mtp {12}available\n/);
    const target = power(['info', models['target.gguf']]);
    assert.match(target.stdout, /\n {2}mtp {12}no: the model has no NextN\/MTP layers/);
  });
});
