// The renderer's pure pieces added for issue 19 (no engine, no DOM): the library's groups and
// defaults, the Device picker and badge, the A/B verdict and pairs, the per-reply figures, the
// send gate, the chat list's choices, the theme, the load settings and downloads.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { abPairs, abVerdict, compareAb, abSide, speedWords } from '../../renderer/src/logic/ab.js';
import { chatAfterDelete, reusableChat } from '../../renderer/src/logic/chat-list.js';
import { deviceBadge, deviceOptions, freeOfTotal } from '../../renderer/src/logic/devices.js';
import { approxSize, downloadLine, downloadPercent, latestByFile } from '../../renderer/src/logic/downloads.js';
import { addPathProblem, bestMethod, defaultTarget, describeAdded, entryKind, groupLibrary } from '../../renderer/src/logic/library.js';
import { modelSummary } from '../../renderer/src/logic/format.js';
import { checkLoadFields } from '../../renderer/src/logic/load-settings.js';
import { replyStatsParts, rollingForModel, sparkScale, stopReasonLabel } from '../../renderer/src/logic/reply.js';
import { checkSampling, DEFAULT_SAMPLING_FORM, samplingProblem } from '../../renderer/src/logic/sampling.js';
import { customApplied, profileToRun, sendBlocker, type SendState } from '../../renderer/src/logic/send-gate.js';
import { parseTheme, resolveTheme } from '../../renderer/src/logic/theme.js';
import { PROFILE_PRESETS } from '../../app/contract/api/profiles.js';
import { RECOMMENDED_PAIRS } from '../../app/contract/recommended-models.js';
import type {
  AssistantMessage,
  ChatSummary,
  DevicesReport,
  DownloadEntry,
  Draft,
  EngineState,
  ModelEntry,
  ProfileEntry,
  Strategies,
} from '../../renderer/src/api-types.js';
import { reply, sampleChat } from '../fixtures/chats.js';

const GIB = 1024 ** 3;

function entry(name: string, architecture: string, parameters: number, over: Partial<ModelEntry> = {}, vocabSize = 32000): ModelEntry {
  return {
    id: `id-${name}`,
    name,
    path: `/models/${name}.gguf`,
    sizeBytes: parameters * 2,
    addedAt: '2026-01-01T00:00:00.000Z',
    sha256: { state: 'pending' },
    facts: {
      architecture,
      name,
      parameters,
      fileType: 'Q4_0',
      contextLength: 4096,
      layers: 4,
      nextnLayers: architecture === 'qwen35' ? 1 : 0,
      recurrent: architecture === 'qwen35',
      hybrid: architecture === 'qwen35',
      vocabType: 'gpt2',
      vocabSize,
      chatTemplate: true,
    },
    problem: null,
    ...over,
  };
}

const LIBRARY = [
  entry('llama-8b', 'llama', 8e9),
  entry('llama-8b-q8_0', 'llama', 8e9),
  entry('llama-1b', 'llama', 1e9),
  entry('tiny-draft', 'llama', 7e9),
  entry('eagle3-llama', 'eagle3', 0.3e9),
  entry('dflash-head', 'dflash', 0.2e9),
  entry('qwen-hybrid', 'qwen35', 4e9),
  entry('broken', 'llama', 70e9, { problem: 'file gone' }),
];

const TABLE = (over: Partial<Strategies> = {}): Strategies =>
  ({
    none: { available: true },
    ngram: { available: true },
    'draft-model': { available: false, reason: 'needs --draft' },
    mtp: { available: false, reason: 'no NextN layers' },
    dflash: { available: false },
    eagle3: { available: false },
    dspark: { available: false },
    'ngram-simple': { available: true },
    'ngram-map-k': { available: true },
    'ngram-map-k4v': { available: true },
    'ngram-mod': { available: true },
    'ngram-cache': { available: true },
    ...over,
  }) as Strategies;

const candidate = (e: ModelEntry, compatible = true): Draft => ({
  modelId: e.id,
  name: e.name,
  strategy: 'draft-model',
  compatible,
  ...(compatible ? {} : { reason: 'vocabulary differs' }),
});

describe('the library in groups', () => {
  test("an entry's summary says what its projector adds, or why it does not fit", () => {
    const projector = {
      path: '/models/mmproj-gemma.gguf',
      projectorType: 'gemma3',
      accepts: { image: true, audio: false },
      imageSize: 896,
      patchSize: 14,
      tokensPerImage: 256,
      outputWidth: 2560,
      weightsBytes: 1000,
      compatible: true,
    };
    assert.match(modelSummary(entry('gemma', 'gemma3', 4e9, { projector })), / · image via mmproj-gemma\.gguf \(256 tokens each\)$/);
    const reason = "projector outputs 1152-wide embeddings; this model's are 640";
    const refused = modelSummary(entry('gemma', 'gemma3', 4e9, { projector: { ...projector, compatible: false, reason } }));
    assert.match(refused, / · mmproj-gemma\.gguf does not fit: projector outputs 1152-wide embeddings; this model's are 640$/);
    assert.doesNotMatch(modelSummary(entry('plain', 'llama', 1e9)), /via|fit/);
  });

  test('artifacts by their architecture, drafts by name or by being a small member of a family, the rest are models', () => {
    const kinds = Object.fromEntries(LIBRARY.map((e) => [e.name, entryKind(e, LIBRARY)]));
    assert.deepEqual(kinds, {
      'llama-8b': 'model',
      'llama-8b-q8_0': 'model',
      'llama-1b': 'draft',
      'tiny-draft': 'draft',
      'eagle3-llama': 'artifact',
      'dflash-head': 'artifact',
      'qwen-hybrid': 'model',
      broken: 'model',
    });
    // another vocabulary is another family: a small model alone is a model
    const other = [entry('llama-8b', 'llama', 8e9), entry('small', 'llama', 1e9, {}, 50000)];
    assert.equal(entryKind(other[1]!, other), 'model');
    // a model with its own MTP head is a target beside a larger one; its sidecar (mtp-*.gguf) a draft
    const qwens = [entry('qwen-9b', 'qwen35', 9e9), entry('qwen-0.8b', 'qwen35', 8e8), entry('mtp-qwen-9b', 'qwen35', 5e8)];
    assert.deepEqual(
      qwens.map((e) => entryKind(e, qwens)),
      ['model', 'model', 'draft'],
    );
    const g = groupLibrary(LIBRARY);
    assert.deepEqual([g.models.length, g.drafts.length, g.artifacts.length], [4, 2, 2]);
  });

  test('a fresh library starts with the largest usable model, never a draft, an artifact or a broken file', () => {
    assert.equal(defaultTarget(LIBRARY), 'id-llama-8b');
    assert.equal(defaultTarget([entry('llama-1b-draft', 'llama', 1e9), entry('eagle3-x', 'eagle3', 1e9)]), null);
    assert.equal(defaultTarget([]), null);
  });

  test('the best method: MTP layers, else a fitting Gemma 4 assistant, else a compatible draft model of the family, else ngram, else none', () => {
    const hybrid = LIBRARY.find((e) => e.name === 'qwen-hybrid');
    assert.deepEqual(bestMethod(hybrid, TABLE({ mtp: { available: true } }), [], LIBRARY), { method: 'mtp', draftId: null });
    const target = LIBRARY.find((e) => e.name === 'llama-8b');
    const drafts = LIBRARY.filter((e) => e !== target && e.facts?.architecture === 'llama').map((e) =>
      candidate(e, e.name !== 'tiny-draft'),
    );
    // the quantized copy of the target is compatible but not a draft; tiny-draft is incompatible
    assert.deepEqual(bestMethod(target, TABLE(), drafts, LIBRARY), { method: 'draft-model', draftId: 'id-llama-1b' });
    assert.deepEqual(bestMethod(target, TABLE(), [candidate(LIBRARY[1]!)], LIBRARY), { method: 'ngram', draftId: null });
    assert.deepEqual(bestMethod(target, TABLE({ ngram: { available: false } }), [], LIBRARY), { method: 'none', draftId: null });
    // a Gemma 4 target with a fitting assistant beside it drafts with it (mtp), an unfitting one is passed over
    const gemma4 = entry('gemma4', 'gemma4', 2e9);
    const assistant = { modelId: 'id-gemma4-assistant', name: 'gemma4-assistant', strategy: 'mtp', compatible: true };
    assert.deepEqual(bestMethod(gemma4, TABLE(), [assistant], LIBRARY), { method: 'mtp', draftId: 'id-gemma4-assistant' });
    assert.deepEqual(bestMethod(gemma4, TABLE(), [{ ...assistant, compatible: false }], LIBRARY), { method: 'ngram', draftId: null });
  });

  test('a path is checked before it is sent, and what models.add did reads in words', () => {
    assert.match(addPathProblem('file', '  ')!, /Type the path/);
    assert.match(addPathProblem('file', '/models')!, /use Add model folder/);
    assert.match(addPathProblem('folder', '/models/a.GGUF')!, /use Add model file/);
    assert.equal(addPathProblem('file', '/models/a.gguf'), null);
    assert.equal(addPathProblem('folder', '/models'), null);
    assert.equal(describeAdded({ added: [{ name: 'a' }, { name: 'b' }], skipped: [] }), 'Added a, b.');
    assert.equal(
      describeAdded({ added: [], skipped: [{ path: '/m/x.gguf', reason: 'not a GGUF file' }] }),
      'Nothing was added. Skipped 1: x.gguf (not a GGUF file).',
    );
  });
});

const CPU = { name: 'CPU', description: 'AMD EPYC', type: 'cpu', backend: 'CPU', freeBytes: 20 * GIB, totalBytes: 24 * GIB };
const gpu = (i: number, free: number) => ({
  name: `CUDA${i}`,
  description: 'NVIDIA RTX 4090',
  type: 'gpu',
  backend: 'CUDA',
  freeBytes: free * GIB,
  totalBytes: 24 * GIB,
});
const report = (devices: DevicesReport['flavours'][number]['devices'], usable: boolean): DevicesReport => ({
  flavours: [
    { flavour: 'cuda', dir: '/b/cuda', gpu: 'cuda', devices, cuda: null },
    { flavour: 'cpu', dir: '/b/cpu', gpu: null, devices: [CPU], cuda: null },
  ],
  auto: usable ? 'CUDA0 (NVIDIA RTX 4090, 21.3 of 24.0 GiB free)' : 'cpu (AMD EPYC) (flavour cpu): no NVIDIA driver',
  cuda: { usable, use: usable ? 'CUDA0' : null, reason: usable ? null : 'no NVIDIA driver' },
  vulkan: { usable: false, use: null, reason: 'no Vulkan flavour of the addon is built' },
});

function engineOn(device: string, kind: 'cpu' | 'cuda'): EngineState {
  return {
    status: 'ready',
    options: null,
    model: { id: 'm', name: 'target', path: '/m/target.gguf' },
    draft: null,
    recurrent: false,
    contextSize: 2048,
    backend: {
      device,
      kind,
      flavour: kind,
      batchInvariant: true,
      llamaCppRelease: 'b1',
      gpuLayers: null,
      flashAttn: 'off',
      sampling: 'cpu',
      samplingReason: null,
      choice: null,
      memoryEstimateBytes: null,
    },
    reloadPending: false,
    lastCrash: null,
    restarts: 0,
  };
}

describe('devices', () => {
  test('auto, the CPU and each CUDA device with free / total memory; the ones a cuda request cannot pick are disabled with the reason', () => {
    assert.equal(freeOfTotal({ freeBytes: 21.3 * GIB, totalBytes: 24 * GIB }), '21.3 / 24.0 GiB free');
    const two = deviceOptions(report([CPU, gpu(0, 10), gpu(1, 21.3)], true));
    assert.deepEqual(
      two.map((o) => [o.value, o.label, o.disabled]),
      [
        ['auto', 'Auto (CUDA0 (NVIDIA RTX 4090, 21.3 of 24.0 GiB free))', false],
        ['cpu', 'CPU · AMD EPYC · 20.0 / 24.0 GiB free', false],
        ['cuda:CUDA0', 'CUDA0 · NVIDIA RTX 4090 · 10.0 / 24.0 GiB free', true],
        ['cuda', 'CUDA1 · NVIDIA RTX 4090 · 21.3 / 24.0 GiB free', false],
      ],
    );
    assert.match(two[2]!.reason!, /most free memory \(CUDA1\)/);
    const none = deviceOptions(report([CPU], false));
    assert.deepEqual(none.at(-1), {
      value: 'cuda',
      label: 'CUDA (unavailable: no NVIDIA driver)',
      disabled: true,
      reason: 'no NVIDIA driver',
    });
    assert.deepEqual(
      deviceOptions(null).map((o) => o.value),
      ['auto', 'cpu', 'cuda'],
    );
  });

  test('Vulkan devices: a real GPU is the pick, a CPU-type device (lavapipe) says that it runs on the CPU and is picked only alone', () => {
    const vk = (i: number, description: string, onCpu: boolean, free: number) => ({
      name: `Vulkan${i}`,
      description,
      type: 'gpu',
      backend: 'Vulkan',
      freeBytes: free * GIB,
      totalBytes: 24 * GIB,
      onCpu,
    });
    const withVulkan = (devices: DevicesReport['flavours'][number]['devices']): DevicesReport => ({
      ...report([CPU], false),
      flavours: [{ flavour: 'vulkan', dir: '/b/vulkan', gpu: 'vulkan', devices, cuda: null }, ...report([CPU], false).flavours],
    });
    const both = deviceOptions(
      withVulkan([vk(0, 'llvmpipe (LLVM 15.0.6, 256 bits)', true, 22), vk(1, 'AMD Radeon RX 7900 XTX', false, 20)]),
    );
    assert.deepEqual(
      both.filter((o) => o.value.startsWith('vulkan')).map((o) => [o.value, o.label, o.disabled]),
      [
        ['vulkan:Vulkan0', 'Vulkan0 · llvmpipe (LLVM 15.0.6, 256 bits) · runs on the CPU · 22.0 / 24.0 GiB free', true],
        ['vulkan', 'Vulkan1 · AMD Radeon RX 7900 XTX · 20.0 / 24.0 GiB free', false],
      ],
    );
    const alone = deviceOptions(withVulkan([vk(0, 'llvmpipe (LLVM 15.0.6, 256 bits)', true, 22)]));
    assert.deepEqual(alone.at(-1)!.value, 'vulkan');
    assert.equal(alone.at(-1)!.disabled, false);
  });

  test('the badge: CPU, or the CUDA device with its free memory', () => {
    assert.equal(deviceBadge(engineOn('cpu (AMD EPYC)', 'cpu'), null), 'CPU');
    const cuda = engineOn('CUDA0 (NVIDIA RTX 4090, 21.3 of 24.0 GiB free)', 'cuda');
    assert.equal(deviceBadge(cuda, report([CPU, gpu(0, 21.3)], true)), 'CUDA0 · NVIDIA RTX 4090 · 21.3 / 24.0 GiB free');
    assert.equal(deviceBadge(cuda, null), 'CUDA0 · NVIDIA RTX 4090 · 21.3 / 24.0 GiB free');
    assert.equal(deviceBadge({ ...cuda, model: null }, null), null);
  });
});

describe('the A/B', () => {
  test('the verdict in words: faster, slower, as fast', () => {
    assert.equal(speedWords(1.8), '1.8× faster');
    assert.equal(speedWords(0.55), '1.8× slower');
    assert.equal(speedWords(1.02), 'as fast (1.02×)');
    assert.equal(speedWords(0.97), 'as fast (0.97×)');
    assert.equal(speedWords(null), null);
    assert.equal(speedWords(0), null);
  });

  test('read from the chat: the control and the speculative reply it replaced, with their verdict', async () => {
    const chat = await sampleChat();
    const pairs = abPairs(chat);
    assert.deepEqual([...pairs.keys()], ['c1']);
    const pair = pairs.get('c1')!;
    assert.equal(pair.speculative.id, 's1');
    assert.equal(pair.replyTo, 'u1');
    const v = abVerdict(pair.result!);
    assert.match(v.speed, /^(\d+\.\d× (faster|slower)|as fast \(\d\.\d\d×\))$/);
    assert.equal(v.digests, 'Digests match');
    assert.match(v.rates, /^[\d.]+ tok\/s vs [\d.]+ tok\/s$/);
    // another sampling is not the same experiment; a running control has no verdict yet
    const other = structuredClone(chat);
    (other.branches![0]!.tails[0]![0] as AssistantMessage).sampling.maxTokens = 99;
    assert.equal(abPairs(other).size, 0);
    const running = structuredClone(chat);
    const control = running.messages[1]!;
    if (control.role === 'assistant') control.status = 'streaming';
    assert.equal(abPairs(running).get('c1')!.result, null);
    assert.equal(abPairs(null).size, 0);
    const differ = compareAb(abSide(pair.speculative), { ...abSide(pair.control), digest: 'sha256:00' });
    assert.equal(abVerdict(differ).digests, 'Digests differ');
  });
});

describe('per-reply figures', () => {
  test('every figure in order, and "max tokens" when the reply was cut', async () => {
    const r = await reply({ id: 'r', profile: null, strategy: 'draft-model', k: 4, s: null, ids: [1, 2, 3, 4, 5, 6, 7, 8], accepted: [3] });
    const parts = replyStatsParts({ tokens: r.tokens, stats: r.stats, status: r.status }, r.strategy, r.stopReason);
    assert.equal(parts.length, 6);
    assert.match(parts[0]!, /^8 tokens$/);
    assert.match(parts[1]!, / decode$/);
    assert.match(parts[2]!, /^TTFT /);
    assert.match(parts[3]!, /^\d+\.\d% accepted$/);
    assert.match(parts[4]!, /^mean length \d\.\d\d$/);
    assert.equal(parts[5], 'max tokens');
    assert.equal(replyStatsParts({ tokens: [], stats: null, status: 'done' }, 'none', 'eos')[3], 'no proposals (autoregressive)');
    assert.deepEqual(
      (['max-tokens', 'eos', 'cancelled', 'context-full', 'stop', null] as const).map((s) => stopReasonLabel(s, 'done')),
      ['max tokens', 'end of text', 'stopped', 'context full', 'end of turn', '—'],
    );
    assert.equal(stopReasonLabel(null, 'streaming'), 'writing…');
    assert.equal(stopReasonLabel(null, 'error'), 'failed');
  });

  test('rolling figures pool this model’s speculative replies only', async () => {
    const a = await reply({ id: 'a', profile: null, strategy: 'draft-model', k: 4, s: null, ids: [1, 2, 3, 4, 5] });
    const b = await reply({ id: 'b', profile: null, strategy: 'none', k: null, s: null, ids: [1, 2, 3] });
    const c = {
      ...(await reply({ id: 'c', profile: null, strategy: 'draft-model', k: 4, s: null, ids: [1, 2, 3] })),
      model: { id: 'other', name: 'other', sha256: null },
    };
    const d = await reply({ id: 'd', profile: null, strategy: 'draft-model', k: 4, s: null, ids: [1, 2, 3], status: 'error' });
    assert.deepEqual(rollingForModel([a, b, c, d], 'model-target', null), [a.stats]);
    assert.deepEqual(rollingForModel([a, b, c, d], 'model-target', 'a'), []);
    assert.deepEqual(rollingForModel([a], null, null), []);
  });

  test('the sparkline’s scale: its top and bottom (0 at the least)', () => {
    assert.deepEqual(sparkScale([120, 80, 200]), { max: 200, min: 0 });
    assert.deepEqual(sparkScale([-5, 10]), { max: 10, min: -5 });
    assert.equal(sparkScale([]), null);
  });
});

describe('the send gate', () => {
  const balanced = PROFILE_PRESETS[0]!;
  const custom: ProfileEntry = { id: 'c', name: 'Custom K3', preset: false, strategy: null, k: 3, s: null, note: '' };
  const base: SendState = {
    connected: true,
    engine: engineOn('cpu (AMD EPYC)', 'cpu'),
    loading: false,
    streaming: null,
    chatId: 'here',
    streamingTitle: null,
    profileChoice: 'balanced',
    custom: { ok: true, k: 7, s: null },
    activeProfile: balanced,
    samplingProblem: '',
  };

  test('each reason in turn, in words; none when a reply can start', () => {
    assert.equal(sendBlocker(base), null);
    assert.match(sendBlocker({ ...base, connected: false })!, /Not connected/);
    assert.match(sendBlocker({ ...base, loading: true })!, /loading/);
    assert.match(sendBlocker({ ...base, engine: { ...base.engine!, model: null } })!, /^Load a model first/);
    assert.match(sendBlocker({ ...base, engine: null })!, /^Load a model first/);
    assert.match(sendBlocker({ ...base, streaming: { chatId: 'here' } })!, /Stop or Escape/);
    assert.equal(
      sendBlocker({ ...base, streaming: { chatId: 'there' }, streamingTitle: 'Long story' }),
      'A reply is being written in “Long story”: wait for it, or open that chat to stop it.',
    );
    const invalid = {
      ...base,
      profileChoice: 'custom',
      custom: { ok: false as const, kError: 'K must be a whole number from 1 to 16.', sError: null },
    };
    assert.match(sendBlocker(invalid)!, /^The Custom profile is not valid: K must be a whole number from 1 to 16\./);
    assert.match(
      sendBlocker({ ...base, profileChoice: 'custom', custom: { ok: true, k: 3, s: null } })!,
      /^Apply the Custom profile first/,
    );
    assert.equal(sendBlocker({ ...base, profileChoice: 'custom', custom: { ok: true, k: 3, s: null }, activeProfile: custom }), null);
    assert.equal(sendBlocker({ ...base, samplingProblem: 'Fix Seed under Sampling: …' }), 'Fix Seed under Sampling: …');
  });

  test('the profile that will run, by its name', () => {
    assert.equal(customApplied({ ok: true, k: 3, s: null }, custom), true);
    assert.equal(customApplied({ ok: true, k: 3, s: 2 }, custom), false);
    assert.equal(customApplied({ ok: true, k: 7, s: null }, balanced), false);
    assert.equal(profileToRun(balanced), 'Balanced K7/S7');
    assert.equal(profileToRun(custom), 'Custom K3');
    assert.equal(profileToRun({ ...custom, name: 'mine' }), 'mine (K3)');
    assert.equal(profileToRun(undefined), '—');
  });

  test('every bad sampling field is named in one message', () => {
    const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, temperature: 'hot', topP: '1.5', seed: '-1' });
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.deepEqual(Object.keys(r.errors).sort(), ['seed', 'temperature', 'topP']);
    assert.equal(
      samplingProblem(r.errors),
      'Fix Temperature, Top-p and Seed under Sampling: Temperature must be a number from 0 to 100 (0 is greedy). Top-p must be a number above 0, at most 1. Seed must be a whole number from 0 to 4294967295, or empty for a random one.',
    );
    assert.equal(samplingProblem({}), '');
  });
});

describe('the chat list', () => {
  const chat = (id: string, over: Partial<ChatSummary> = {}): ChatSummary => ({
    id,
    title: 'New chat',
    createdAt: '',
    updatedAt: '',
    messages: 0,
    streaming: false,
    ...over,
  });

  test('New chat reuses an empty, untitled chat, the open one first', () => {
    const chats = [chat('a', { messages: 2, title: 'Hi' }), chat('b'), chat('c')];
    assert.equal(reusableChat(chats, 'c')?.id, 'c');
    assert.equal(reusableChat(chats, 'a')?.id, 'b');
    assert.equal(reusableChat([chat('r', { title: 'Benchmarks' }), chat('s', { streaming: true })], null), null);
  });

  test('after a delete the next chat opens, else the one before, else none', () => {
    const chats = [chat('a'), chat('b'), chat('c')];
    assert.equal(chatAfterDelete(chats, 'a'), 'b');
    assert.equal(chatAfterDelete(chats, 'b'), 'c');
    assert.equal(chatAfterDelete(chats, 'c'), 'b');
    assert.equal(chatAfterDelete([chat('a')], 'a'), null);
    assert.equal(chatAfterDelete(chats, 'gone'), 'a');
  });
});

describe('theme, load settings, downloads', () => {
  test('light, dark or the system’s', () => {
    assert.equal(parseTheme('dark'), 'dark');
    assert.equal(parseTheme('purple'), 'system');
    assert.equal(parseTheme(null), 'system');
    assert.equal(resolveTheme('system', true), 'dark');
    assert.equal(resolveTheme('system', false), 'light');
    assert.equal(resolveTheme('light', true), 'light');
  });

  test('the load settings: empty is the engine’s default, every bad field named', () => {
    assert.deepEqual(checkLoadFields({ contextSize: '', threads: '', gpuLayers: '', remote: '' }), {
      ok: true,
      contextSize: undefined,
      threads: undefined,
      gpuLayers: -1,
      rpc: undefined,
    });
    assert.deepEqual(checkLoadFields({ contextSize: '8192', threads: '4', gpuLayers: '20', remote: '' }), {
      ok: true,
      contextSize: 8192,
      threads: 4,
      gpuLayers: 20,
      rpc: undefined,
    });
    const bad = checkLoadFields({ contextSize: '8', threads: '1.5', gpuLayers: '-2', remote: 'gpu-box' });
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.deepEqual(Object.keys(bad.errors), ['contextSize', 'threads', 'gpuLayers', 'remote']);
  });

  test('remote machines: host:port of power rpc servers, separated by commas or spaces', () => {
    const two = checkLoadFields({ contextSize: '', threads: '', gpuLayers: '', remote: ' 192.168.1.20:50052, gpu-box.lan:50053 ' });
    assert.deepEqual(two.ok && two.rpc, ['192.168.1.20:50052', 'gpu-box.lan:50053']);
    for (const remote of ['192.168.1.20', 'host:port', 'a:70000', 'http://h:1']) {
      const r = checkLoadFields({ contextSize: '', threads: '', gpuLayers: '', remote });
      assert.equal(r.ok, false, remote);
      if (!r.ok) assert.match(r.errors.remote!, /host:port of a running power rpc/);
    }
  });

  test('a download’s progress and state in words', () => {
    const d: DownloadEntry = {
      id: 'd',
      url: 'http://x/a.gguf',
      fileName: 'a.gguf',
      path: '/p/a.gguf',
      state: 'running',
      receivedBytes: 512 * 1024,
      totalBytes: 2 * 1024 * 1024,
      resumedFromBytes: 0,
      error: null,
      sha256: null,
      modelId: null,
      startedAt: '2026-01-01T00:00:00.000Z',
    };
    assert.equal(downloadPercent(d), 25);
    assert.equal(downloadPercent({ ...d, totalBytes: null }), null);
    assert.equal(downloadLine(d), '512 KiB of 2.0 MiB');
    assert.equal(downloadLine({ ...d, state: 'done', modelId: 'm' }), 'downloaded and added to the library');
    assert.equal(downloadLine({ ...d, state: 'cancelled' }), 'cancelled (the partial file was removed)');
    assert.equal(
      downloadLine({ ...d, state: 'failed', error: { code: 'network', message: 'network: ENOTFOUND', resumable: true } }),
      'failed: network: ENOTFOUND (Download again resumes it)',
    );
    const later = { ...d, id: 'e', startedAt: '2026-01-02T00:00:00.000Z' };
    assert.equal(latestByFile([later, d]).get('a.gguf')!.id, 'e');
    assert.match(approxSize(RECOMMENDED_PAIRS.find((p) => p.draft !== null)!), /^about \d+\.\d GB$/);
  });
});
