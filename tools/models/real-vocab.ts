// Real tokenizers for the synthetic models: llama.cpp's source bundle ships tokenizer-only GGUFs
// (models/ggml-vocab-*.gguf, no tensors), which its own tokenizer tests run on. We copy every
// `tokenizer.*` key of one of them into models whose weights are ours (synthetic.ts,
// REAL_VOCAB_MODELS), so the BPE path, vocabulary-sized heads and logits rows are exercised.
//
// The file is read from build/llama.cpp (the from-source build's clone of the bundle) when that
// clone is of this release, else taken out of the bundle (node-llama-cpp's gitRelease.bundle)
// with git into .cache/bench/vocab/<release>/ once per machine.
// ggml-vocab-qwen35.gguf is Qwen3.5's tokenizer, converted by llama.cpp's
// convert_hf_to_gguf_update.py (from Qwen/Qwen3.5-9B-Instruct), part of llama.cpp's MIT-licensed
// repository; it carries no license key and the bundle no notice of its own (docs/testing.md).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { readGgufInfo } from '../../app/gguf/reader.js';
import { kv, type GgufEntry } from '../../app/gguf/types.js';
import { BENCH_MODELS_CACHE, ROOT } from '../../app/paths.js';
import { replaceFileAtomic } from '../../app/service/storage/atomic-file.js';

/** The bundled tokenizers the synthetic set can carry, by name: the file and what it must be. */
export const BUNDLED_VOCABS = {
  qwen35: { file: 'ggml-vocab-qwen35.gguf', model: 'gpt2', pre: 'qwen35', size: 151936 },
} as const;
export type BundledVocabName = keyof typeof BUNDLED_VOCABS;

/** A tokenizer taken from a bundled file: its `tokenizer.*` entries, in the file's order. */
export interface BundledVocab {
  name: BundledVocabName;
  /** where it was read from */
  path: string;
  entries: GgufEntry[];
  size: number;
  tokenTypes: number[];
  bos: number;
  eos: number;
}

const LLAMA_PKG = join(ROOT, 'node_modules', 'node-llama-cpp', 'llama');
const BUNDLE = join(LLAMA_PKG, 'gitRelease.bundle');
/** build-native.mjs's clone of the bundle, stamped `<tag> <package version> patches <hash>` */
const BUILD_CLONE = join(ROOT, 'build', 'llama.cpp');

function releaseTag(): string {
  const info = JSON.parse(readFileSync(join(LLAMA_PKG, 'llama.cpp.info.json'), 'utf8')) as { tag?: unknown };
  if (typeof info.tag !== 'string' || !/^[\w.-]+$/.test(info.tag)) throw new Error(`${LLAMA_PKG}/llama.cpp.info.json has no release tag`);
  return info.tag;
}

/** The tokenizer file and llama.cpp's tokenizer test case files next to it (its .inp and .out). */
const withCases = (file: string): string[] => [file, `${file}.inp`, `${file}.out`];

/**
 * The path of a bundled tokenizer file of this llama.cpp release (its test cases lie next to it):
 * in the build's clone when it is of this release, else extracted from the bundle (a bare clone,
 * no checkout: about 2 s) into `cacheDir/vocab/<release>/`.
 */
export async function bundledVocabFile(
  name: BundledVocabName,
  { cacheDir = BENCH_MODELS_CACHE, buildClone = BUILD_CLONE }: { cacheDir?: string; buildClone?: string } = {},
): Promise<string> {
  const { file } = BUNDLED_VOCABS[name];
  const tag = releaseTag();
  const stamp = join(buildClone, '.power-release');
  const inClone = join(buildClone, 'models', file);
  const cloneOk = existsSync(stamp) && readFileSync(stamp, 'utf8').startsWith(`${tag} `);
  if (cloneOk && withCases(inClone).every((f) => existsSync(f))) return inClone;
  const cached = join(cacheDir, 'vocab', tag, file);
  // the tokenizer is written last: when it is there, its test cases are too
  if (existsSync(cached)) return cached;
  if (!existsSync(BUNDLE)) throw new Error(`no ${file}: neither ${inClone} nor ${BUNDLE} exists (npm ci installs node-llama-cpp)`);
  await mkdir(dirname(cached), { recursive: true });
  const bare = join(dirname(cached), `.bundle-${process.pid}`);
  try {
    execFileSync('git', ['clone', '--bare', '--quiet', BUNDLE, bare], { stdio: ['ignore', 'ignore', 'inherit'] });
    for (const f of withCases(file).reverse()) {
      const bytes = execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', `HEAD:models/${f}`], { maxBuffer: 256 * 1024 * 1024 });
      await replaceFileAtomic(join(dirname(cached), f), (tmp) => writeFile(tmp, bytes));
    }
  } finally {
    await rm(bare, { recursive: true, force: true });
  }
  return cached;
}

/** One of llama.cpp's tokenizer test cases: a text and the tokens its tokenizer must give (no BOS). */
export interface TokenizerCase {
  text: string;
  tokens: number[];
}

/**
 * llama.cpp's test cases for a tokenizer file (`<file>.inp`: texts separated by
 * `__ggml_vocab_test__` lines; `<file>.out`: one line of token ids per text), as
 * tests/test-tokenizer-0.cpp reads them.
 */
export function readTokenizerCases(vocabFile: string): TokenizerCase[] {
  const texts = readFileSync(`${vocabFile}.inp`, 'utf8').split('\n__ggml_vocab_test__\n');
  // the file ends with a separator line
  if (texts.at(-1) === '') texts.pop();
  const lines = readFileSync(`${vocabFile}.out`, 'utf8').split('\n');
  return texts.map((text, i) => {
    const line = lines[i]?.trim() ?? '';
    return { text, tokens: line === '' ? [] : line.split(/\s+/).map(Number) };
  });
}

function expect(ok: boolean, path: string, what: string): asserts ok {
  if (!ok) throw new Error(`${path}: ${what}`);
}

/** Reads a tokenizer file and checks it is the one named (type, pre-tokenizer, size, valid UTF-8). */
export async function readBundledVocab(name: BundledVocabName, path: string): Promise<BundledVocab> {
  const want = BUNDLED_VOCABS[name];
  const info = await readGgufInfo(path);
  const entries = [...info.metadata].filter(([key]) => key.startsWith('tokenizer.')).map(([key, value]) => kv(key, value));
  const get = (key: string) => info.metadata.get(key);
  const tokens = get('tokenizer.ggml.tokens');
  const types = get('tokenizer.ggml.token_type');
  const model = get('tokenizer.ggml.model');
  const pre = get('tokenizer.ggml.pre');
  const bos = get('tokenizer.ggml.bos_token_id');
  const eos = get('tokenizer.ggml.eos_token_id');
  expect(model?.type === 'string' && model.value === want.model, path, `tokenizer.ggml.model is not ${want.model}`);
  expect(pre?.type === 'string' && pre.value === want.pre, path, `tokenizer.ggml.pre is not ${want.pre}`);
  expect(tokens?.type === 'array' && tokens.itemType === 'string' && tokens.value.length === want.size, path, `not ${want.size} tokens`);
  // a token that is not valid UTF-8 would be written back lossily
  expect(tokens.raw === undefined || tokens.raw.size === 0, path, 'a token is not valid UTF-8');
  expect(types?.type === 'array' && types.itemType === 'i32' && types.value.length === want.size, path, 'no token type per token');
  expect(bos?.type === 'u32' && eos?.type === 'u32', path, 'no BOS/EOS token ids');
  return { name, path, entries, size: want.size, tokenTypes: types.value, bos: bos.value, eos: eos.value };
}

const loaded = new Map<BundledVocabName, BundledVocab>();

/** Finds, reads and keeps a bundled tokenizer for `bundledVocab` (once per process). */
export async function loadBundledVocab(name: BundledVocabName): Promise<BundledVocab> {
  const have = loaded.get(name);
  if (have) return have;
  const vocab = await readBundledVocab(name, await bundledVocabFile(name));
  loaded.set(name, vocab);
  return vocab;
}

/** A tokenizer loadBundledVocab has read (model specs are built synchronously). */
export function bundledVocab(name: BundledVocabName): BundledVocab {
  const vocab = loaded.get(name);
  if (!vocab) throw new Error(`the ${name} tokenizer is not loaded: await loadBundledVocab('${name}') first (makeModelFiles does)`);
  return vocab;
}
