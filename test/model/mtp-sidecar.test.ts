// strategy 'mtp' with an MTP sidecar: mtp-hybrid.gguf (hybrid-mtp.gguf's NextN block, embeddings
// and head, without its trunk) beside hybrid-mtp.gguf loaded without its own NextN weights. The
// mtp proposer drafts on the sidecar's MTP context with the target's hidden rows: greedy output
// equals the autoregressive control at K/S points where rollbacks replay, and the sidecar
// proposes and gets accepted exactly what the target's own NextN block does (the same weights).
// Seeded replies past 256 positions equal the control too. Sidecars that do not fit are refused
// with the reason.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { disposeAndClose, GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

const PROMPTS = [
  [1, 300, 301, 302],
  [1, 263, 400, 500, 600, 700],
  [1, 42],
];
const N = 100;
const GRID = [
  [3, 2],
  [7, 6],
  [7, 7],
] as const;

describe('strategy mtp with an MTP sidecar (mtp-hybrid.gguf beside hybrid-mtp.gguf)', () => {
  let models: ModelSet;
  let engine: EngineClient;
  let target = '';
  let withHead = '';
  let sidecar = '';
  const control: GenerationOutcome[] = [];

  const open = async (modelId: string, strategy: 'none' | 'mtp', k = 0, s = 0, draftModelId?: string) =>
    (
      await engine.call('createSession', {
        modelId,
        contextSize: 1024,
        threads: 1,
        strategy,
        k,
        s,
        ...(draftModelId ? { draftModelId } : {}),
      })
    ).sessionId;
  const generate = (sessionId: string, prompt: number[]) =>
    runRequest(engine, { sessionId, prompt: Int32Array.from(prompt), maxTokens: N, sampling: GREEDY });

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start();
    target = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0 })).modelId;
    withHead = (await engine.call('loadModel', { path: models['hybrid-mtp.gguf'], gpuLayers: 0, loadMtp: true })).modelId;
    sidecar = (await engine.call('loadModel', { path: models['mtp-hybrid.gguf'], gpuLayers: 0, loadMtp: true })).modelId;
    const sessionId = await open(target, 'none');
    for (const prompt of PROMPTS) control.push(await generate(sessionId, prompt));
    await engine.call('disposeSession', { sessionId });
  });
  after(() => disposeAndClose(engine, [target, withHead, sidecar]));

  for (const [k, s] of GRID) {
    test(`K=${k} S=${s}: greedy ids equal the control, with the proposals of the target's own NextN block`, async () => {
      const viaSidecar = await open(target, 'mtp', k, s, sidecar);
      const viaOwnHead = await open(withHead, 'mtp', k, s);
      try {
        for (const [i, prompt] of PROMPTS.entries()) {
          const label = `K=${k} S=${s} prompt ${prompt.join(',')}`;
          const got = await generate(viaSidecar, prompt);
          assert.deepEqual(got.tokens, control[i]!.tokens, label);
          const own = await generate(viaOwnHead, prompt);
          assert.ok(got.stats.accepted > 0, `${label}: the sidecar's proposals are accepted`);
          assert.deepEqual(
            [got.stats.proposed, got.stats.accepted, got.stats.replays],
            [own.stats.proposed, own.stats.accepted, own.stats.replays],
            `${label}: the sidecar proposes as the target's own head`,
          );
        }
      } finally {
        await engine.call('disposeSession', { sessionId: viaSidecar });
        await engine.call('disposeSession', { sessionId: viaOwnHead });
      }
    });
  }

  test('seeded, past 256 positions: the replies with the sidecar equal the control (K7/S6)', async () => {
    const seeded = { ...GREEDY, temperature: 0.8, topK: 40, topP: 0.95, seed: 11 };
    const run = (sessionId: string, prompt: number[]) =>
      runRequest(engine, { sessionId, prompt: Int32Array.from(prompt), maxTokens: 300, sampling: seeded });
    const controlSession = await open(target, 'none');
    const viaSidecar = await open(target, 'mtp', 7, 6, sidecar);
    try {
      for (const prompt of PROMPTS) {
        const expected = await run(controlSession, prompt);
        const got = await run(viaSidecar, prompt);
        assert.equal(expected.tokens.length, 300);
        assert.deepEqual(got.tokens, expected.tokens, `prompt ${prompt.join(',')}`);
        assert.ok(got.stats.proposed > 0, 'the sidecar drafted');
      }
    } finally {
      await engine.call('disposeSession', { sessionId: controlSession });
      await engine.call('disposeSession', { sessionId: viaSidecar });
    }
  });

  test("in a chain (ngram, mtp) the sidecar is the mtp member's head, under FR too: the control's ids, the own head's proposals", async () => {
    const chain = { contextSize: 1024, threads: 1, strategy: 'ngram' as const, fallbacks: ['mtp' as const], k: 7, s: 7, frVocab: 400 };
    const viaSidecar = (await engine.call('createSession', { ...chain, modelId: target, draftModelId: sidecar })).sessionId;
    const viaOwnHead = (await engine.call('createSession', { ...chain, modelId: withHead })).sessionId;
    try {
      for (const [i, prompt] of PROMPTS.entries()) {
        const got = await generate(viaSidecar, prompt);
        assert.deepEqual(got.tokens, control[i]!.tokens, `prompt ${i}`);
        const own = await generate(viaOwnHead, prompt);
        assert.deepEqual(
          got.rounds.map((r) => [r.member, r.proposed, r.accepted]),
          own.rounds.map((r) => [r.member, r.proposed, r.accepted]),
          `prompt ${i}: round by round, the same member drafts the same`,
        );
        assert.ok(
          got.rounds.some((r) => r.member === 1 && r.proposed > 0),
          `prompt ${i}: the mtp member drafts some rounds`,
        );
      }
    } finally {
      await engine.call('disposeSession', { sessionId: viaSidecar });
      await engine.call('disposeSession', { sessionId: viaOwnHead });
    }
  });

  test('a sidecar that does not fit, or was loaded without its NextN layers, is refused with the reason', async () => {
    const llamaTarget = (await engine.call('loadModel', { path: models['target.gguf'], gpuLayers: 0 })).modelId;
    const bare = (await engine.call('loadModel', { path: models['mtp-hybrid.gguf'], gpuLayers: 0 })).modelId;
    try {
      for (const [modelId, draftModelId, reason] of [
        [llamaTarget, sidecar, /the MTP sidecar is a 'qwen35' model, the target a 'llama' one/],
        [target, bare, /the MTP sidecar was loaded without its NextN\/MTP layers/],
      ] as const) {
        await assert.rejects(
          engine.call('createSession', { modelId, contextSize: 1024, threads: 1, strategy: 'mtp', k: 3, s: 3, draftModelId }),
          (e: Error) => /strategy 'mtp' cannot run with this draft/.test(e.message) && reason.test(e.message),
          String(reason),
        );
      }
    } finally {
      await engine.call('disposeModel', { modelId: llamaTarget });
      await engine.call('disposeModel', { modelId: bare });
    }
  });
});
