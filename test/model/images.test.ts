// Images in the prompt through llama.cpp's multimodal library (native/src/media.h) on the
// synthetic gemma3 target and its clip projector (mmproj-swa-target.gguf): an image changes the
// reply and the same image gives the same one; after an image the speculative reply equals the
// autoregressive control's, greedy and seeded; each bad input is refused with its reason. Through
// the addon itself, then through `power generate --image`.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { GenerationResult } from '../../app/contract/generation-result.js';

import type { NativeGenerateResult } from '../../app/contract/engine-types.js';
import {
  loadBinding,
  MEDIA_MARKER,
  type NativeBinding,
  type NativeMediaPrompt,
  type NativeModel,
  type NativeSession,
} from '../../app/engine-host/binding.js';
import { expandRoundBatch } from '../../app/engine/protocol.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertUsageError, generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { pngImage, ppmImage } from '../fixtures/images.js';
import { syntheticModels } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

const SEEDED = { temperature: 0.9, seed: 99 };
const MAX_TOKENS = 40;
const promptWith = (images: Uint8Array[], text = 'Describe this picture, then describe it again:'): NativeMediaPrompt => ({
  text: `<start_of_turn>user\n${images.map(() => MEDIA_MARKER).join('\n')}\n${text}<end_of_turn>\n<start_of_turn>model\n`,
  images,
});

describe('images in the prompt (native)', () => {
  let binding: NativeBinding;
  let models: ModelSet;
  let target: NativeModel;
  let draft: NativeModel;
  let projector: string;
  before(async () => {
    ({ binding } = loadBinding('cpu'));
    models = await syntheticModels();
    projector = models['swa-target.gguf'].replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf');
    target = await binding.Model.load(models['swa-target.gguf'], { gpuLayers: 0 });
    draft = await binding.Model.load(models['swa-draft-close.gguf'], { gpuLayers: 0 });
  });
  after(async () => {
    await draft.dispose();
    await target.dispose();
  });

  let proposed = 0; // proposals the runs since the last reset made
  /** the reply's tokens to each prompt in turn, on one session */
  async function replies(
    session: Record<string, unknown>,
    prompts: (NativeMediaPrompt | Int32Array)[],
    sampling: object = {},
  ): Promise<number[][]> {
    const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector, ...session });
    try {
      const out: number[][] = [];
      for (const prompt of prompts) {
        const ids: number[] = [];
        await s.generate(prompt, { maxTokens: MAX_TOKENS, ...sampling }, (batch) => {
          ids.push(...batch.ids);
          for (const round of expandRoundBatch(batch)) proposed += round.proposed;
        });
        out.push(ids);
      }
      return out;
    } finally {
      await s.dispose();
    }
  }
  const reply = async (session: Record<string, unknown>, prompt: NativeMediaPrompt, sampling: object = {}): Promise<number[]> =>
    (await replies(session, [prompt], sampling))[0] ?? [];

  test('an image changes the reply; another image gives another one', async () => {
    const none = await reply({}, promptWith([]));
    const a = await reply({}, promptWith([pngImage(64, 64, 1)]));
    const b = await reply({}, promptWith([ppmImage(48, 40, 2)]));
    assert.equal(a.length, MAX_TOKENS);
    assert.notDeepEqual(a, none);
    assert.notDeepEqual(a, b);
  });

  test('the same image gives the same reply, on a new session and on the same one', async () => {
    const image = pngImage(64, 64, 3);
    const [first, again] = await replies({}, [promptWith([image]), promptWith([image])]);
    assert.deepEqual(again, first);
    assert.deepEqual(await reply({}, promptWith([image])), first);
  });

  const STRATEGIES: [string, Record<string, unknown>][] = [
    ['ngram', { strategy: 'ngram', k: 4 }],
    ['draft-model', { strategy: 'draft-model', k: 4 }],
    ['ngram,draft-model (a chain)', { strategy: 'ngram,draft-model', k: 3 }],
  ];
  for (const [name, options] of STRATEGIES) {
    test(`after one and after two images, ${name} replies equal the autoregressive control, greedy and seeded`, async () => {
      const session = { ...options, ...(String(options.strategy).includes('draft-model') ? { draft } : {}) };
      for (const prompt of [promptWith([pngImage(64, 64, 4)]), promptWith([pngImage(64, 64, 5), ppmImage(30, 20, 6)])]) {
        for (const sampling of [{}, SEEDED]) {
          const control = await reply({}, prompt, sampling);
          proposed = 0;
          assert.deepEqual(await reply(session, prompt, sampling), control, JSON.stringify(sampling));
          assert.ok(proposed > 0, `${name} proposed nothing after the images (${JSON.stringify(sampling)})`);
        }
      }
    });
  }

  test('a text turn after an image turn reuses the state up to the image only and equals a fresh session', async () => {
    const tokens = Int32Array.from([2, 300, 301, 302, 303]);
    const [, after] = await replies({ strategy: 'ngram', k: 4 }, [promptWith([pngImage(64, 64, 7)]), tokens]);
    const fresh = await binding.Session.create(target, { contextSize: 512, threads: 1 });
    const ids: number[] = [];
    await fresh.generate(tokens, { maxTokens: MAX_TOKENS }, (batch) => ids.push(...batch.ids));
    await fresh.dispose();
    assert.deepEqual(after, ids);
  });

  /** one request's reply and what the engine said of it; `row`: the logits the first token was drawn from */
  interface Turn {
    ids: number[];
    result: NativeGenerateResult;
    row: Float32Array;
  }
  async function turn(s: NativeSession, prompt: NativeMediaPrompt | Int32Array, sampling: object): Promise<Turn> {
    const ids: number[] = [];
    const positions = prompt instanceof Int32Array ? prompt.length : null;
    // the first token's row: at the prompt's length, which a media prompt's result tells after the fact
    s.captureRow(positions ?? 0);
    const result = await s.generate(prompt, { maxTokens: MAX_TOKENS, ...sampling }, (batch) => ids.push(...batch.ids));
    if (positions === null) {
      // again, capturing at the position now known: it keeps all but the last position, and replies the same
      const again: number[] = [];
      s.captureRow(result.promptTokens);
      const repeated = await s.generate(prompt, { maxTokens: MAX_TOKENS, ...sampling }, (batch) => again.push(...batch.ids));
      assert.deepEqual(again, ids, 'the same prompt again gives the same reply');
      assert.equal(repeated.reusedTokens, result.promptTokens - 1);
      assert.equal(repeated.imagesEncoded, 0);
    }
    const row = s.capturedRow()?.row;
    assert.ok(row, 'the first token was drawn from a captured row');
    return { ids, result, row };
  }
  /** the next user turn after `reply`, the whole conversation in one prompt, the image of turn 1 at its place */
  const secondTurn = (image: Uint8Array, reply: number[]): NativeMediaPrompt => ({
    text: `${promptWith([image]).text}${target.detokenize(Int32Array.from(reply), false)}<end_of_turn>\n<start_of_turn>user\nAnd in fewer words?<end_of_turn>\n<start_of_turn>model\n`,
    images: [image],
  });
  /** the prompt's reply on a session of its own, autoregressive */
  async function fresh(prompt: NativeMediaPrompt, sampling: object): Promise<Turn> {
    const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector });
    try {
      return await turn(s, prompt, sampling);
    } finally {
      await s.dispose();
    }
  }

  for (const [name, options] of [['autoregressive', { strategy: 'none' }], ...STRATEGIES.slice(0, 2)] as const) {
    test(`a second turn keeps the image of the first (${name}) and replies as a fresh session would, greedy and seeded`, async () => {
      const session = { ...options, ...(String(options.strategy).includes('draft-model') ? { draft } : {}) };
      const image = pngImage(64, 64, 13);
      for (const sampling of [{}, SEEDED]) {
        const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector, ...session });
        try {
          const first = await turn(s, promptWith([image]), sampling);
          assert.equal(first.result.imagesEncoded, 1);
          const second = await turn(s, secondTurn(image, first.ids), sampling);
          const control = await fresh(secondTurn(image, first.ids), sampling);
          assert.equal(second.result.imagesEncoded, 0, 'the image is not encoded again');
          // the kept state reaches past the image, to the first turn's reply at least
          assert.ok(second.result.reusedTokens >= first.result.promptTokens, `reused ${second.result.reusedTokens}`);
          assert.equal(control.result.imagesEncoded, 1);
          assert.deepEqual(second.row, control.row, "the row after the kept image is the fresh session's, bit for bit");
          assert.deepEqual(second.ids, control.ids, JSON.stringify(sampling));
        } finally {
          await s.dispose();
        }
      }
    });
  }

  test('a second turn that adds an image encodes that one only and replies as a fresh session would', async () => {
    const [a, b] = [pngImage(64, 64, 19), ppmImage(30, 20, 20)];
    const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector, strategy: 'ngram', k: 4 });
    try {
      const first = await turn(s, promptWith([a]), {});
      const next = secondTurn(a, first.ids);
      const added = { text: next.text.replace(/And in fewer words\?/, `${MEDIA_MARKER}\nAnd this one?`), images: [a, b] };
      const second = await turn(s, added, SEEDED);
      assert.equal(second.result.imagesEncoded, 1);
      assert.ok(second.result.reusedTokens >= first.result.promptTokens, `reused ${second.result.reusedTokens}`);
      const control = await fresh(added, SEEDED);
      assert.equal(control.result.imagesEncoded, 2);
      assert.deepEqual(second.row, control.row);
      assert.deepEqual(second.ids, control.ids);
    } finally {
      await s.dispose();
    }
  });

  test("another image at the same place is encoded: the state is kept up to it only, and the reply is a fresh session's", async () => {
    const [a, b] = [pngImage(64, 64, 14), pngImage(64, 64, 15)];
    const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector, strategy: 'ngram', k: 4 });
    try {
      const first = await turn(s, promptWith([a]), {});
      const other = secondTurn(b, first.ids);
      const second = await turn(s, other, {});
      const control = await fresh(other, {});
      assert.equal(second.result.imagesEncoded, 1);
      // the text before the image, no further: a's positions are not b's (mtmd opens a gemma3
      // image with <start_of_image>, tokenized on its own)
      const imageStart =
        target.tokenize('<start_of_turn>user\n', true, true).length + target.tokenize('<start_of_image>', false, true).length;
      assert.equal(second.result.reusedTokens, imageStart);
      assert.deepEqual(second.ids, control.ids);
      // a token prompt after it keeps nothing past the first image either, and replies as a fresh session
      const tokens = Int32Array.from([...target.tokenize('<start_of_turn>user\n', true, true), 300, 301, 302]);
      const text = await turn(s, tokens, {});
      assert.ok(text.result.reusedTokens <= imageStart, `reused ${text.result.reusedTokens}`);
      const alone = await binding.Session.create(target, { contextSize: 512, threads: 1 });
      try {
        assert.deepEqual((await turn(alone, tokens, {})).ids, text.ids);
      } finally {
        await alone.dispose();
      }
    } finally {
      await s.dispose();
    }
  });

  test('a prompt with an image after a token prompt keeps their shared text', async () => {
    const image = pngImage(64, 64, 16);
    const prompt = promptWith([image]);
    const head = target.tokenize('<start_of_turn>user\n', true, true);
    const s = await binding.Session.create(target, { contextSize: 512, threads: 1, projector });
    try {
      await turn(s, Int32Array.from([...head, 300, 301]), {});
      const second = await turn(s, prompt, {});
      assert.ok(second.result.reusedTokens >= head.length, `reused ${second.result.reusedTokens}`);
      assert.deepEqual(second.ids, (await fresh(prompt, {})).ids);
    } finally {
      await s.dispose();
    }
  });

  test('the sessions of one model share its projector, also while both encode at once, and it goes with the model', async () => {
    const prompts = [promptWith([pngImage(64, 64, 17)]), promptWith([pngImage(48, 40, 18)])];
    const alone: Turn[] = [];
    for (const p of prompts) alone.push(await fresh(p, {}));
    const model = await binding.Model.load(models['swa-target.gguf'], { gpuLayers: 0 });
    const held = binding.liveHandles().projectors;
    try {
      const sessions = await Promise.all(prompts.map(() => binding.Session.create(model, { contextSize: 512, threads: 1, projector })));
      assert.equal(binding.liveHandles().projectors, held + 1);
      const together = await Promise.all(sessions.map((s, i) => turn(s, prompts[i] ?? promptWith([]), {})));
      // the same rows, bit for bit, as encoded one at a time by another model's projector: encoding is deterministic
      assert.deepEqual(
        together.map((t) => [t.ids, t.row]),
        alone.map((t) => [t.ids, t.row]),
      );
      await Promise.all(sessions.map((s) => s.dispose()));
      assert.equal(binding.liveHandles().projectors, held + 1, 'the model keeps it for its next session');
      // another thread count encodes with a projector of its own (its context was made with them)
      const other = await binding.Session.create(model, { contextSize: 512, threads: 2, projector });
      assert.equal(binding.liveHandles().projectors, held + 2);
      await other.dispose();
    } finally {
      await model.dispose();
    }
    assert.equal(binding.liveHandles().projectors, held);
  });

  test('bytes that are no image are refused with the reason', async () => {
    await assert.rejects(reply({}, promptWith([new Uint8Array([0x50, 0x4b, 3, 4, 9, 9])])), {
      message: /^image 1 \(6 bytes\) is not an image Power can read \(PNG, JPEG, BMP, GIF, TGA, PSD, HDR, PIC or PNM\)/,
    });
    const truncated = pngImage(64, 64, 8).subarray(0, 60);
    await assert.rejects(reply({}, promptWith([pngImage(64, 64, 9), truncated])), { message: /^image 2 \(60 bytes\) is not an image/ });
  });

  test('a session without a projector refuses a prompt with images', async () => {
    await assert.rejects(reply({ projector: undefined }, promptWith([pngImage(64, 64, 1)])), {
      message: "this session has no projector: a prompt with images needs the model's mmproj-*.gguf (the session option projector)",
    });
  });

  test('a prompt with its images longer than the context is refused with the positions each takes', async () => {
    const long = promptWith([pngImage(64, 64, 1)], 'word '.repeat(300));
    await assert.rejects(reply({ contextSize: 256 }, long), {
      message: /^the prompt with its images is \d+ positions \(4 of them for 1 image\(s\)\) but the context holds 256/,
    });
  });

  test('markers and images that do not pair up are refused', async () => {
    await assert.rejects(reply({}, { text: `two ${MEDIA_MARKER} markers ${MEDIA_MARKER}`, images: [pngImage(64, 64, 1)] }), {
      message: `the prompt has 2 image marker(s) ${MEDIA_MARKER} for 1 image(s)`,
    });
  });

  test('a projector for another embedding width, or a file that is no projector, is refused when the session opens', async () => {
    const other = await binding.Model.load(models['gemma4-target.gguf'], { gpuLayers: 0 });
    try {
      await assert.rejects(binding.Session.create(other, { contextSize: 256, projector }), {
        message: /could not be loaded for this model: .*mismatch between text model \(n_embd = 64\) and mmproj \(n_embd = 128\)/,
      });
    } finally {
      await other.dispose();
    }
    await assert.rejects(binding.Session.create(target, { contextSize: 256, projector: models['target.gguf'] }), {
      message: /could not be loaded for this model: .*Failed to load CLIP model/,
    });
  });
});

// The strategies whose proposers read the target's hidden rows, after an image: llama.cpp's
// EAGLE-3, DFlash and DSpark artifacts beside the llama target (with the gemma3 projector of the
// same width: mtmd reads the projector's width only), and mtp as the Gemma 4 assistant beside the
// gemma4 target (its own 64-wide projector). The proposers see the text positions only
// (proposer_history, native/src/session_core.h); the target decides every token. mtp on a
// model's own NextN layers has no case here: the synthetic NextN model is a qwen35 hybrid, whose
// M-RoPE positions the engine refuses with images.
describe('images in the prompt with the proposers that read hidden rows (native)', () => {
  let binding: NativeBinding;
  let models: ModelSet;
  const loaded: NativeModel[] = [];
  const load = async (file: string): Promise<NativeModel> => {
    const m = await binding.Model.load(file, { gpuLayers: 0 });
    loaded.push(m);
    return m;
  };
  interface Pair {
    target: NativeModel;
    draft: NativeModel;
    projector: string;
  }
  const pairs = new Map<string, Pair>();
  before(async () => {
    ({ binding } = loadBinding('cpu'));
    models = await syntheticModels();
    const dir = models['target.gguf'].replace(/target\.gguf$/, '');
    const llama = await load(models['target.gguf']);
    for (const name of ['eagle3', 'dflash', 'dspark'] as const) {
      pairs.set(name, { target: llama, draft: await load(models[`${name}-close.gguf`]), projector: `${dir}mmproj-swa-target.gguf` });
    }
    pairs.set('mtp', {
      target: await load(models['gemma4-target.gguf']),
      draft: await load(models['gemma4-assistant.gguf']),
      projector: `${dir}mmproj-gemma4-target.gguf`,
    });
  });
  after(async () => {
    for (const m of loaded.reverse()) await m.dispose();
  });

  interface Reply {
    ids: number[];
    proposed: number;
    result: NativeGenerateResult;
  }
  async function say(s: NativeSession, prompt: NativeMediaPrompt, sampling: object): Promise<Reply> {
    const ids: number[] = [];
    let proposed = 0;
    const result = await s.generate(prompt, { maxTokens: MAX_TOKENS, ...sampling }, (batch) => {
      ids.push(...batch.ids);
      for (const round of expandRoundBatch(batch)) proposed += round.proposed;
    });
    return { ids, proposed, result };
  }
  /** the replies to each prompt in turn, on one session of `pair`'s target */
  async function conversation(pair: Pair, session: object, prompts: NativeMediaPrompt[], sampling: object): Promise<Reply[]> {
    const s = await binding.Session.create(pair.target, { contextSize: 512, threads: 1, projector: pair.projector, ...session });
    try {
      const out: Reply[] = [];
      for (const p of prompts) out.push(await say(s, p, sampling));
      return out;
    } finally {
      await s.dispose();
    }
  }
  const nextTurn = (pair: Pair, image: Uint8Array, reply: number[]): NativeMediaPrompt => ({
    text: `${promptWith([image]).text}${pair.target.detokenize(Int32Array.from(reply), false)}<end_of_turn>\n<start_of_turn>user\nAnd in fewer words?<end_of_turn>\n<start_of_turn>model\n`,
    images: [image],
  });

  for (const [name, strategy] of [
    ['mtp', 'mtp'],
    ['eagle3', 'eagle3'],
    ['dflash', 'dflash'],
    ['dspark', 'dspark'],
    ['eagle3', 'ngram,eagle3'],
  ] as const) {
    const what = strategy === 'mtp' ? 'mtp (a Gemma 4 assistant)' : strategy.includes(',') ? `${strategy} (a chain)` : strategy;
    test(`after one and after two images, ${what} replies equal the autoregressive control, greedy and seeded, and it drafts`, async () => {
      const pair = pairs.get(name)!;
      const session = { strategy, k: 4, draft: pair.draft };
      for (const prompt of [promptWith([pngImage(64, 64, 4)]), promptWith([pngImage(64, 64, 5), ppmImage(30, 20, 6)])]) {
        for (const sampling of [{}, SEEDED]) {
          const [control] = await conversation(pair, {}, [prompt], sampling);
          const [spec] = await conversation(pair, session, [prompt], sampling);
          assert.deepEqual(spec!.ids, control!.ids, JSON.stringify(sampling));
          assert.ok(spec!.proposed > 0, `${strategy} proposed nothing after the images (${JSON.stringify(sampling)})`);
        }
      }
    });

    if (strategy !== name) continue;
    test(`a second turn with ${what} keeps the image of the first and replies as a fresh session would, greedy and seeded`, async () => {
      const pair = pairs.get(name)!;
      const session = { strategy, k: 4, draft: pair.draft };
      const image = pngImage(64, 64, 13);
      for (const sampling of [{}, SEEDED]) {
        const [first] = await conversation(pair, session, [promptWith([image])], sampling);
        const next = nextTurn(pair, image, first!.ids);
        const [, second] = await conversation(pair, session, [promptWith([image]), next], sampling);
        const [control] = await conversation(pair, {}, [next], sampling);
        assert.equal(second!.result.imagesEncoded, 0, 'the image is not encoded again');
        assert.ok(second!.result.reusedTokens >= first!.result.promptTokens, `reused ${second!.result.reusedTokens}`);
        assert.deepEqual(second!.ids, control!.ids, JSON.stringify(sampling));
        assert.ok(second!.proposed > 0, `${strategy} proposed nothing in the second turn (${JSON.stringify(sampling)})`);
      }
    });
  }
});

describe('power generate --image', () => {
  let models: ModelSet;
  const dir = suiteTempDir('power-images-');
  const file = (name: string) => join(dir(), name);
  before(async () => {
    models = await syntheticModels();
    await writeFile(file('a.png'), pngImage(64, 64, 11));
    await writeFile(file('b.ppm'), ppmImage(32, 24, 12));
    await writeFile(file('notes.txt'), 'not an image at all');
  });
  const generate = (...more: string[]) => {
    const run = power(
      generateArgs(models['swa-target.gguf'], 'Describe it, twice.', '--threads', '1', '--max-tokens', '32', '--json', ...more),
    );
    assert.equal(run.code, 0, run.stderr);
    return GenerationResult.parse(jsonOf(run));
  };

  test('an image, read through the projector beside the model, changes the reply; the same image gives the same reply', () => {
    const none = generate();
    const a = generate('--image', file('a.png'));
    assert.notDeepEqual(a.tokens, none.tokens);
    assert.deepEqual(generate('--image', file('a.png')).tokens, a.tokens);
    const projector = models['swa-target.gguf'].replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf');
    assert.deepEqual(generate('--image', file('a.png'), '--mmproj', projector).tokens, a.tokens);
    assert.ok(a.stats.promptTokens > none.stats.promptTokens, 'the image takes positions in the prompt');
  });

  test('two images with ngram and with draft-model: the replies equal the autoregressive control, greedy and seeded', () => {
    const images = ['--image', file('a.png'), '--image', file('b.ppm')];
    for (const sampling of [[], ['--temperature', '0.9', '--seed', '7']]) {
      const control = generate(...images, ...sampling);
      for (const spec of [
        ['--strategy', 'ngram', '--k', '4'],
        ['--strategy', 'draft-model', '--draft', models['swa-draft-close.gguf'], '--k', '4'],
      ]) {
        const reply = generate(...images, ...sampling, ...spec);
        assert.deepEqual(reply.tokens, control.tokens, spec.join(' '));
        assert.ok(reply.stats.proposed > 0, `${spec.join(' ')} proposed nothing`);
      }
    }
  });

  test('eagle3, dflash, dspark and mtp (a Gemma 4 assistant) after an image: the replies equal the autoregressive control', () => {
    const llama = (...more: string[]) =>
      GenerationResult.parse(
        jsonOf(
          power(generateArgs(models['target.gguf'], 'Describe it, twice.', '--threads', '1', '--max-tokens', '32', '--json', ...more)),
        ),
      );
    // target.gguf has no projector beside it: the gemma3 one of the same width, by hand
    const projector = models['swa-target.gguf'].replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf');
    const image = ['--image', file('a.png'), '--mmproj', projector];
    for (const sampling of [[], ['--temperature', '0.9', '--seed', '7']]) {
      const control = llama(...image, ...sampling);
      for (const strategy of ['eagle3', 'dflash', 'dspark'] as const) {
        const reply = llama(
          ...image,
          ...sampling,
          '--strategy',
          strategy,
          '--draft',
          models[`${strategy}-close.gguf` as const],
          '--k',
          '4',
        );
        assert.deepEqual(reply.tokens, control.tokens, strategy);
        assert.ok(reply.stats.proposed > 0, `${strategy} proposed nothing`);
      }
    }
    // gemma4-target.gguf finds mmproj-gemma4-target.gguf beside it
    const gemma4 = (...more: string[]) =>
      GenerationResult.parse(
        jsonOf(
          power(
            generateArgs(
              models['gemma4-target.gguf'],
              'Describe it.',
              '--threads',
              '1',
              '--max-tokens',
              '32',
              '--json',
              '--image',
              file('a.png'),
              ...more,
            ),
          ),
        ),
      );
    const control = gemma4();
    const reply = gemma4('--strategy', 'mtp', '--draft', models['gemma4-assistant.gguf'], '--k', '4');
    assert.deepEqual(reply.tokens, control.tokens);
    assert.ok(reply.stats.proposed > 0, 'the assistant proposed nothing');
  });

  test('each bad input is refused with the reason', () => {
    const run = (model: string, ...more: string[]) => power(generateArgs(model, 'Describe it.', '--threads', '1', ...more));
    const target = models['swa-target.gguf'];
    assertUsageError(run(target, '--image', file('notes.txt')), /^error: image 1 \(19 bytes\) is not an image Power can read/);
    assertUsageError(run(target, '--image', file('missing.png')), /^error: --image .*missing\.png: /);
    assertUsageError(
      run(models['target.gguf'], '--image', file('a.png')),
      /^error: --image needs the model's projector: there is no mmproj-\*\.gguf beside target\.gguf \(give one with --mmproj FILE\)$/,
    );
    const projector = target.replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf');
    assertUsageError(
      run(models['gemma4-target.gguf'], '--image', file('a.png'), '--mmproj', projector),
      /^error: mmproj-swa-target\.gguf does not fit gemma4-target\.gguf: projector outputs 128-wide embeddings; this model's are 64$/,
    );
    assertUsageError(
      power(['generate', '--model', target, '--prompt', 'word '.repeat(400), '--ctx', '256', '--device', 'cpu', '--image', file('a.png')]),
      /^error: the prompt with its images is \d+ positions \(4 of them for 1 image\(s\)\) but the context holds 256/,
      { warningsAfter: true },
    );
    assertUsageError(
      power(['generate', '--model', target, '--prompt-tokens', '1,2', '--image', file('a.png')]),
      /^error: --image goes with --prompt or --prompt-file, not --prompt-tokens$/,
    );
    assertUsageError(
      power(['generate', '--model', target, '--prompt', 'x', '--mmproj', projector]),
      /^error: --mmproj goes with --image FILE$/,
    );
  });
});
