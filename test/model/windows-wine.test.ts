// Power's Windows build (node scripts/build-native.mjs --target win-x64) under Wine, with Node for
// Windows: the CLI on the real model gives the Linux build's tokens, and a speculative reply
// equals its control there too (docs/windows.md).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';

import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { REAL_DIR, REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { powerOnWindows, serveOnWindows, stageWindowsInstall, windowsMissing, winPath } from '../fixtures/wine.js';

interface Generated {
  tokens: number[];
  text: string;
  stats: { proposed: number; accepted: number };
  backend: { flavour: string; batchInvariant: boolean };
}

const missing = windowsMissing() || realModelSkip();
const PROMPT = 'The history of the lighthouse is a history of coasts, ships and the people who kept the lamps burning.';

describe('Power for Windows under Wine', { skip: missing }, () => {
  before(() => stageWindowsInstall());

  test("power generate on the real model: the Linux build's tokens, and ngram K7 emits the control's", () => {
    const args = (...more: string[]) => generateArgs(REAL_MODEL, PROMPT, '--max-tokens', '48', '--threads', '2', '--json', ...more);
    const linux = jsonOf<Generated>(power(args()));
    const windowsArgs = (...more: string[]) => args(...more).map((a) => (a === REAL_MODEL ? winPath(REAL_MODEL) : a));
    const control = jsonOf<Generated>(powerOnWindows(windowsArgs()));
    assert.equal(control.backend.flavour, 'cpu');
    assert.deepEqual(control.tokens, linux.tokens, 'the Windows build emits the Linux build tokens');
    const ngram = jsonOf<Generated>(powerOnWindows(windowsArgs('--strategy', 'ngram', '--k', '7')));
    assert.deepEqual(ngram.tokens, control.tokens, "ngram K7 emits the control's tokens");
    assert.ok(ngram.stats.accepted > 0, `ngram drafted and the target accepted some: ${ngram.stats.accepted} of ${ngram.stats.proposed}`);
  });

  test("power serve under Wine answers /v1/completions from Linux over loopback with the Linux build's text", async () => {
    const linux = jsonOf<Generated>(power(generateArgs(REAL_MODEL, PROMPT, '--max-tokens', '32', '--threads', '2', '--json')));
    const token = 'wine-test-token';
    const data = join(ROOT, '.cache', 'windows', 'serve-data');
    rmSync(data, { recursive: true, force: true });
    const serve = await serveOnWindows(['--port', '0', '--token', token, '--data-dir', winPath(data), '--models-dir', winPath(REAL_DIR)]);
    try {
      const origin = new URL(serve.url).origin;
      const res = await fetch(`${origin}/v1/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gemma-3-270m-q4_k_m', prompt: PROMPT, max_tokens: 32, temperature: 0, strategy: 'ngram', k: 7 }),
      });
      const body = (await res.json()) as { choices?: { text: string }[] };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.choices?.[0]?.text, linux.text, "the reply is the Linux build's");
    } finally {
      serve.stop();
    }
  });
});
