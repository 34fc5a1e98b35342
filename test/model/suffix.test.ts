// The suffix drafter (native/src/proposer_suffix.cpp) beyond the contract grid: its store of
// earlier replies (bounded in tokens, shared by the model's sessions, cleared on demand, off for a
// session that asks), a regenerate drafting from that store, and `suffix` in a chain before and
// after a draft model. Synthetic models through the engine host; every speculative run is compared
// with its autoregressive control.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { disposeAndClose, GREEDY, loadSynthetic } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

const SEEDED: SamplingOptions = { ...GREEDY, temperature: 0.9, seed: 7, topK: 40, topP: 0.95 };
const TOKENS = 64;
// short prompts whose replies the target writes freely, and one that repeats a cycle
const PROMPTS: number[][] = [
  [1, 300, 301, 302, 303],
  [1, 263, 400, 500, 600, 700],
  [1, 500, 501, 500, 501, 500, 501],
  [1, ...Array.from({ length: 44 }, (_, i) => [435, 479, 762, 559, 620, 496, 539][i % 7]!)],
];

describe('the suffix drafter', () => {
  let engine: EngineClient;
  let target = '';
  let draft = '';

  before(async () => {
    engine = EngineClient.start();
    [target, draft] = await loadSynthetic(engine, 'target.gguf', 'draft-close.gguf');
  });

  after(() => disposeAndClose(engine, [target, draft]));

  interface Opened {
    sessionId: string;
    run(prompt: number[], sampling?: SamplingOptions, maxTokens?: number): Promise<GenerationOutcome>;
    store(clear?: boolean): Promise<number | null>;
    dispose(): Promise<void>;
  }

  async function open(
    strategy: Strategy,
    o: {
      fallbacks?: Strategy[];
      k?: number;
      suffixStoreTokens?: number;
      suffixStoreFile?: string;
      withDraft?: boolean;
      modelId?: string;
    } = {},
  ): Promise<Opened> {
    const { sessionId } = await engine.call('createSession', {
      modelId: o.modelId ?? target,
      contextSize: 512,
      threads: 1,
      strategy,
      fallbacks: o.fallbacks ?? [],
      k: strategy === 'none' ? 0 : (o.k ?? 7),
      s: 0,
      ...(o.withDraft ? { draftModelId: draft } : {}),
      ...(o.suffixStoreTokens !== undefined ? { suffixStoreTokens: o.suffixStoreTokens } : {}),
      ...(o.suffixStoreFile ? { suffixStoreFile: o.suffixStoreFile } : {}),
    });
    return {
      sessionId,
      run: (prompt, sampling = GREEDY, maxTokens = TOKENS) => runRequest(engine, { sessionId, prompt, maxTokens, sampling }),
      store: async (clear = false) => (await engine.call('suffixStore', { sessionId, clear })).tokens,
      dispose: async () => {
        await engine.call('disposeSession', { sessionId });
      },
    };
  }

  /** every prompt once on a session of its own, seeds following the prompts */
  async function runAll(strategy: Strategy, sampling: SamplingOptions, o: Parameters<typeof open>[1] = {}): Promise<GenerationOutcome[]> {
    const s = await open(strategy, o);
    try {
      const out: GenerationOutcome[] = [];
      for (const [i, prompt] of PROMPTS.entries()) out.push(await s.run(prompt, { ...sampling, seed: sampling.seed + i }));
      return out;
    } finally {
      await s.dispose();
    }
  }

  test('the store keeps earlier replies within its bound in tokens, the oldest dropped; clear empties it', async () => {
    const bound = 150;
    const s = await open('suffix', { suffixStoreTokens: bound });
    try {
      assert.equal(await s.store(true), 0, 'cleared');
      const sizes: number[] = [];
      for (const prompt of PROMPTS) {
        const run = await s.run(prompt);
        assert.ok(run.tokens.length > 1, 'a reply to store');
        sizes.push((await s.store())!);
      }
      // a reply goes to the store when the next request starts (or the session ends), led by the
      // end of its prompt: the first request's is there once the second has started
      assert.equal(sizes[0], 0, 'nothing stored before the first reply ends');
      assert.ok(sizes[1]! > 0, `the first reply was stored: ${sizes.join(', ')}`);
      for (const n of sizes) assert.ok(n <= bound, `the store holds ${n} tokens, over its bound of ${bound}: ${sizes.join(', ')}`);
      // four replies of 64 tokens and their prompts' ends would hold more than the bound: the oldest went
      assert.ok(
        sizes.some((n, i) => i > 0 && n < sizes[i - 1]!),
        `the oldest replies were dropped: ${sizes.join(', ')}`,
      );
      assert.equal(await s.store(true), 0, 'clear empties the store');
    } finally {
      await s.dispose();
    }
  });

  test('a session with the store off neither reads nor adds to the model’s store', async () => {
    const on = await open('suffix');
    await on.store(true);
    await on.run(PROMPTS[0]!);
    await on.dispose(); // its reply goes to the store as the session ends
    const off = await open('suffix', { suffixStoreTokens: 0 });
    try {
      const held = (await off.store())!;
      assert.ok(held > 0, 'the first session stored its reply');
      // the same prompt again: with the store, its first reply would be drafted; without, the
      // reply's drafts come from this request alone
      const again = await off.run(PROMPTS[0]!);
      await off.run(PROMPTS[1]!);
      assert.equal(await off.store(), held, 'the store is unchanged by a session that has it off');
      const control = await open('none');
      try {
        assertDraftedSameAsControl(again, await control.run(PROMPTS[0]!), { label: 'suffix with the store off' });
      } finally {
        await control.dispose();
      }
    } finally {
      await off.store(true);
      await off.dispose();
    }
  });

  test('the store kept in a file outlives its model: read back on the next load, bounded on disk as in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'power-suffix-store-'));
    const file = join(dir, 'store.bin');
    const bound = 150;
    const path = (await syntheticModels())['target.gguf'];
    const load = async () => (await engine.call('loadModel', { path, gpuLayers: 0 })).modelId;
    try {
      let modelId = await load(); // a model of its own: the store is the model's
      const first = await open('suffix', { modelId, suffixStoreFile: file, suffixStoreTokens: bound });
      for (const prompt of PROMPTS) await first.run(prompt);
      await first.dispose(); // the last reply goes in as its session ends
      const again = await open('suffix', { modelId, suffixStoreFile: file, suffixStoreTokens: bound });
      const held = (await again.store())!;
      await again.dispose();
      assert.ok(held > 0 && held <= bound, `the store holds ${held} tokens (bound ${bound})`);
      // the header (12 bytes), then per reply its length and its tokens, 4 bytes each
      const replies = (statSync(file).size - 12) / 4 - held;
      assert.ok(Number.isInteger(replies) && replies >= 1 && replies <= held, `${statSync(file).size} bytes for ${held} tokens`);
      await engine.call('disposeModel', { modelId });

      modelId = await load();
      const reread = await open('suffix', { modelId, suffixStoreFile: file, suffixStoreTokens: bound });
      const control = await open('none');
      try {
        assert.deepEqual(await engine.call('suffixStore', { sessionId: reread.sessionId, clear: false }), { tokens: held, problem: null });
        // the last prompt's reply was stored last, so it is still there: asked again, it is drafted from the file's replies
        const last = PROMPTS[PROMPTS.length - 1]!;
        const run = await reread.run(last);
        assertDraftedSameAsControl(run, await control.run(last), { label: 'suffix from the store read back', accepted: true });
        assert.ok(run.stats.accepted >= run.tokens.length / 2, `drafted from the store: ${run.stats.accepted} of ${run.tokens.length}`);
        assert.equal(await reread.store(true), 0);
        assert.equal(statSync(file).size, 12, 'clear empties the file to its header');
      } finally {
        await control.dispose();
        await reread.dispose();
        await engine.call('disposeModel', { modelId });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a store file made for another vocabulary is left as it is, and the store stays in memory, saying why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'power-suffix-store-'));
    const file = join(dir, 'store.bin');
    // "PWSX", version 1, a vocabulary of 7 tokens, one reply of two tokens
    const foreign = Buffer.from(new Uint32Array([0x58535750, 1, 7, 2, 3, 4]).buffer);
    writeFileSync(file, foreign);
    const path = (await syntheticModels())['target.gguf'];
    const modelId = (await engine.call('loadModel', { path, gpuLayers: 0 })).modelId;
    try {
      const s = await open('suffix', { modelId, suffixStoreFile: file });
      const { tokens, problem } = await engine.call('suffixStore', { sessionId: s.sessionId, clear: false });
      assert.equal(tokens, 0);
      assert.match(problem ?? '', /made for a vocabulary of 7 tokens, this model has \d+: left as it is, the store is in memory only/);
      await s.run(PROMPTS[0]!);
      await s.run(PROMPTS[1]!);
      assert.ok((await s.store())! > 0, 'the store works in memory');
      await s.dispose();
      assert.deepEqual(readFileSync(file), foreign, 'the file is untouched');
    } finally {
      await engine.call('disposeModel', { modelId });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [mode, sampling] of [
    ['greedy', GREEDY],
    ['seeded', SEEDED],
  ] as const) {
    test(`a regenerate of the same prompt drafts from the store (${mode}): more accepted than the first send, the control's tokens`, async () => {
      const control = await open('none');
      const s = await open('suffix');
      try {
        await s.store(true);
        for (const prompt of PROMPTS.slice(0, 3)) {
          const want = await control.run(prompt, sampling);
          const first = await s.run(prompt, sampling);
          const again = await s.run(prompt, sampling); // the same session, its KV reused up to the prompt
          assertDraftedSameAsControl([first, again], [want, want], { label: `suffix ${mode} regenerate`, accepted: true });
          assert.ok(again.stats.accepted > 0, `the regenerate accepted nothing (${again.stats.proposed} proposed)`);
          assert.ok(
            again.stats.accepted > first.stats.accepted,
            `the regenerate accepted ${again.stats.accepted}, the first send ${first.stats.accepted}`,
          );
        }
        // another session on the model drafts from the same store: the same request sent again
        const other = await open('suffix');
        try {
          const want = await control.run(PROMPTS[0]!, sampling);
          const run = await other.run(PROMPTS[0]!, sampling);
          assertDraftedSameAsControl(run, want, { label: `suffix ${mode} another session`, accepted: true });
          assert.ok(run.stats.accepted >= run.tokens.length / 2, `drafted from the store: ${run.stats.accepted} of ${run.tokens.length}`);
        } finally {
          await other.dispose();
        }
      } finally {
        await s.store(true);
        await s.dispose();
        await control.dispose();
      }
    });

    for (const [strategy, fallbacks, label] of [
      ['suffix', ['draft-model'], 'suffix,draft-model'],
      ['draft-model', ['suffix'], 'draft-model,suffix'],
    ] as const) {
      test(`${label} (${mode}) emits the control's tokens, both members drafting`, async () => {
        const want = await runAll('none', sampling);
        const runs = await runAll(strategy, sampling, { fallbacks: [...fallbacks], withDraft: true, suffixStoreTokens: 0 });
        assertDraftedSameAsControl(runs, want, { label: `${label} ${mode}`, accepted: true });
        const members = new Set(runs.flatMap((r) => r.rounds.filter((x) => x.proposed > 0).map((x) => x.member)));
        if (strategy === 'suffix') {
          // suffix drafts where the text repeated, the draft model everywhere else
          assert.deepEqual([...members].sort(), [0, 1], `rounds drafted by members ${[...members].join(', ')}`);
        } else {
          // the close draft model always drafts first: suffix follows every round without drafting
          assert.deepEqual([...members], [0]);
        }
      });
    }
  }
});
