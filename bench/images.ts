// Images in the prompt (docs/architecture.md "Images") on the synthetic gemma3 target and its
// clip projector: the time to the first token with one 64x64 image against the same text alone
// (the difference: decoding, encoding and evaluating the image), and the acceptance of every
// strategy after the image against the text alone (the proposers see the text only: ngram and
// draft-model on the gemma3 target, eagle3, dflash and dspark on the llama target, mtp with the
// Gemma 4 assistant on the gemma4 target), and
// the time to the first token of a second turn that keeps the image against one that encodes it
// again. Medians of --repeat runs.
//   node --import tsx bench/images.ts [--tokens 128] [--repeat 5] [--write]
// --write replaces bench/RESULTS-images.md. Needs the built addon (build/addon-cpu).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { SAMPLING_DEFAULTS } from '../app/contract/engine-types.js';
import { EngineClient } from '../app/engine/client.js';
import { MEDIA_MARKER, type MediaPrompt } from '../app/engine/protocol.js';
import { ROOT } from '../app/paths.js';
import { runRequest } from '../app/service/request.js';
import { pngImage } from '../test/fixtures/images.js';
import { syntheticModels } from '../test/fixtures/models.js';
import { benchOptions, positiveIntegers } from './lib/args.js';
import { isoSeconds, load1, machineLine } from './lib/machine.js';
import { benchCommand } from './lib/results.js';
import { medianOf } from './lib/stats.js';

const values = benchOptions({ tokens: '128', repeat: '5' }, ['write']);
const { tokens: TOKENS, repeat: REPEAT } = positiveIntegers(values, ['tokens', 'repeat']);
const RESULTS_IMAGES_MD = join(ROOT, 'bench', 'RESULTS-images.md');

const models = await syntheticModels();
const TEXT = 'Describe the picture, then describe it again in the same words:';
const chat = (before: string) => `<start_of_turn>user\n${before}${TEXT}<end_of_turn>\n<start_of_turn>model\n`;
const withImage: MediaPrompt = { text: chat(`${MEDIA_MARKER}\n`), images: [pngImage(64, 64, 2)], addSpecial: true };
// each strategy on the target it pairs with, and a projector of that target's width (mtmd reads
// only the width: the gemma3 projector of swa-target serves the llama target too)
const dir = models['target.gguf'].replace(/target\.gguf$/, '');
const CASES = [
  { strategy: 'none', target: 'swa-target.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'ngram', target: 'swa-target.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'draft-model', target: 'swa-target.gguf', draft: 'swa-draft-close.gguf', projector: 'mmproj-swa-target.gguf' },
  // the llama target's own replies: how much they repeat themselves, with and without the image
  { strategy: 'ngram', target: 'target.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'eagle3', target: 'target.gguf', draft: 'eagle3-close.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'dflash', target: 'target.gguf', draft: 'dflash-close.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'dspark', target: 'target.gguf', draft: 'dspark-close.gguf', projector: 'mmproj-swa-target.gguf' },
  { strategy: 'mtp', target: 'gemma4-target.gguf', draft: 'gemma4-assistant.gguf', projector: 'mmproj-gemma4-target.gguf' },
] as const;
const engine = EngineClient.start();
const lines: string[] = [];
try {
  const ids = new Map<string, string>();
  const modelId = async (file: keyof typeof models) => {
    if (!ids.has(file)) ids.set(file, (await engine.call('loadModel', { path: models[file], gpuLayers: 0 })).modelId);
    return ids.get(file)!;
  };
  const target = await modelId('swa-target.gguf');
  const run = async (c: (typeof CASES)[number], image: boolean) => {
    const tid = await modelId(c.target);
    const s = await engine.call('createSession', {
      modelId: tid,
      contextSize: 1024,
      threads: 1,
      strategy: c.strategy,
      k: c.strategy === 'none' ? 0 : 4,
      projector: `${dir}${c.projector}`,
      ...('draft' in c ? { draftModelId: await modelId(c.draft) } : {}),
    });
    // the text alone goes as tokens, tokenized as the engine tokenizes the text around an image
    const media = image ? withImage : undefined;
    const tokens = media
      ? new Int32Array(0)
      : await engine.call('tokenize', { modelId: tid, text: chat(''), addSpecial: true, parseSpecial: true });
    const out = await runRequest(engine, {
      sessionId: s.sessionId,
      prompt: tokens,
      ...(media ? { media } : {}),
      maxTokens: TOKENS,
      sampling: SAMPLING_DEFAULTS,
    });
    await engine.call('disposeSession', { sessionId: s.sessionId });
    return out.stats;
  };
  lines.push(`| strategy | target | prompt | positions | ttft (ms) | accepted / proposed | acceptance |`);
  lines.push('|---|---|---|---|---|---|---|');
  for (const c of CASES) {
    for (const image of [false, true]) {
      const runs = [];
      for (let r = 0; r < REPEAT; r++) runs.push(await run(c, image));
      const first = runs[0]!;
      const ttft = medianOf(runs.map((x) => x.ttftMs));
      const rate = first.proposed > 0 ? `${((100 * first.accepted) / first.proposed).toFixed(1)}%` : '-';
      const none = c.strategy === 'none';
      const name = none ? 'none (AR)' : c.strategy === 'mtp' ? 'mtp K4 (Gemma 4 assistant)' : `${c.strategy} K4`;
      lines.push(
        `| ${name} | ${c.target} | ${image ? 'one 64x64 PNG + text' : 'text alone'} | ${first.promptTokens} | ${ttft?.toFixed(2) ?? '-'} | ${none ? '-' : `${first.accepted} / ${first.proposed}`} | ${none ? '-' : rate} |`,
      );
    }
  }
  // a second turn after an image: the same session keeps the image's positions (nothing
  // encoded again) against a fresh session that evaluates the whole conversation
  const secondTurn = async (reuse: boolean) => {
    const open = async () =>
      (
        await engine.call('createSession', {
          modelId: target,
          contextSize: 1024,
          threads: 1,
          strategy: 'none',
          k: 0,
          projector: `${dir}mmproj-swa-target.gguf`,
        })
      ).sessionId;
    const first = await open();
    const turn1 = await runRequest(engine, {
      sessionId: first,
      prompt: new Int32Array(0),
      media: withImage,
      maxTokens: TOKENS,
      sampling: SAMPLING_DEFAULTS,
    });
    const reply = turn1.tokensText;
    const media: MediaPrompt = {
      ...withImage,
      text: `${withImage.text}${reply}<end_of_turn>\n<start_of_turn>user\nAnd in fewer words?<end_of_turn>\n<start_of_turn>model\n`,
    };
    const sessionId = reuse ? first : await open();
    const out = await runRequest(engine, { sessionId, prompt: new Int32Array(0), media, maxTokens: TOKENS, sampling: SAMPLING_DEFAULTS });
    for (const id of new Set([first, sessionId])) await engine.call('disposeSession', { sessionId: id });
    return {
      ttft: out.stats.ttftMs,
      positions: out.stats.promptTokens,
      reused: out.native.reusedTokens,
      encoded: out.native.imagesEncoded ?? 0,
    };
  };
  lines.push('', '| second turn after the image (AR) | positions | reused | images encoded | ttft (ms) |', '|---|---|---|---|---|');
  for (const reuse of [true, false]) {
    const runs = [];
    for (let r = 0; r < REPEAT; r++) runs.push(await secondTurn(reuse));
    const first = runs[0]!;
    const ttft = medianOf(runs.map((x) => x.ttft));
    lines.push(
      `| ${reuse ? 'the same session (the image kept)' : 'a fresh session (everything evaluated)'} | ${first.positions} | ${first.reused} | ${first.encoded} | ${ttft?.toFixed(2) ?? '-'} |`,
    );
  }
  for (const id of ids.values()) await engine.call('disposeModel', { modelId: id });
} finally {
  await engine.close();
}
const md = `# Images in the prompt

${isoSeconds()}, ${machineLine()}, load ${load1().toFixed(1)} (shared with other jobs: the times are
noisy, the acceptance is not: greedy replies are deterministic). \`${benchCommand('images', [`--tokens ${TOKENS}`, `--repeat ${REPEAT}`])}\`

Each strategy on the synthetic target it pairs with: swa-target.gguf (gemma3) for none, ngram and
draft-model; target.gguf (llama) for the EAGLE-3, DFlash and DSpark artifacts, with the same
gemma3 projector (mtmd reads its width only); gemma4-target.gguf with its assistant for mtp,
with mmproj-gemma4-target.gguf. A projector is a 1-block synthetic encoder: 64x64 images, 4
positions each; the other positions an image adds are the text mtmd writes around a gemma3
image, \`<start_of_image>\` and \`<end_of_image>\`, plain text in the synthetic vocabulary. One thread, greedy, ${TOKENS} tokens, ttft the median of ${REPEAT} runs. The
difference between the two ttft of a row pair is what the image costs: decoding the PNG, the
encoder and the image's rows in the target (a real projector's encoder is far larger). The
proposers see the text positions only (docs/architecture.md "Images"); every speculative reply
equals the autoregressive one (test/model/images.test.ts). The image changes the reply, so the
two rows of a pair draft for different text: the acceptance moves with the text as well as with
the image (ngram on each target shows how much its replies repeat themselves; eagle3-close is an
induction head, and dflash-close and dspark-close predict from the anchor token alone:
tools/models/synthetic-drafts.ts). The second table: a second user turn
after the first reply, the image of turn 1 at its place, in the session that ran turn 1 (which
keeps the image's positions: no second encode) and in a fresh one.

${lines.join('\n')}
`;
console.log(md);
if (values.write) writeFileSync(RESULTS_IMAGES_MD, md);
