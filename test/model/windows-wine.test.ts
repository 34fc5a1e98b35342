// Power's Windows build (node scripts/build-native.mjs --target win-x64) under Wine, with Node for
// Windows: the CLI on the real model gives the Linux build's tokens, and a speculative reply
// equals its control there too; the synthetic models written by Windows are the Linux bytes, in a
// folder whose path has a space and a non-ASCII letter, and every proposer family reads them to the
// Linux build's tokens, greedy and seeded; the server keeps its data under %APPDATA% (docs/windows.md).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';

import { ROOT } from '../../app/paths.js';

import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';
import { REAL_DIR, REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { syntheticModels } from '../fixtures/models.js';
import { powerOnWindows, serveOnWindows, stageWindowsInstall, WIN_APPDATA, windowsMissing, winPath } from '../fixtures/wine.js';

interface Generated {
  tokens: number[];
  text: string;
  stats: { proposed: number; accepted: number };
  backend: { flavour: string; batchInvariant: boolean };
}

// CI's machine has Wine and mingw-w64 (scripts/setup-system.sh), and npm test's preparation builds
// the Windows engine there (scripts/test.mjs)
const missing = requirePrerequisite(windowsMissing()) || realModelSkip();
// where `power make-models` under Wine writes the synthetic set: a space and a non-ASCII letter
const WIN_MODELS = join(ROOT, '.cache', 'windows', 'models für Windows');
const SYNTH_PROMPT = [1, 300, 301, 302, 303];
// seeded, and cool enough that the synthetic target's reply still repeats for the n-gram drafters
const SEEDED = ['--temperature', '0.3', '--seed', '7'];
const FAMILIES = [
  { strategy: 'ngram', target: 'target.gguf' },
  { strategy: 'suffix', target: 'target.gguf' },
  { strategy: 'draft-model', target: 'target.gguf', draft: 'draft-close.gguf' },
  { strategy: 'eagle3', target: 'target.gguf', draft: 'eagle3-close.gguf' },
  { strategy: 'dflash', target: 'target.gguf', draft: 'dflash-close.gguf' },
  { strategy: 'dspark', target: 'target.gguf', draft: 'dspark-close.gguf' },
  { strategy: 'mtp', target: 'hybrid-mtp.gguf' },
] as const;

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

const PROMPT = 'The history of the lighthouse is a history of coasts, ships and the people who kept the lamps burning.';

describe('Power for Windows under Wine', { skip: missing }, () => {
  let linuxModels: Record<string, string>;

  before(async () => {
    stageWindowsInstall();
    linuxModels = (await syntheticModels()) as unknown as Record<string, string>;
    // written afresh: make-models keeps files already there, which would hide a broken write
    rmSync(WIN_MODELS, { recursive: true, force: true });
    const made = powerOnWindows(['make-models', '--out', winPath(WIN_MODELS)]);
    assert.equal(made.code, 0, `power make-models under Wine: ${made.stderr}`);
  });

  test("power make-models under Wine writes the Linux build's bytes into a folder named with a space and ü", () => {
    const written = readdirSync(WIN_MODELS).filter((f) => f.endsWith('.gguf'));
    const missingHere = Object.keys(linuxModels).filter((name) => !written.includes(name));
    assert.deepEqual(missingHere, [], 'every model of the Linux set is written');
    for (const name of written) {
      const linux = linuxModels[name] ?? join(ROOT, '.cache', 'models', name);
      assert.equal(sha256(join(WIN_MODELS, name)), sha256(linux), `${name} differs from the Linux build's`);
    }
  });

  test("every proposer family under Wine gives the Linux build's tokens, greedy and seeded, and drafts", () => {
    const controls = new Map<string, number[]>();
    for (const sampling of [[], SEEDED]) {
      for (const f of FAMILIES) {
        const label = `${f.strategy} on ${f.target}${sampling.length ? ', seeded' : ', greedy'}`;
        const args = (dir: string, path: (p: string) => string, spec: boolean) =>
          generateArgs(
            path(join(dir, f.target)),
            SYNTH_PROMPT,
            '--max-tokens',
            '48',
            '--threads',
            '2',
            '--json',
            ...sampling,
            ...(spec ? ['--strategy', f.strategy, '--k', '4', ...('draft' in f ? ['--draft', path(join(dir, f.draft))] : [])] : []),
          );
        const key = `${f.target} ${sampling.join(' ')}`;
        if (!controls.has(key)) {
          const linux = jsonOf<Generated>(power(args(dirname(linuxModels[f.target]!), (p) => p, false)));
          const windows = jsonOf<Generated>(powerOnWindows(args(WIN_MODELS, winPath, false)));
          assert.deepEqual(windows.tokens, linux.tokens, `${label}: the Windows control emits the Linux control's tokens`);
          controls.set(key, linux.tokens);
        }
        const spec = jsonOf<Generated>(powerOnWindows(args(WIN_MODELS, winPath, true)));
        assert.deepEqual(spec.tokens, controls.get(key), `${label}: the Windows speculative reply emits the control's tokens`);
        assert.ok(spec.stats.proposed > 0, `${label}: the proposer proposed`);
      }
    }
  });

  test('power devices under Wine lists the CPU of the Windows engine', () => {
    const run = powerOnWindows(['devices', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const report = jsonOf<{ flavours: { flavour: string; devices?: { type: string }[] }[] }>(run);
    const cpu = report.flavours.find((f) => f.flavour === 'cpu');
    assert.ok(
      cpu?.devices?.some((d) => d.type === 'cpu'),
      JSON.stringify(report.flavours),
    );
  });

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

  test("power serve under Wine answers /v1/completions from Linux over loopback with the Linux build's text, its data under %APPDATA%\\Power", async () => {
    const linux = jsonOf<Generated>(power(generateArgs(REAL_MODEL, PROMPT, '--max-tokens', '32', '--threads', '2', '--json')));
    const token = 'wine-test-token';
    // no --data-dir: a Windows user's data folder is %APPDATA%\Power
    const data = join(WIN_APPDATA, 'Power');
    rmSync(data, { recursive: true, force: true });
    const serve = await serveOnWindows(['--port', '0', '--token', token, '--models-dir', winPath(REAL_DIR)]);
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
      assert.ok(existsSync(data), `the data folder is %APPDATA%\\Power (${data})`);
    } finally {
      serve.stop();
    }
  });
});
