// Images in the prompt (docs/architecture.md "Images") on the synthetic gemma3 target and its
// clip projector: the time to the first token with one 64x64 image against the same text alone
// (the difference: decoding, encoding and evaluating the image), and the acceptance of ngram and
// draft-model after the image against the text alone (their proposers see the text only).
// Medians of --repeat runs.
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
equals the autoregressive one (test/model/images.test.ts).

${lines.join('\n')}
`;
console.log(md);
if (values.write) writeFileSync(RESULTS_IMAGES_MD, md);
