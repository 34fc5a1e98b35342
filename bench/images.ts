// Images in the prompt (docs/architecture.md "Images") on the synthetic gemma3 target and its
// clip projector: the time to the first token with one 64x64 image against the same text alone
// (the difference: decoding, encoding and evaluating the image), and the acceptance of ngram and
// draft-model after the image against the text alone (their proposers see the text only), and
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
const projector = models['swa-target.gguf'].replace(/swa-target\.gguf$/, 'mmproj-swa-target.gguf');
const TEXT = 'Describe the picture, then describe it again in the same words:';
const chat = (before: string) => `<start_of_turn>user\n${before}${TEXT}<end_of_turn>\n<start_of_turn>model\n`;
const withImage: MediaPrompt = { text: chat(`${MEDIA_MARKER}\n`), images: [pngImage(64, 64, 2)], addSpecial: true };
const engine = EngineClient.start();
const lines: string[] = [];
try {
  const target = (await engine.call('loadModel', { path: models['swa-target.gguf'], gpuLayers: 0 })).modelId;
  const draft = (await engine.call('loadModel', { path: models['swa-draft-close.gguf'], gpuLayers: 0 })).modelId;
  const run = async (strategy: 'none' | 'ngram' | 'draft-model', image: boolean) => {
    const s = await engine.call('createSession', {
      modelId: target,
      contextSize: 1024,
      threads: 1,
      strategy,
      k: strategy === 'none' ? 0 : 4,
      projector,
      ...(strategy === 'draft-model' ? { draftModelId: draft } : {}),
    });
    // the text alone goes as tokens, tokenized as the engine tokenizes the text around an image
    const media = image ? withImage : undefined;
    const tokens = media
      ? new Int32Array(0)
      : await engine.call('tokenize', { modelId: target, text: chat(''), addSpecial: true, parseSpecial: true });
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
  lines.push(`| strategy | prompt | positions | ttft (ms) | accepted / proposed | acceptance |`);
  lines.push('|---|---|---|---|---|---|');
  for (const strategy of ['none', 'ngram', 'draft-model'] as const) {
    for (const image of [false, true]) {
      const runs = [];
      for (let r = 0; r < REPEAT; r++) runs.push(await run(strategy, image));
      const first = runs[0]!;
      const ttft = medianOf(runs.map((x) => x.ttftMs));
      const rate = first.proposed > 0 ? `${((100 * first.accepted) / first.proposed).toFixed(1)}%` : '-';
      lines.push(
        `| ${strategy === 'none' ? 'none (AR)' : `${strategy} K4`} | ${image ? 'one 64x64 PNG + text' : 'text alone'} | ${first.promptTokens} | ${ttft?.toFixed(2) ?? '-'} | ${strategy === 'none' ? '-' : `${first.accepted} / ${first.proposed}`} | ${strategy === 'none' ? '-' : rate} |`,
      );
    }
  }
  // a second turn after an image: the same session keeps the image's positions (nothing
  // encoded again) against a fresh session that evaluates the whole conversation
  const secondTurn = async (reuse: boolean) => {
    const open = async () =>
      (await engine.call('createSession', { modelId: target, contextSize: 1024, threads: 1, strategy: 'none', k: 0, projector })).sessionId;
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
  await engine.call('disposeModel', { modelId: draft });
  await engine.call('disposeModel', { modelId: target });
} finally {
  await engine.close();
}
const md = `# Images in the prompt

${isoSeconds()}, ${machineLine()}, load ${load1().toFixed(1)} (shared with other jobs: the times are
noisy, the acceptance is not: greedy replies are deterministic). \`${benchCommand('images', [`--tokens ${TOKENS}`, `--repeat ${REPEAT}`])}\`

swa-target.gguf with mmproj-swa-target.gguf (a 1-block synthetic encoder: 64x64 images, 4
positions each; the other positions an image adds are the text mtmd writes around a gemma3
image, \`<start_of_image>\` and \`<end_of_image>\`, plain text in the synthetic vocabulary), one thread, greedy, ${TOKENS} tokens, ttft the median of ${REPEAT} runs. The
difference between the two ttft of a row pair is what the image costs: decoding the PNG, the
encoder and the image's rows in the target (a real projector's encoder is far larger). The
proposers see the text positions only (docs/architecture.md "Images"); every speculative reply
equals the autoregressive one (test/model/images.test.ts). The second table: a second user turn
after the first reply, the image of turn 1 at its place, in the session that ran turn 1 (which
keeps the image's positions: no second encode) and in a fresh one.

${lines.join('\n')}
`;
console.log(md);
if (values.write) writeFileSync(RESULTS_IMAGES_MD, md);
