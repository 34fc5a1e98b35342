// Power's Windows build (node scripts/build-native.mjs --target win-x64) under Wine, with Node for
// Windows: the synthetic models written by Windows are the Linux bytes, in a folder whose path has
// a space and a non-ASCII letter, and every proposer family reads them to the Linux build's tokens,
// greedy and seeded; power audit finds the runs identical; on the real model a speculative reply
// equals its control and the Linux control, and the server (its data under %APPDATA%) gives the
// Linux server's tokens and log-probabilities (docs/windows.md, docs/exactness.md).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';

import { cudaRuntimeLibraries } from '../../app/engine-host/cuda-probe.js';
import { ROOT } from '../../app/paths.js';

import { generateArgs, jsonOf, power } from '../fixtures/cli.js';
import { requirePrerequisite } from '../fixtures/prerequisite.js';
import { REAL_DIR, REAL_MODEL, realModelSkip } from '../fixtures/real-model.js';
import { startPowerServe } from '../fixtures/serve.js';
import { syntheticModels } from '../fixtures/models.js';
import {
  dllImports,
  powerOnWindows,
  serveOnWindows,
  stageCudaFlavour,
  stageWindowsInstall,
  WIN_APPDATA,
  WIN_GGML_CUDA,
  windowsMissing,
  winPath,
} from '../fixtures/wine.js';

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

interface TextLogprobs {
  tokens: string[];
  top_logprobs: Record<string, number>[];
}

interface Audited {
  identical: boolean;
  controlDigest: string;
  specDigest: string;
}

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

  test("power audit under Wine: every speculative run identical to its control, the Linux build's control", () => {
    for (const f of FAMILIES.filter((x) => ['ngram', 'draft-model', 'mtp'].includes(x.strategy))) {
      const args = (dir: string, path: (p: string) => string) =>
        [
          'audit',
          '--model',
          path(join(dir, f.target)),
          '--prompt-tokens',
          SYNTH_PROMPT.join(','),
          '--max-tokens',
          '48',
          '--threads',
          '2',
          '--json',
        ].concat(['--strategy', f.strategy, '--k', '4', ...('draft' in f ? ['--draft', path(join(dir, f.draft))] : [])]);
      const linux = power(args(dirname(linuxModels[f.target]!), (p) => p));
      const windows = powerOnWindows(args(WIN_MODELS, winPath));
      assert.equal(windows.code, 0, `${f.strategy}: power audit exits 0 under Wine: ${windows.stdout}${windows.stderr}`);
      const [l, w] = [jsonOf<Audited>(linux), jsonOf<Audited>(windows)];
      assert.equal(w.identical, true, f.strategy);
      assert.equal(w.controlDigest, l.controlDigest, `${f.strategy}: the Windows control is the Linux control`);
      assert.equal(w.specDigest, w.controlDigest, f.strategy);
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

  test('CUDA under Wine: ggml-cuda.dll needs what the probe checks, and power devices and --device cuda say the driver and cuBLAS are missing', () => {
    // the package's ggml-cuda.dll carries the CUDA runtime: it imports cuBLAS alone besides the
    // C/C++ runtime and ggml-base.dll, and the runtime loads nvcuda.dll (the driver) when it starts
    const system = /^(kernel32|msvcp140.*|vcruntime140.*|api-ms-win-.*|ggml-base)\.dll$/i;
    const needed = dllImports(WIN_GGML_CUDA).filter((d) => !system.test(d));
    const probed = cudaRuntimeLibraries('win32', 13).map((l) => l.name);
    assert.ok(needed.length > 0);
    for (const dll of needed)
      assert.ok(probed.includes(dll), `ggml-cuda.dll imports ${dll}, which the probe does not check (${probed.join(', ')})`);

    const unstage = stageCudaFlavour();
    try {
      cudaUnderWine(probed);
    } finally {
      unstage();
    }
  });

  function cudaUnderWine(probed: string[]): void {
    const run = powerOnWindows(['devices', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const report = jsonOf<{
      flavours: {
        flavour: string;
        devices?: { type: string }[];
        cuda?: { devices: number; reason: string | null; libraries: { name: string; error: string | null }[] };
      }[];
    }>(run);
    const cuda = report.flavours.find((f) => f.flavour === 'cuda');
    assert.ok(cuda?.cuda, JSON.stringify(report.flavours));
    assert.equal(cuda.cuda.devices, 0);
    // Wine has no nvcuda.dll, as a Windows machine without NVIDIA's driver; Windows' message does not name the DLL, Power does
    assert.match(cuda.cuda.reason ?? '', /^no NVIDIA driver \(nvcuda\.dll: .+\); also missing: cublas64_13\.dll, cublasLt64_13\.dll$/);
    assert.deepEqual(
      cuda.cuda.libraries.map((l) => [l.name, l.error !== null]),
      probed.map((name) => [name, true]),
    );
    assert.ok(
      cuda.devices?.some((d) => d.type === 'cpu'),
      'the CPU still loads beside a CUDA backend that does not',
    );

    const generate = powerOnWindows([
      ...generateArgs(winPath(join(WIN_MODELS, 'target.gguf')), SYNTH_PROMPT, '--max-tokens', '4'),
      '--device',
      'cuda',
    ]);
    assert.equal(generate.code, 2, generate.stderr);
    assert.match(generate.stderr, /--device cuda: no NVIDIA driver \(nvcuda\.dll: /);
  }

  test("power generate on the real model under Wine: the control is Linux's, and ngram K7 emits its tokens, with drafts accepted", () => {
    const args = (model: string, ...more: string[]) =>
      generateArgs(model, PROMPT, '--max-tokens', '48', '--threads', '2', '--json', ...more);
    const control = jsonOf<Generated>(powerOnWindows(args(winPath(REAL_MODEL))));
    assert.equal(control.backend.flavour, 'cpu');
    const linux = jsonOf<Generated>(power(args(REAL_MODEL)));
    assert.equal(control.tokens.length, 48);
    assert.deepEqual(control.tokens, linux.tokens, "the Windows control emits the Linux control's tokens");
    const ngram = jsonOf<Generated>(powerOnWindows(args(winPath(REAL_MODEL), '--strategy', 'ngram', '--k', '7')));
    assert.deepEqual(ngram.tokens, control.tokens, "ngram K7 emits the control's tokens");
    assert.ok(ngram.stats.accepted > 0, `ngram drafted and the target accepted some: ${ngram.stats.accepted} of ${ngram.stats.proposed}`);
  });

  test("power serve under Wine answers /v1/completions from Linux with the Linux server's tokens and log-probabilities, its data under %APPDATA%\\Power", async () => {
    const request = { model: 'gemma-3-270m-q4_k_m', prompt: PROMPT, max_tokens: 48, temperature: 0, logprobs: 2, strategy: 'ngram', k: 7 };
    const ask = async (origin: string, token: string) => {
      const res = await fetch(`${origin}/v1/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      const body = (await res.json()) as { choices?: { logprobs: TextLogprobs }[] };
      assert.equal(res.status, 200, JSON.stringify(body));
      return body.choices![0]!.logprobs;
    };
    const linuxData = mkdtempSync(join(tmpdir(), 'power-linux-serve-'));
    const onLinux = await startPowerServe(['--models-dir', REAL_DIR, '--data-dir', linuxData]);
    const linux = await ask(onLinux.origin, onLinux.token).finally(async () => {
      await onLinux.stop('SIGKILL');
      rmSync(linuxData, { recursive: true, force: true });
    });
    const token = 'wine-test-token';
    // no --data-dir: a Windows user's data folder is %APPDATA%\Power
    const data = join(WIN_APPDATA, 'Power');
    rmSync(data, { recursive: true, force: true });
    const serve = await serveOnWindows(['--port', '0', '--token', token, '--models-dir', winPath(REAL_DIR)]);
    try {
      const windows = await ask(new URL(serve.url).origin, token);
      assert.ok(existsSync(data), `the data folder is %APPDATA%\\Power (${data})`);
      // the same tokens and the same log-probabilities to the last bit: the Windows build computes
      // the C library's float functions as glibc does (docs/exactness.md, "Windows and Linux")
      assert.equal(windows.tokens.length, 48);
      assert.deepEqual(windows.tokens, linux.tokens);
      assert.deepEqual(windows.top_logprobs, linux.top_logprobs);
    } finally {
      serve.stop();
    }
  });
});
