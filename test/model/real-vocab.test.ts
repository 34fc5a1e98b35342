// The synthetic models on a real vocabulary (REAL_VOCAB_MODELS: Qwen3.5's gpt2 BPE tokenizer of
// 151,936 tokens, copied from llama.cpp's bundle, on small synthetic weights): the files load
// with the bundled tokenizer, the BPE path tokenizes llama.cpp's own test cases and round-trips
// real text, the exactness contract holds over vocabulary-sized heads, logits rows and sampling
// over V (draft-model K 1/3/7 and ngram K 3/7 on the pair, mtp K 3/7 with S = K and K − 1 on the
// hybrid, greedy and seeded, replies past 256 positions), and the engine's memory for the KV
// cache and the logits stays within the estimate and keeps nothing per round.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { NativeModelInfo, Tokens } from '../../app/engine/protocol.js';
import { EngineClient } from '../../app/engine/client.js';
import { cpuAllocationBytes } from '../../app/engine/cpu-memory.js';
import { readGgufInfo } from '../../app/gguf/reader.js';
import { runAudit } from '../../app/service/audit.js';
import { runRequest, type GenerationOutcome } from '../../app/service/request.js';
import {
  BUNDLED_VOCABS,
  bundledVocabFile,
  loadBundledVocab,
  readTokenizerCases,
  type BundledVocab,
} from '../../tools/models/real-vocab.js';
import type { REAL_VOCAB_MODELS } from '../../tools/models/synthetic.js';
import { cachedControl, configLabel, counterTotals, type ContractConfig } from '../fixtures/contract.js';
import { assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { GREEDY } from '../fixtures/engine-generate.js';
import { realVocabModels } from '../fixtures/models.js';

type ModelName = keyof typeof REAL_VOCAB_MODELS;
type Config = ContractConfig<ModelName>;

const TARGET: ModelName = 'real-vocab-target.gguf';
const DRAFT: ModelName = 'real-vocab-draft.gguf';
const HYBRID: ModelName = 'real-vocab-hybrid-mtp.gguf';
const V = BUNDLED_VOCABS.qwen35.size;

/** Real text the BPE pre-tokenizer splits in different ways. */
const TEXTS = {
  english: "The quick brown fox jumps over the lazy dog. It's 3:45 p.m. — isn't it   late?",
  code: 'def fibonacci(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n\treturn n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)  # O(2^n)\n',
  nonLatin: 'Москва — столица России. 東京は日本の首都です。北京是中国的首都。 مرحبا بالعالم  नमस्ते दुनिया  Việt Nam',
  emoji: 'Launch 🚀 done ✅, family 👨‍👩‍👧‍👦, flags 🇫🇷🇯🇵, fog 😶‍🌫️ and skin tones 👋🏽👍🏿',
};
// The first prompt ends with a name whose piece "amus" (token 55355) is the seeded reply's first
// token: prompt lookup has a match from its first round. Seeded replies over 151,936 tokens
// almost never repeat one (299 distinct in 300 on this target), so without it prompt lookup
// would propose only by chance, a few times or not at all depending on the CPU's rounding.
const PROMPTS = [TEXTS.english.replace('late?', 'late, Seamus Heaney?'), TEXTS.code, `${TEXTS.nonLatin} ${TEXTS.emoji}`];
/** prompt (20–70 tokens) plus reply: every request runs past 256 positions */
const TOKENS = 300;
const SEEDED: SamplingOptions = { ...GREEDY, temperature: 0.8, topK: 40, topP: 0.95, seed: 7 };
const CONTEXT = 1024;

const CONFIGS: Config[] = [
  ...[1, 3, 7].map((k): Config => ({ target: TARGET, strategy: 'draft-model', draft: DRAFT, k, s: k })),
  ...[3, 7].map((k): Config => ({ target: TARGET, strategy: 'ngram', k, s: k })),
  // the recurrent target: S = K − 1 makes a rejection deeper than the snapshots replay
  ...[3, 7].flatMap((k) => [k, k - 1].map((s): Config => ({ target: HYBRID, strategy: 'mtp', k, s }))),
];

/** The engine host's resident anonymous memory (allocated, not mapped from a file), in bytes. */
function rssAnon(engine: EngineClient): number {
  const status = readFileSync(`/proc/${engine.pid}/status`, 'utf8');
  const kb = /^RssAnon:\s+(\d+) kB/m.exec(status)?.[1];
  assert.ok(kb, 'the engine host reports RssAnon');
  return Number(kb) * 1024;
}

describe('real vocabulary: the qwen35 BPE tokenizer (151,936 tokens) on synthetic weights', () => {
  let models: Record<ModelName, string>;
  let vocab: BundledVocab;
  let engine: EngineClient;
  const ids = new Map<ModelName, string>();
  const infos = new Map<ModelName, NativeModelInfo>();
  const prompts = new Map<ModelName, Tokens[]>();
  const summary: string[] = [];
  const id = (name: ModelName): string => ids.get(name)!;

  async function runAll(c: Config, sampling: SamplingOptions): Promise<GenerationOutcome[]> {
    const speculative = c.strategy !== 'none';
    const { sessionId } = await engine.call('createSession', {
      modelId: id(c.target),
      contextSize: CONTEXT,
      threads: 1,
      strategy: c.strategy,
      k: speculative ? c.k : 0,
      s: speculative ? c.s : 0,
      ...(speculative && c.draft ? { draftModelId: id(c.draft) } : {}),
    });
    try {
      const out: GenerationOutcome[] = [];
      for (const [i, prompt] of prompts.get(c.target)!.entries()) {
        out.push(await runRequest(engine, { sessionId, prompt, maxTokens: TOKENS, sampling: { ...sampling, seed: sampling.seed + i } }));
      }
      return out;
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  }

  const control = cachedControl(runAll);

  before(async () => {
    models = await realVocabModels();
    vocab = await loadBundledVocab('qwen35');
    // the hooks (perturbRow) serve the audit test only; without a call they change nothing
    engine = EngineClient.start({ testHooks: true });
    for (const name of [TARGET, DRAFT, HYBRID]) {
      const loaded = await engine.call('loadModel', { path: models[name], gpuLayers: 0, loadMtp: name === HYBRID });
      ids.set(name, loaded.modelId);
      infos.set(name, loaded.info);
      const tokenized: Tokens[] = [];
      for (const text of PROMPTS)
        tokenized.push(await engine.call('tokenize', { modelId: loaded.modelId, text, addSpecial: true, parseSpecial: false }));
      prompts.set(name, tokenized);
    }
  });

  after(async () => {
    for (const modelId of ids.values()) await engine.call('disposeModel', { modelId });
    const live = await engine.call('liveHandles', {});
    await engine.close();
    console.log(`real-vocabulary contract (${PROMPTS.length} prompts × ${TOKENS} tokens each):\n${summary.join('\n')}`);
    assert.deepEqual({ models: live.models, contexts: live.contexts }, { models: 0, contexts: 0 });
  });

  test('the files load as BPE models of 151,936 tokens whose tokenizer is the bundled one, key for key', async () => {
    for (const name of [TARGET, DRAFT, HYBRID]) {
      const info = await readGgufInfo(models[name]);
      const tokenizer = [...info.metadata].filter(([key]) => key.startsWith('tokenizer.'));
      assert.deepEqual(
        tokenizer,
        vocab.entries.map((e) => [e.key, e.value]),
        `${name}: every tokenizer.* key and array as in ${vocab.path}`,
      );
      const head = info.tensors.find((t) => t.name === 'output.weight');
      assert.deepEqual([head?.shape, head?.typeName], [[128, V], 'Q8_0'], `${name}: a Q8_0 output head over the whole vocabulary`);
      assert.ok(statSync(models[name]).size < 100e6, `${name} stays under 100 MB`);
    }
    const target = infos.get(TARGET)!;
    assert.deepEqual(
      [target.architecture, target.vocabType, target.vocabSize, target.eos, target.eot, target.addBos],
      ['llama', 'bpe', V, 151643, 151645, false],
      'llama.cpp reads a gpt2 BPE vocabulary: <|endoftext|> ends text, <|im_end|> a turn, no BOS is added',
    );
    const hybrid = infos.get(HYBRID)!;
    assert.deepEqual([hybrid.architecture, hybrid.vocabSize, hybrid.nextnLayers, hybrid.hybrid], ['qwen35', V, 1, true]);
  });

  test("without the build's clone of llama.cpp the tokenizer and its test cases come out of the source bundle", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'power-vocab-'));
    try {
      const path = await bundledVocabFile('qwen35', { cacheDir: dir, buildClone: join(dir, 'no-clone') });
      assert.ok(path.startsWith(dir), 'extracted into the cache folder');
      for (const suffix of ['', '.inp', '.out']) {
        assert.deepEqual(readFileSync(path + suffix), readFileSync(vocab.path + suffix), `the same bytes as ${vocab.path}${suffix}`);
      }
      assert.equal(await bundledVocabFile('qwen35', { cacheDir: dir, buildClone: join(dir, 'no-clone') }), path, 'and reused from there');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the BPE tokenizer gives llama.cpp's reference tokens for every case of its own tokenizer test", async () => {
    const cases = readTokenizerCases(vocab.path);
    assert.ok(cases.length >= 40, `llama.cpp's test cases for ${vocab.path} are there`);
    for (const name of [TARGET, HYBRID]) {
      for (const c of cases) {
        const got = await engine.call('tokenize', { modelId: id(name), text: c.text, addSpecial: false, parseSpecial: false });
        assert.deepEqual([...got], c.tokens, `${name}: ${JSON.stringify(c.text)}`);
      }
    }
  });

  test('real text (English, code, non-Latin scripts, emoji) round-trips through tokenize and detokenize', async () => {
    for (const name of [TARGET, HYBRID]) {
      for (const [kind, text] of Object.entries(TEXTS)) {
        const tokens = await engine.call('tokenize', { modelId: id(name), text, addSpecial: true, parseSpecial: false });
        assert.ok(tokens.length > 0 && tokens.every((t) => t >= 0 && t < V), `${name} ${kind}: token ids in the vocabulary`);
        assert.ok(
          tokens.length < Buffer.byteLength(text),
          `${name} ${kind}: merges join bytes (${tokens.length} tokens for ${Buffer.byteLength(text)} bytes)`,
        );
        const back = await engine.call('detokenize', { modelId: id(name), tokens, renderSpecial: false });
        assert.equal(back, text, `${name} ${kind}`);
      }
      // the chat markers are special tokens: one token each when parsed, plain text otherwise
      const marked = await engine.call('tokenize', {
        modelId: id(name),
        text: '<|im_start|>user\nhi<|im_end|>',
        addSpecial: false,
        parseSpecial: true,
      });
      assert.deepEqual([marked[0], marked.at(-1)], [151644, 151645], `${name}: <|im_start|> and <|im_end|> are single tokens`);
      const plain = await engine.call('tokenize', { modelId: id(name), text: '<|im_start|>', addSpecial: false, parseSpecial: false });
      assert.ok(plain.length > 1, `${name}: unparsed, <|im_start|> is text`);
    }
  });

  for (const c of CONFIGS) {
    for (const [mode, sampling] of [
      ['greedy', GREEDY],
      ['seeded', SEEDED],
    ] as const) {
      test(`${configLabel(c)} ${mode}: every ${TOKENS}-token reply emits the control's tokens`, async () => {
        const want = await control(c.target, mode, sampling);
        const runs = await runAll(c, sampling);
        // every configuration proposes, prompt lookup on the seeded replies too (the first
        // prompt's name); the draft and the MTP head agree often enough that some is accepted
        assertDraftedSameAsControl(runs, want, { label: `${configLabel(c)} ${mode}`, accepted: c.strategy !== 'ngram' });
        for (const [i, run] of runs.entries()) {
          assert.equal(run.tokens.length, TOKENS, `prompt ${i}: the reply runs to its length, past 256 positions`);
          assert.equal(run.text, want[i]!.text, `prompt ${i}: the same text`);
          for (const r of run.rounds) {
            assert.ok(r.proposed <= c.k && r.accepted <= r.proposed && r.tokens.length <= r.accepted + 1, 'round counters are consistent');
          }
        }
        const { proposed, accepted, replays } = counterTotals(runs);
        if (c.strategy === 'ngram' && mode === 'seeded')
          assert.ok(
            runs[0]!.rounds.slice(0, 3).some((r) => r.proposed > 0),
            "prompt lookup matches the first prompt's name at once",
          );
        if (c.s < c.k) assert.ok(replays > 0, 'S < K replays somewhere');
        // the draft agrees often enough that the accepted and bonus paths run (K1 greedy: ~80 %)
        if (c.strategy === 'draft-model' && mode === 'greedy')
          assert.ok(accepted / proposed > 0.2, `the draft agrees (${accepted}/${proposed})`);
        summary.push(
          `  ${configLabel(c).padEnd(62)} ${mode.padEnd(7)} identical ${runs.length}/${runs.length}  acceptance ${(accepted / proposed).toFixed(3)}  replays ${replays}`,
        );
      });
    }
  }

  test('the replies are text over the whole vocabulary: the streamed text is the detokenized reply, its tokens are many', async () => {
    const [greedy] = await control(TARGET, 'greedy', GREEDY);
    const [seeded] = await control(TARGET, 'seeded', SEEDED);
    for (const run of [greedy!, seeded!]) {
      assert.ok(new Set(run.tokens).size > TOKENS / 2, 'no short loop: most of the reply are distinct tokens');
      const text: string = await engine.call('detokenize', {
        modelId: id(TARGET),
        tokens: Int32Array.from(run.tokens),
        renderSpecial: false,
      });
      // both decode the same bytes: a character split over tokens is joined, a byte sequence
      // that is not UTF-8 becomes U+FFFD the same way
      assert.equal(run.text, text, "the streamed text equals llama.cpp's detokenization");
    }
  });

  test("power audit's row capture over 151,936 logits: a verify row past 256 positions made to round differently is found and explained", async () => {
    const prompt = prompts.get(TARGET)![0]!;
    const base = {
      modelId: id(TARGET),
      draftModelId: id(DRAFT),
      strategy: 'draft-model',
      k: 3,
      s: 3,
      contextSize: CONTEXT,
      threads: 1,
      prompt,
      maxTokens: 280,
      sampling: GREEDY,
    } as const;
    // the hook raises the runner-up of the row sampled at that position above its top: a greedy choice always moves
    const at = 270 - prompt.length;
    const out = await runAudit(engine, {
      ...base,
      onSpeculativeSession: (sessionId) =>
        engine.call('perturbRow', { sessionId, position: prompt.length + at, hidden: false }).then(() => {}),
    });
    assert.equal(out.identical, false, 'the perturbed row moved the greedy choice');
    const d = out.firstDivergence!;
    assert.equal(d.index, at, 'found at the perturbed position');
    assert.deepEqual([d.controlToken, d.specToken], [out.control.tokens[at], out.spec.tokens[at]]);
    assert.ok(
      d.controlMargin > 0 && d.rowMaxAbsDiff >= d.controlMargin,
      `the row difference ${d.rowMaxAbsDiff} overcomes the margin ${d.controlMargin}`,
    );
    assert.equal(d.rowsAccount, true, 'both rows, 151,936 logits each, account for the two tokens');
    assert.deepEqual(out.spec.tokens.slice(0, at), out.control.tokens.slice(0, at));
  });

  test('the KV cache and the logits rows stay within the memory estimate, and nothing is kept per round', async () => {
    const [targetInfo, draftInfo] = await Promise.all([readGgufInfo(models[TARGET]), readGgufInfo(models[DRAFT])]);
    const k = 7;
    // what `power generate` and the service check before they create the context
    const estimate = cpuAllocationBytes({
      target: targetInfo,
      draft: draftInfo,
      contextSize: CONTEXT,
      batchSize: 512,
      gpuLayers: -1,
      s: 0,
      flashAttn: false,
    });
    const before = rssAnon(engine);
    const { sessionId } = await engine.call('createSession', {
      modelId: id(TARGET),
      contextSize: CONTEXT,
      threads: 1,
      strategy: 'draft-model',
      k,
      s: k,
      draftModelId: id(DRAFT),
      flashAttn: 'off',
    });
    try {
      const request = (seed: number) =>
        runRequest(engine, { sessionId, prompt: prompts.get(TARGET)![0]!, maxTokens: 200, sampling: { ...SEEDED, seed } });
      await request(1);
      const warm = rssAnon(engine);
      assert.ok(
        warm - before <= estimate,
        `the session and its first request allocated ${(warm - before) / 2 ** 20} MiB, the estimate is ${estimate / 2 ** 20} MiB`,
      );
      const later = [await request(2), await request(3)];
      const rounds = later.reduce((n, r) => n + r.rounds.length, 0);
      const grown = rssAnon(engine) - warm;
      // every verify pass holds up to K + 1 rows of 151,936 logits (4.9 MB); keeping one row per round would be rounds × V × 4 bytes
      assert.ok(rounds > 100, 'the requests ran many rounds');
      assert.ok(
        grown < rounds * V * 4,
        `two more requests (${rounds} rounds) grew the engine by ${(grown / 2 ** 20).toFixed(1)} MiB: less than one logits row per round`,
      );
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  });
});
