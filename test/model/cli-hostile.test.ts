// Hostile input through the real `power` command: every class ends cleanly, fast and small
// (exit 2 with one `error:` line first on stderr; exit 130 with the partial output on Ctrl-C;
// exit 1 with one `error:` line when the engine itself dies), never a signal or a hang.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';

import { availableMemoryBytes } from '../../app/engine/cpu-memory.js';
import { GIB } from '../../app/engine/memory-estimate.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { ROOT } from '../../app/paths.js';
import { assertUsageError, generateArgs, power, type CliRun } from '../fixtures/cli.js';
import { makeHostileHeaders, makePoisonedModels, type HostileFiles, type PoisonedModels } from '../fixtures/hostile-gguf.js';
import { syntheticModels } from '../fixtures/models.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

/** Exit 2, the first stderr line is the error (warnings may follow). */
const assertRefused = (run: CliRun, pattern: RegExp): void => assertUsageError(run, pattern, { warningsAfter: true });

function timed(args: string[]): CliRun & { ms: number } {
  const t0 = performance.now();
  const run = power(args);
  return { ...run, ms: performance.now() - t0 };
}

interface Interrupted extends CliRun {
  /** stdout when the interrupt was sent */
  before: string;
}

/** When the interrupt is sent: a stage the test observes, never a time. */
type Moment =
  /** the engine host, held at this stage (test/fixtures/stop-engine-host.mjs), is seen stopped; it goes on after the press */
  | { hostHeldAt: 'start' | 'loadModel' }
  /** the chat template's renderer is running (a template that loops ends only at its time budget) */
  | { templateRenders: true }
  /** the first text is on stdout, and the reply holds after its first round until it is cancelled */
  | { firstText: true };

const STOP_ENGINE_HOST = pathToFileURL(join(ROOT, 'test', 'fixtures', 'stop-engine-host.mjs')).href;

interface ChildProcessInfo {
  pid: number;
  /** ps's STAT: T for a stopped process */
  state: string;
  args: string;
}

function childrenOf(pid: number): ChildProcessInfo[] {
  const out = spawnSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout;
  return out.split('\n').flatMap((line) => {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    return m ? [{ pid: Number(m[1]), state: m[2]!, args: m[3]! }] : [];
  });
}

/**
 * Runs `power` in its own process group, as a terminal would, and sends SIGINT to the whole
 * group (the engine host has left it: it is the CLI's to cancel) once `when` is observed.
 */
function interruptGroup(args: string[], when: Moment): Promise<Interrupted> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.POWER_LLAMA_LOG;
  if ('hostHeldAt' in when) env.POWER_TEST_STOP_HOST = when.hostHeldAt;
  if ('firstText' in when) env.POWER_TEST_HOLD_REPLIES = '1';
  const child = spawn(process.execPath, ['--import', STOP_ENGINE_HOST, join(ROOT, 'bin', 'power.js'), ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stdout = '';
  let stderr = '';
  let before: string | null = null;
  const fire = (heldHost?: number): void => {
    if (before !== null) return;
    before = stdout;
    process.kill(-child.pid!, 'SIGINT');
    // the press is on its way to the CLI before the host can take another step
    if (heldHost !== undefined) process.kill(heldHost, 'SIGCONT');
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    if ('firstText' in when && stdout.trim().length > 0) fire();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const poll = setInterval(() => {
    if (before !== null || 'firstText' in when) return;
    const children = childrenOf(child.pid!);
    if ('hostHeldAt' in when) {
      const held = children.find((c) => /engine-host[\\/]host\./.test(c.args) && c.state.startsWith('T'));
      if (held) fire(held.pid);
    } else if (children.some((c) => /template-worker/.test(c.args))) fire();
  }, 20);
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, before: before ?? '' });
    });
  });
}

describe('hostile input through the CLI', () => {
  const dir = suiteTempDir('power-hostile-cli-');
  let models: ModelSet;
  let headers: HostileFiles;
  let poisoned: PoisonedModels;

  before(async () => {
    models = await syntheticModels();
    headers = await makeHostileHeaders(dir());
    poisoned = await makePoisonedModels(dir());
  });

  const long = ['--max-tokens', '100000', '--ctx', '4096', '--device', 'cpu', '--threads', '1'];

  describe(
    'Ctrl-C to the whole process group cancels at any moment',
    { skip: process.platform !== 'linux' && 'POSIX process groups, ps --ppid' },
    () => {
      // (a press during Node's own start-up, before bin/power.js runs, still ends the process by
      // the signal: nothing has started then, and nothing is lost; bin/power.js keeps a press that
      // comes while the CLI loads and hands it to the command)
      test('as the engine host starts (--json): exit 130 and a cancelled report', async () => {
        const run = await interruptGroup(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--json', ...long], {
          hostHeldAt: 'start',
        });
        assert.equal(run.signal, null, run.stderr);
        assert.equal(run.code, 130, run.stderr);
        const out = JSON.parse(run.stdout) as { stopReason: string; tokens: number[]; digest: string };
        assert.equal(out.stopReason, 'cancelled');
        assert.deepEqual(out.tokens, []);
      });

      test('while the engine starts or the model loads (--json)', async () => {
        const run = await interruptGroup(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--json', ...long], {
          hostHeldAt: 'loadModel',
        });
        assert.equal(run.signal, null, run.stderr);
        assert.equal(run.code, 130, run.stderr);
        const out = JSON.parse(run.stdout) as { stopReason: string; tokens: number[] };
        assert.equal(out.stopReason, 'cancelled');
        assert.deepEqual(out.tokens, []);
      });

      test('while a slow chat template renders (--json)', async () => {
        // the template loops for its whole 5 s budget: the press lands while its renderer runs
        const run = await interruptGroup(['generate', '--model', poisoned.templateNested, '--prompt', 'hi', '--json', ...long], {
          templateRenders: true,
        });
        assert.equal(run.code, 130, run.stderr);
        const out = JSON.parse(run.stdout) as { stopReason: string; tokens: number[] };
        assert.equal(out.stopReason, 'cancelled');
        assert.deepEqual(out.tokens, []);
      });

      test('during generation: the text so far is printed, the engine host survived to report', async () => {
        const run = await interruptGroup(['generate', '--model', models['target.gguf'], '--prompt', 'hi', ...long], { firstText: true });
        assert.equal(run.signal, null, run.stderr);
        assert.equal(run.code, 130, run.stderr);
        assert.ok(run.stdout.trim().length > 0 && run.stdout.startsWith(run.before), 'the generated text is kept');
        assert.match(run.stderr, /stop: cancelled/);
        assert.doesNotMatch(run.stderr, /error:/);
      });
    },
  );

  test(
    'the engine dying mid-generation is an internal failure (exit 1, one error line), not bad input',
    { skip: process.platform !== 'linux' && 'finds the host with ps' },
    async () => {
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin', 'power.js'), 'generate', '--model', models['target.gguf'], '--prompt', 'hi', ...long],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      let killed = false;
      child.stdout.on('data', () => {
        if (killed) return;
        killed = true;
        const host = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' })
          .trim()
          .split(/\s+/)[0]!;
        process.kill(Number(host), 'SIGKILL');
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      assert.equal(code, 1, stderr);
      assert.match(
        stderr
          .trimEnd()
          .split('\n')
          .find((l) => l.startsWith('error:'))!,
        /^error: the engine crashed: .*signal SIGKILL/,
      );
    },
  );

  describe('K and S beyond what the context can hold', () => {
    const gen = (model: string, ...more: string[]) => timed(generateArgs(model, 'hi', '--max-tokens', '8', ...more));
    test('--ctx 16 --k 16 (ngram, draft-model) and mtp --ctx 16 --k 15 are refused with the reason', () => {
      assertRefused(
        gen(models['target.gguf'], '--ctx', '16', '--k', '16', '--strategy', 'ngram'),
        /K = 16 needs a verify batch of 17 rows .* lower K to 15/,
      );
      assertRefused(
        gen(models['target.gguf'], '--ctx', '16', '--k', '16', '--strategy', 'draft-model', '--draft', models['draft-close.gguf']),
        /K = 16 needs a verify batch of 17 rows/,
      );
      assertRefused(
        gen(models['hybrid-mtp.gguf'], '--ctx', '16', '--k', '15', '--strategy', 'mtp'),
        /S = 15 rollback snapshots .* lower S to 14/,
      );
    });
    // exactness at the edge and the engine's own refusal: schedule-limits.test.ts
  });

  describe('file-system errors', () => {
    test('a directory, a FIFO and a device are not model or prompt files (nothing blocks)', () => {
      assertRefused(timed(['info', dir()]), /not a file/);
      if (process.platform !== 'win32') {
        const fifo = join(dir(), 'model.fifo');
        execFileSync('mkfifo', [fifo]);
        assertRefused(timed(['info', fifo]), /not a file/);
        assertRefused(
          timed(['generate', '--model', models['target.gguf'], '--prompt-file', '/dev/zero', '--device', 'cpu']),
          /the prompt file \/dev\/zero is not a regular file/,
        );
      }
    });
    test('an unreadable model file', async (t) => {
      const path = join(dir(), 'unreadable.gguf');
      await writeFile(path, 'x'.repeat(64));
      await chmod(path, 0o000);
      // root reads it anyway: then this proves nothing about EACCES, so it says so and skips
      if (process.getuid?.() === 0)
        return t.skip('running as root: permissions do not stop root (the directory/FIFO cases cover the error path)');
      assertRefused(timed(['info', path]), /cannot read the model file .*: permission denied/);
    });
    test('make-models --out onto a file, through a file, or where nothing can be created', async () => {
      const file = join(dir(), 'plain-file');
      await writeFile(file, 'x');
      assertRefused(timed(['make-models', '--out', file]), /--out: .* is not a directory/);
      assertRefused(timed(['make-models', '--out', join(file, 'sub')]), /a part of the path is not a directory/);
      if (process.platform === 'linux') {
        const run = timed(['make-models', '--out', '/proc/power-test/models']);
        assertRefused(run, /cannot create \/proc\/power-test/);
        assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
      }
    });
  });

  describe('crafted GGUF headers are refused before llama.cpp sees them', () => {
    for (const [name, pattern] of [
      ['hugeNumberArray', /268435456 items/],
      ['hugeStringArray', /134217728 items/],
      ['manyTensors', /1000000 tensors: at most 32768/],
      ['manyKeys', /1000000 metadata entries/],
      ['hugeAlignment', /general.alignment 2147483648 is absurd/],
      ['mostlyPadding', /mostly padding/],
    ] as const) {
      test(name, () => {
        const run = timed(['generate', '--model', headers[name], '--prompt', 'hi']);
        assertRefused(run, pattern);
        assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
      });
    }
  });

  describe('chat templates', () => {
    const gen = (model: string, ...more: string[]) => timed(generateArgs(model, 'hello', '--max-tokens', '2', ...more));
    test('a template that loops or explodes is stopped with the reason', () => {
      const run = gen(poisoned.templateLoop);
      assertRefused(run, /chat template (ran out of its 128 MB of memory|did not finish within 5 s).*--raw/);
      assert.ok(run.ms < 20_000, `took ${run.ms} ms`);
    });
    test('a template that is a number, empty, cut at a NUL byte or drops the prompt is refused', () => {
      assertRefused(gen(poisoned.templateNumber), /chat template \(tokenizer.chat_template\) is a u32, not text/);
      assertRefused(gen(poisoned.templateEmpty), /chat template \(tokenizer.chat_template\) is empty/);
      assertRefused(gen(poisoned.templateNul), /contains a NUL byte/);
      assertRefused(gen(poisoned.templateDropsPrompt), /left the prompt out/);
      assert.equal(gen(poisoned.templateNumber, '--raw').code, 0);
    });
    test('the error comes first, the warning after it', () => {
      const run = gen(poisoned.noTemplate, '--prompt', 'the quick brown fox jumps over the lazy dog '.repeat(2), '--ctx', '16');
      assertRefused(run, /the prompt is \d+ tokens but the context holds 16/);
      assert.match(run.stderr, /\nwarning: the model has no chat template/);
    });
  });

  describe('resource values', () => {
    test('--ctx far beyond the available memory is refused with numbers', (t) => {
      if (availableMemoryBytes() > 100 * GIB) return t.skip('this machine has more than 100 GiB available');
      const run = timed(generateArgs(poisoned.wideKv, 'hi', '--ctx', '16777216'));
      // Flash Attention is off by default on the CPU: the batch's score matrix comes on top of the KV
      assertRefused(
        run,
        /not enough memory: a context of 16777216 tokens needs about [\d.]+ GiB on the CPU \(of .*KV 128\.00 GiB at 16777216 ctx, compute [\d.]+ GiB/,
      );
      assert.match(run.stderr, /; lower --ctx$/m, 'Flash Attention on would not fit either: no advice to turn it on');
    });
    test('a context that fits only with Flash Attention on says so', (t) => {
      // 1,048,576 tokens of this model: KV 8 GiB, the score matrix without Flash Attention 16 GiB more
      const available = availableMemoryBytes();
      if (available < 9 * GIB || available > 24 * GIB) return t.skip(`needs 9-24 GiB available (${(available / GIB).toFixed(1)} GiB here)`);
      const run = timed(generateArgs(poisoned.wideKv, 'hi', '--ctx', '1048576'));
      assertRefused(
        run,
        /not enough memory: a context of 1048576 tokens .*; lower --ctx, or turn Flash Attention on \(--flash-attn on: [\d.]+ GiB, exact on the default engine too\)$/m,
      );
    });
    test('--threads far beyond the cores is capped with a warning', () => {
      const run = power(generateArgs(models['target.gguf'], 'hi', '--max-tokens', '4', '--threads', '1024'));
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /warning: --threads 1024 is more than the \d+ logical cores of this machine; using \d+/);
    });
    test('a huge prompt file is refused by its size, before tokenising', async () => {
      const path = join(dir(), 'huge-prompt.txt');
      await writeFile(path, '');
      await (await import('node:fs/promises')).truncate(path, 50_000_000);
      const run = timed(['generate', '--model', models['target.gguf'], '--prompt-file', path, '--device', 'cpu']);
      assertRefused(run, /the prompt file .* is 50000000 bytes, so at least \d+ tokens .* context holds/);
      assert.ok(run.ms < 10_000, `took ${run.ms} ms`);
    });
  });

  describe('minor', () => {
    test('a NaN norm epsilon is refused before loading', () => {
      assertRefused(timed(['generate', '--model', poisoned.nanEpsilon, '--prompt', 'hi']), /layer_norm_rms_epsilon is NaN/);
    });
    test('a vocabulary of one token (BOS = EOS = <unk>) is refused before loading, with the reason', () => {
      assertRefused(
        timed(generateArgs(poisoned.oneToken, 'hi')),
        /one-token\.gguf: the vocabulary has no token a reply can be made of \(1 token: control, unknown, unused or end-of-generation only\)/,
      );
    });
    test('a vocabulary that cannot encode the text fails the request, not the engine (llama.cpp throws inside)', () => {
      // llama.cpp's SPM tokenizer falls back to byte tokens this vocabulary lacks and throws
      // std::out_of_range; before the addon's guard that ended the engine host (exit 1)
      const run = timed(generateArgs(poisoned.noByteTokens, 'hi', '--raw'));
      assertRefused(run, /^error: the model's vocabulary cannot tokenize this text \(llama\.cpp failed: .+\)$/);
    });
    test("a profile's S out of range names the profile", async () => {
      const path = join(dir(), 's5.toml');
      await writeFile(path, 'spec_mode = "ngram"\nspec_draft_max = 7\nspec_mtp_recurrent_snapshots = 5\n');
      assertRefused(
        timed(['generate', '--model', models['target.gguf'], '--prompt', 'hi', '--profile', path, '--k', '3']),
        /^error: spec_mtp_recurrent_snapshots in the profile .*s5\.toml must be from 0 to K \(3\) \(got 5\)$/,
      );
    });
    test("--verbose echoes llama.cpp's log", () => {
      const run = power(generateArgs(models['target.gguf'], 'hi', '--max-tokens', '2', '--verbose'));
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /llama_model_loader|llama_context/);
    });
  });
});
