// FR, the compact draft projection (`--fr-vocab N`, spec_mtp_fr_vocab_size): the MTP head
// projects onto its first N rows only and drafts among those tokens. The target still verifies
// every token, so the reply is the autoregressive one, greedy and seeded, past 256 positions;
// a token at or above N is never a draft the target accepted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { SAMPLING_DEFAULTS, type SamplingOptions } from '../../app/contract/engine-types.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import { syntheticModels } from '../fixtures/models.js';

const PROMPTS = [
  [1, 300, 301, 302],
  [1, 263, 400, 500, 600, 700],
  [1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
];
const N = 300; // tokens per reply: past 256 positions
const FR = 400; // of the 882 tokens of hybrid-mtp.gguf's vocabulary
const MODES: readonly (readonly [string, SamplingOptions])[] = [
  ['greedy', SAMPLING_DEFAULTS],
  ['seeded', { ...SAMPLING_DEFAULTS, temperature: 0.8, topK: 40, topP: 0.95, seed: 7 }],
];

const acceptedIds = (outcome: GenerationOutcome) =>
  outcome.rounds.flatMap((r) => r.tokens.filter((t) => t.origin === 'accepted').map((t) => t.id));

describe('FR: the MTP head drafting among the first N tokens (hybrid-mtp.gguf)', () => {
  let engine: EngineClient;
  let controlModel: string;
  let mtpModel: string;
  // by `${mode} ${prompt index}`
  const control = new Map<string, GenerationOutcome>();

  const replies = async (modelId: string, options: { strategy: 'none' | 'mtp'; k?: number; frVocab?: number }) => {
    const { sessionId } = await engine.call('createSession', {
      modelId,
      contextSize: 1024,
      threads: 1,
      strategy: options.strategy,
      k: options.k ?? 0,
      s: options.k ?? 0,
      ...(options.frVocab !== undefined ? { frVocab: options.frVocab } : {}),
    });
    const out = new Map<string, GenerationOutcome>();
    for (const [mode, sampling] of MODES) {
      for (const [i, prompt] of PROMPTS.entries()) {
        out.set(`${mode} ${i}`, await runRequest(engine, { sessionId, prompt: Int32Array.from(prompt), maxTokens: N, sampling }));
      }
    }
    await engine.call('disposeSession', { sessionId });
    return out;
  };

  before(async () => {
    const models = await syntheticModels();
    engine = EngineClient.start();
    controlModel = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0 })).modelId;
    mtpModel = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0, loadMtp: true })).modelId;
    for (const [key, outcome] of await replies(controlModel, { strategy: 'none' })) control.set(key, outcome);
  });
  after(() => engine.close());

  test('greedy and seeded replies equal the control with and without FR; under FR no accepted draft is a token at or above N', async () => {
    const full = await replies(mtpModel, { strategy: 'mtp', k: 7 });
    const fr = await replies(mtpModel, { strategy: 'mtp', k: 7, frVocab: FR });
    for (const [key, expected] of control) {
      assert.equal(expected.tokens.length, N, key);
      assert.deepEqual(full.get(key)!.tokens, expected.tokens, `${key}: the whole head`);
      assert.deepEqual(fr.get(key)!.tokens, expected.tokens, `${key}: FR ${FR}`);
      assert.ok(
        acceptedIds(fr.get(key)!).every((id) => id < FR),
        `${key}: FR accepted ${acceptedIds(fr.get(key)!).filter((id) => id >= FR)}`,
      );
    }
    const all = (runs: Map<string, GenerationOutcome>) => [...runs.values()].flatMap(acceptedIds);
    // the whole head does draft past N on these prompts: FR is what keeps those drafts out
    assert.ok(
      all(full).some((id) => id >= FR),
      'the whole head drafts some token at or above N',
    );
    assert.ok(all(fr).length > 0, 'the narrowed head still drafts what the target emits');
  });

  test('FR is refused with the reason on another strategy and past the vocabulary', async () => {
    const session = (strategy: 'ngram' | 'mtp', frVocab: number) =>
      engine.call('createSession', { modelId: mtpModel, contextSize: 1024, threads: 1, strategy, k: 3, s: 3, frVocab });
    await assert.rejects(session('ngram', 64), /FR \(frVocab\) .* applies to strategy 'mtp' only, not 'ngram'/);
    await assert.rejects(session('mtp', 883), /FR's draft vocabulary \(883 tokens\) is larger than this model's vocabulary \(882 tokens\)/);
  });
});
