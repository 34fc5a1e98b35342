// Power's Windows build (node scripts/build-native.mjs --target win-x64) under Wine, with Node for
// Windows: the CLI on the real model gives the Linux build's tokens, and a speculative reply
// equals its control there too (docs/windows.md).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { powerOnWindows, stageWindowsInstall, windowsMissing, winPath } from '../fixtures/wine.js';

interface Generated {
  tokens: number[];
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
});
