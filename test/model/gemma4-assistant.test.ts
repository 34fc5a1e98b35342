// strategy 'mtp' with a Gemma 4 assistant (gemma4-assistant.gguf beside gemma4-target.gguf):
// llama.cpp's draft-mtp, whose context keeps no KV of its own and attends over the target's.
// Greedy and seeded K7 replies of a conversation far past the 16-cell sliding window equal the
// autoregressive control token for token, and the assistant's proposals are accepted. After each
// request the target's KV cache holds exactly one cell per committed position in the
// full-attention and in the sliding-window cache (engine method memoryCells): a rollback that
// freed the rejected rows of one cache but not the other would leave about K cells behind per
// rejecting round. Pairs that do not fit are refused before anything runs, each with its reason.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { EngineResult } from '../../app/engine/protocol.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest } from '../../app/service/request.js';
import { writeGguf } from '../../tools/gguf/writer.js';
import { SYNTHETIC_MODELS, type ModelSet } from '../../tools/models/synthetic.js';
import { makeGemma4AssistantSpec } from '../../tools/models/synthetic-gemma4.js';
import { disposeAndClose, GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const CONTEXT = 1024;
const K = 7;
const REPLY_TOKENS = 60;
const TURNS = 6;
const WINDOW = SYNTHETIC_MODELS['gemma4-target.gguf'].params.slidingWindow;
const OPENING = [1, 263, 400, 500, 600, 700, 42, 300, 301, 302];
// each turn adds a few tokens of its own before the next reply
const turnTokens = (turn: number): number[] => [5 + turn, 100 + 7 * turn, 250 - turn];

type Cells = EngineResult<'memoryCells'>;

/** the KV cache holds exactly the positions 0..committed-1, one cell each, in both caches */
function assertCellsAre(cells: Cells, committed: number, what: string): void {
  assert.equal(cells.kind, 'iswa', `${what}: Gemma 4's memory is the iSWA cache`);
  const positions = { size: CONTEXT, used: committed, posMin: 0, posMax: committed - 1 };
  assert.deepEqual(cells.base, positions, `${what}: the full-attention cache holds one cell per committed position`);
  // the session's sliding-window cache is full-size (swa_full): the same cells as the other
  assert.deepEqual(cells.swa, positions, `${what}: the sliding-window cache holds one cell per committed position`);
}

describe('strategy mtp with a Gemma 4 assistant (gemma4-target.gguf + gemma4-assistant.gguf)', () => {
  const dir = suiteTempDir('power-gemma4-');
  let models: ModelSet;
  let engine: EngineClient;
  let target = '';
  let assistant = '';

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start();
    target = (await engine.call('loadModel', { path: models['gemma4-target.gguf'], gpuLayers: 0 })).modelId;
    assistant = (await engine.call('loadModel', { path: models['gemma4-assistant.gguf'], gpuLayers: 0 })).modelId;
  });
  after(() => disposeAndClose(engine, [target, assistant]));

  const open = async (strategy: 'none' | 'mtp', draftModelId?: string) =>
    (
      await engine.call('createSession', {
        modelId: target,
        contextSize: CONTEXT,
        threads: 1,
        strategy,
        k: strategy === 'none' ? 0 : K,
        s: 0,
        ...(draftModelId ? { draftModelId } : {}),
      })
    ).sessionId;

  for (const [label, sampling] of [
    ['greedy', GREEDY],
    ['seeded', { ...GREEDY, temperature: 0.8, seed: 7 }],
  ] as [string, SamplingOptions][]) {
    test(`${label} K${K}: a conversation past 256 positions equals the control, and both caches hold the committed positions only`, async () => {
      const spec = await open('mtp', assistant);
      const control = await open('none');
      try {
        let prompt = [...OPENING];
        let committed = 0;
        let proposed = 0;
        let accepted = 0;
        let rejecting = 0;
        for (let turn = 0; turn < TURNS; turn++) {
          const request = { prompt, maxTokens: REPLY_TOKENS, sampling: { ...sampling, seed: sampling.seed + turn } };
          const want = await runRequest(engine, { sessionId: control, ...request });
          const got = await runRequest(engine, { sessionId: spec, ...request });
          const at = got.tokens.findIndex((t, j) => t !== want.tokens[j]);
          assert.deepEqual(got.tokens, want.tokens, `turn ${turn}: diverges from the control at token ${at}`);
          assert.equal(got.stopReason, want.stopReason);
          if (turn > 0) assert.equal(got.native.reusedTokens, committed, `turn ${turn}: reuses the conversation's cache`);
          proposed += got.stats.proposed;
          accepted += got.stats.accepted;
          rejecting += got.rounds.filter((r) => r.proposed > 0 && r.accepted < r.proposed).length;
          // a reply that ran out of tokens leaves its last token unevaluated (the next anchor)
          committed = prompt.length + got.tokens.length - (got.stopReason === 'eos' ? 0 : 1);
          assertCellsAre(await engine.call('memoryCells', { sessionId: spec }), committed, `turn ${turn}, mtp K${K}`);
          assertCellsAre(await engine.call('memoryCells', { sessionId: control }), committed, `turn ${turn}, control`);
          prompt = [...prompt, ...got.tokens, ...turnTokens(turn)];
        }
        console.log(`# ${label}: ${committed} positions, accepted ${accepted} of ${proposed}, ${rejecting} rounds rejected`);
        assert.ok(committed > 256 && committed > 10 * WINDOW, `the conversation (${committed} positions) runs past 256 and the window`);
        // a head that read the wrong rows or cells would almost never agree
        assert.ok(accepted / proposed > 0.05, `the assistant's proposals are accepted: ${accepted} of ${proposed}`);
        assert.ok(rejecting > 10, `${rejecting} rounds rejected a proposal (rollbacks happened)`);
      } finally {
        await engine.call('disposeSession', { sessionId: spec });
        await engine.call('disposeSession', { sessionId: control });
      }
    });
  }

  test('pairs that do not fit are refused with the reason', async () => {
    const base = SYNTHETIC_MODELS['gemma4-assistant.gguf'].params;
    const variant = async (name: string, target: Partial<typeof base.target>) => {
      const path = join(dir(), `${name}.gguf`);
      await writeGguf(path, makeGemma4AssistantSpec({ ...base, name, target: { ...base.target, ...target } }));
      return (await engine.call('loadModel', { path, gpuLayers: 0 })).modelId;
    };
    const llamaTarget = (await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 })).modelId;
    const llamaDraft = (await engine.call('loadModel', { path: models['draft-close.gguf'], gpuLayers: 0 })).modelId;
    const wideHidden = await variant('assistant-hidden-96', { embd: 96 });
    const otherWindow = await variant('assistant-window-32', { slidingWindow: 32 });
    const twoKvHeads = await variant('assistant-2-kv-heads', { kvHeads: 2 });
    const cases: [string, string, RegExp][] = [
      [target, llamaDraft, /the draft 'llama' model has no NextN\/MTP layers .*neither a gemma4-assistant nor an MTP sidecar/],
      [llamaTarget, assistant, /a gemma4-assistant drafts for a gemma4 target, this one is 'llama'/],
      [target, wideHidden, /made for a target hidden size of 96 \(embedding_length_out\), this target's is 64/],
      [target, otherWindow, /made for a sliding window of 32 cells, the target's is 16/],
      [target, twoKvHeads, /reads 2 KV heads of size \d+, the target's \S+ cache holds 1/],
    ];
    try {
      for (const [modelId, draftModelId, reason] of cases) {
        await assert.rejects(
          engine.call('createSession', { modelId, contextSize: CONTEXT, threads: 1, strategy: 'mtp', k: K, s: 0, draftModelId }),
          (e: Error) => /strategy 'mtp' cannot run with this draft/.test(e.message) && reason.test(e.message),
          String(reason),
        );
      }
    } finally {
      for (const modelId of [llamaTarget, llamaDraft, wideHidden, otherWindow, twoKvHeads]) {
        await engine.call('disposeModel', { modelId });
      }
    }
  });
});
