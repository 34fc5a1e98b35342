// Hostile input, the pure and file-level rules (no engine): the GGUF reader's limits on crafted
// headers, pre-load model sanity, raw-byte vocabulary comparison, the K/S schedule a context can
// hold, resource caps, chat-template sources and budgets, output folders.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { capThreads, promptSizeProblem } from '../../app/runtime/resource-limits.js';
import { effectiveBatch, scheduleProblem } from '../../app/runtime/spec-schedule.js';
import { renderChatBounded } from '../../app/chat/template-budget.js';
import { chatTemplateOf, checkRenderedKeepsMessages } from '../../app/chat/template-source.js';
import { ChatTemplateError } from '../../app/chat/template.js';
import { checkCpuFit } from '../../app/engine/cpu-memory.js';
import { GgufFormatError, readGgufInfo } from '../../app/gguf/reader.js';
import { GgufValueType, gv } from '../../app/gguf/types.js';
import { writeGguf } from '../../tools/gguf/writer.js';
import { checkDraftCompatibility } from '../../app/models/draft-compat.js';
import { checkModelFile, ModelFileError } from '../../app/models/check-file.js';
import { modelSanityProblem } from '../../app/models/model-sanity.js';
import { OutputDirError, prepareOutputDir } from '../../app/models/output-dir.js';
import { infoOfSpec } from '../fixtures/gguf-info.js';
import {
  makeHostileHeaders,
  makePoisonedModels,
  RawGguf,
  tinySpec,
  withMeta,
  type HostileFiles,
  type PoisonedModels,
} from '../fixtures/hostile-gguf.js';
import { suiteTempDir } from '../fixtures/temp-dir.js';

// one scratch folder for the file: the crafted headers, the poisoned models and the output folders
const dir = suiteTempDir('power-hostile-');

async function refused(path: string, pattern: RegExp): Promise<void> {
  const t0 = performance.now();
  await assert.rejects(readGgufInfo(path), (e: unknown) => {
    assert.ok(e instanceof GgufFormatError, String(e));
    assert.match(e.message, pattern);
    return true;
  });
  // refused from the header: no scan over gigabytes of holes
  assert.ok(performance.now() - t0 < 5000, `took ${performance.now() - t0} ms`);
}

describe('hostile GGUF headers are refused with the numbers', () => {
  let files: HostileFiles;
  before(async () => {
    files = await makeHostileHeaders(dir());
  });

  test('a metadata array of 2^28 numbers', () => refused(files.hugeNumberArray, /array "power.huge" has 268435456 items; at most 2097152/));
  test('a metadata array of 2^27 strings', () => refused(files.hugeStringArray, /array "power.huge" has 134217728 items/));
  test('a 1 GiB metadata string', () => refused(files.hugeString, /is 1073741824 bytes long \(at most 67108864/));
  test('a million tensors', () => refused(files.manyTensors, /1000000 tensors: at most 32768/));
  test('a million metadata entries', () => refused(files.manyKeys, /1000000 metadata entries: at most 16384/));
  test('alignment 2^31 (tensors 2 GiB apart)', () => refused(files.hugeAlignment, /general.alignment 2147483648 is absurd/));
  test('a file that is mostly padding between tensors', () =>
    refused(files.mostlyPadding, /tensor data spans 134217728 bytes but the tensors hold only 8192: the file is mostly padding/));

  test('the metadata memory budget counts every array', async () => {
    const g = new RawGguf({ tensors: 0, kvs: 3 }).kvString('general.architecture', 'llama');
    g.kvArrayHeader('a', GgufValueType.UINT64, 2_000_000).bytes(Buffer.alloc(16_000_000));
    g.kvArrayHeader('b', GgufValueType.UINT64, 2_000_000).bytes(Buffer.alloc(16_000_000));
    const path = await g.write(join(dir(), 'budget.gguf'));
    await assert.rejects(
      readGgufInfo(path, { ...(await import('../../app/gguf/limits.js')).GGUF_LIMITS, maxMetadataBytes: 20_000_000 }),
      /more than 20000000 bytes of memory \(at array "b"\)/,
    );
    assert.equal((await readGgufInfo(path)).metadata.size, 3);
  });

  test('token strings that are not UTF-8 keep their raw bytes', async () => {
    const g = new RawGguf({ tensors: 0, kvs: 2 }).kvString('general.architecture', 'llama');
    g.kvArrayHeader('tokenizer.ggml.tokens', GgufValueType.STRING, 3).str('a').str(Uint8Array.of(0xff)).str('c');
    const info = await readGgufInfo(await g.write(join(dir(), 'raw-tokens.gguf')));
    const tokens = info.metadata.get('tokenizer.ggml.tokens');
    assert.ok(tokens?.type === 'array' && tokens.itemType === 'string');
    assert.deepEqual([...(tokens.raw?.keys() ?? [])], [1]);
    assert.deepEqual([...tokens.raw!.get(1)!], [0xff]);
  });
});

describe('models that would load and then abort are refused before loading', () => {
  let models: PoisonedModels;
  before(async () => {
    models = await makePoisonedModels(dir());
  });

  const check = (path: string) => checkModelFile(path, ['llama']);
  test('a NaN norm epsilon', () =>
    assert.rejects(check(models.nanEpsilon), /llama.attention.layer_norm_rms_epsilon is NaN, not a finite number/));
  test('a zero-size tensor', () => {
    // our writer refuses to write one, so the header the reader would return is built directly
    const spec = tinySpec();
    const info = infoOfSpec({ ...spec, tensors: spec.tensors.map((t) => (t.name === 'token_embd.weight' ? { ...t, shape: [32, 0] } : t)) });
    assert.match(modelSanityProblem(info, 'llama')!, /tensor "token_embd.weight" has a zero-size dimension \[32, 0\]/);
  });
  test('an empty vocabulary', async () => {
    const path = join(dir(), 'empty-vocab.gguf');
    await writeGguf(path, withMeta(tinySpec(), 'tokenizer.ggml.tokens', gv.strings([])));
    await assert.rejects(check(path), /the vocabulary \(tokenizer.ggml.tokens\) is empty/);
  });
  test('a directory or a FIFO is not a model file (never read, never blocks)', async () => {
    await assert.rejects(check(dir()), (e: unknown) => e instanceof ModelFileError && /not a file/.test(e.message));
  });
});

describe('the draft vocabulary is compared as bytes', () => {
  const withRaw = (bytes: number[]) => {
    const info = infoOfSpec(tinySpec());
    const tokens = info.metadata.get('tokenizer.ggml.tokens');
    if (tokens?.type !== 'array' || tokens.itemType !== 'string') throw new Error('no tokens');
    const value = [...tokens.value];
    value[300] = Buffer.from(bytes).toString('utf8'); // U+FFFD: decoding loses the bytes
    info.metadata.set('tokenizer.ggml.tokens', { ...tokens, value, raw: new Map([[300, Uint8Array.from(bytes)]]) });
    return info;
  };
  test('two different invalid byte sequences are different tokens', () => {
    const r = checkDraftCompatibility(withRaw([0xff]), withRaw([0xfe]));
    assert.equal(r.compatible, false);
    assert.match(r.reason!, /token 300 differs in its bytes \(target 0xff, draft 0xfe\)/);
  });
  test('the same bytes are the same token', () => {
    assert.equal(checkDraftCompatibility(withRaw([0xff]), withRaw([0xff])).compatible, true);
  });
});

describe('the K/S schedule a context can hold', () => {
  test('K + 1 verify rows must fit the batch llama.cpp allows for the context', () => {
    assert.equal(effectiveBatch({ k: 16, contextSize: 16, batchSize: 512 }), 16);
    assert.match(
      scheduleProblem({ k: 16, s: 16, contextSize: 16, batchSize: 512, recurrent: false })!,
      /K = 16 needs a verify batch of 17 rows .* lower K to 15/,
    );
    assert.equal(scheduleProblem({ k: 15, s: 15, contextSize: 16, batchSize: 512, recurrent: false }), null);
  });
  test('S snapshots need a ubatch of more than S + 1 rows on a recurrent target', () => {
    assert.match(scheduleProblem({ k: 15, s: 15, contextSize: 16, batchSize: 512, recurrent: true })!, /S = 15 .* lower S to 14/);
    assert.equal(scheduleProblem({ k: 15, s: 14, contextSize: 16, batchSize: 512, recurrent: true }), null);
    assert.equal(scheduleProblem({ k: 7, s: 7, contextSize: 4096, batchSize: 512, recurrent: true }), null);
  });
});

describe('resource values', () => {
  test('threads are capped at the logical cores, with a warning', () => {
    assert.deepEqual(capThreads(2, 4), { threads: 2, warning: null });
    const capped = capThreads(256, 2);
    assert.equal(capped.threads, 2);
    assert.match(capped.warning!, /--threads 256 is more than the 2 logical cores/);
  });
  test('a prompt is at least bytes / longest token tokens', () => {
    assert.equal(promptSizeProblem(1000, 4096, 16), null);
    assert.match(promptSizeProblem(50_000_000, 4096, 16)!, /50000000 bytes, so at least 3125000 tokens .* context holds 4096/);
  });
  test('a context far beyond the available memory is refused with numbers', () => {
    const spec = tinySpec({ embd: 64, heads: 8, kvHeads: 8, layers: 32 });
    const plan = { target: infoOfSpec(spec), contextSize: 1 << 24, batchSize: 512, gpuLayers: -1, s: 0, flashAttn: true };
    assert.match(
      checkCpuFit(plan, 8 * 1024 ** 3)!,
      /a context of 16777216 tokens needs about 128\.\d+ GiB on the CPU .* 8\.00 GiB is available; lower --ctx/,
    );
    assert.equal(checkCpuFit({ ...plan, contextSize: 4096 }, 8 * 1024 ** 3), null);
  });
});

describe('chat templates', () => {
  const user = [{ role: 'user' as const, content: 'hello' }];
  const tokens = { bos: '<s>', eos: '</s>' };
  // 10^10 turns: a rendering of it ends only at its time budget, or when it is stopped
  const LOOP = '{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}';
  // the renderers are this process's children, found with ps where there is one (Linux)
  const observable = process.platform === 'linux';
  const renderers = (): number[] =>
    spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => /template-worker/.test(l))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
  /** Polls `seen` until it holds, for at most a minute (a loaded machine starts a Node process slowly). */
  const until = async (what: string, seen: () => boolean): Promise<void> => {
    for (const deadline = Date.now() + 60_000; !seen(); await new Promise((r) => setTimeout(r, 20))) {
      assert.ok(Date.now() < deadline, `${what} within a minute`);
    }
  };
  test('a template that is not text, empty or cut at a NUL byte is refused', () => {
    const info = (t: ReturnType<typeof gv.str> | null) => infoOfSpec(withMeta(tinySpec(), 'tokenizer.chat_template', t));
    assert.throws(() => chatTemplateOf(info(gv.u32(42))), /chat template \(tokenizer.chat_template\) is a u32, not text/);
    assert.throws(() => chatTemplateOf(info(gv.str(' '))), /is empty/);
    assert.throws(() => chatTemplateOf(info(gv.str('a\0{{ x }}'))), /contains a NUL byte at character 1/);
    assert.equal(chatTemplateOf(info(null)), null);
  });
  test('a rendering that drops the prompt is refused', () => {
    assert.throws(() => checkRenderedKeepsMessages('<|user|>\nsomething else', ['hello']), ChatTemplateError);
    checkRenderedKeepsMessages('<|user|>\nhello<|end|>', [' hello ']);
  });
  test('a looping template is stopped by the time budget, and its renderer with it', async () => {
    await assert.rejects(
      renderChatBounded(LOOP, user, tokens, { timeMs: 500, heapMb: 64, overheadBytes: 1 << 20 }),
      /did not finish within 0.5 s/,
    );
    if (observable) await until('the renderer is stopped', () => renderers().length === 0);
  });
  test('an exploding template is stopped by its heap or output budget', async () => {
    await assert.rejects(
      renderChatBounded('{% for i in range(1000000000) %}x{% endfor %}', user, tokens, {
        timeMs: 20_000,
        heapMb: 32,
        overheadBytes: 1 << 20,
      }),
      /ran out of its 32 MB of memory|did not finish/,
    );
    await assert.rejects(
      renderChatBounded('{% for i in range(100000) %}xxxxxxxxxx{% endfor %}{{ messages[0].content }}', user, tokens, {
        timeMs: 20_000,
        heapMb: 64,
        overheadBytes: 1000,
      }),
      /produced 1000005 bytes \(at most 1010 for this conversation\)/,
    );
  });
  test('a rendering is cancelled by its signal while its renderer runs, and the renderer is stopped', async () => {
    const controller = new AbortController();
    const pending = renderChatBounded(LOOP, user, tokens, undefined, controller.signal);
    // the cancel lands while the renderer runs (elsewhere: at once, before it has started)
    if (observable) await until('the renderer starts', () => renderers().length > 0);
    controller.abort();
    // not the 5 s budget's error: the cancel ended it
    await assert.rejects(pending, /cancelled while rendering the chat template/);
    if (observable) await until('the renderer is stopped', () => renderers().length === 0);
  });
  test('a good template renders in the child process', async () => {
    assert.equal(await renderChatBounded('{{ bos_token }}{{ messages[0].content }}', user, tokens), '<s>hello');
  });
});

describe('output folders', () => {
  test('a file, a path through a file, and /proc are refused in one line', async () => {
    const file = join(dir(), 'file');
    await writeFile(file, 'x');
    await assert.rejects(prepareOutputDir(file), (e: unknown) => e instanceof OutputDirError && /is not a directory/.test(e.message));
    await assert.rejects(prepareOutputDir(join(file, 'sub')), /a part of the path is not a directory/);
    if (process.platform === 'linux') await assert.rejects(prepareOutputDir('/proc/power-test/x'), /cannot create \/proc\/power-test: /);
    assert.equal(await prepareOutputDir(join(dir(), 'a', 'b')), join(dir(), 'a', 'b'));
  });
});
