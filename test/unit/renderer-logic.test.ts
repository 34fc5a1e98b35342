// The renderer's pure pieces (no engine, no DOM): formatting, error advice, what the pickers
// offer, the Custom K/S form, sampling settings, live replies, A/B, the report, frame batching.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { abVerdict, compareAb, type AbSide } from '../../renderer/src/logic/ab.js';
import { PREFILL_BAND } from '../../app/contract/report/prefill.js';
import { describeError } from '../../renderer/src/logic/advice.js';
import { checkCustomProfile, customProfileName } from '../../renderer/src/logic/custom-profile.js';
import { draftFileOptions, draftMethodOptions, settleChoice } from '../../renderer/src/logic/draft-options.js';
import { createFrameBatcher } from '../../renderer/src/logic/frame-batch.js';
import {
  bytes,
  decodeRate,
  duration,
  engineEvidence,
  percent,
  promptFigure,
  shortDigest,
  tokensPerSecond,
} from '../../renderer/src/logic/format.js';
import { decodeSeries, formatPart, positionBars, prettyJsonReply, rollingAcceptance } from '../../renderer/src/logic/reply.js';
import { base64Bytes, replyRows, reportable } from '../../renderer/src/logic/report.js';
import { ENVIRONMENT, sampleChat } from '../fixtures/chats.js';
import { checkSampling, DEFAULT_SAMPLING_FORM } from '../../renderer/src/logic/sampling.js';
import { applyLiveEvents } from '../../renderer/src/store/chats.js';
import { parseGpuLayers } from '../../renderer/src/store/library.js';
import type { LiveEvent } from '../../renderer/src/store/types.js';
import type { ApiRound, AssistantMessage, ReplyStats, Strategies } from '../../renderer/src/api-types.js';
import { ChatSampling } from '../../app/contract/api/chats.js';
import { K_MAX } from '../../app/contract/profile.js';

/** Stats as the service sends them (built loosely so issue 8's rename of the decode-rate field only touches format.ts). */
function stats(over: Record<string, unknown> = {}): ReplyStats {
  return {
    promptTokens: 10,
    ttftMs: 12,
    prefillTokensPerSecond: 500,
    decodeTokensPerSecondMedian: 100,
    requestTokensPerSecond: 80,
    proposed: 20,
    accepted: 15,
    rounds: 5,
    replays: 0,
    clampedTo: null,
    acceptanceRate: 0.75,
    meanAcceptanceLength: 4,
    acceptancePerPosition: [1, 0.8, 0.6, 0.6],
    reusedPromptTokens: 0,
    evaluatedPromptTokens: 10,
    ...over,
  } as unknown as ReplyStats;
}

function round(index: number, endUs: number, tokens: number): ApiRound {
  return {
    index,
    proposed: 4,
    accepted: tokens - 1,
    replay: false,
    clampedTo: null,
    tokenIds: Array(tokens).fill(1),
    origins: [],
    startUs: 0,
    endUs,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
  };
}

const ALL_AVAILABLE: Strategies = {
  none: { available: true },
  ngram: { available: true },
  suffix: { available: true },
  'draft-model': { available: false, reason: 'needs --draft' },
  mtp: { available: false, reason: 'the model has no NextN/MTP layers (nextn_predict_layers = 0)' },
  dflash: { available: false, reason: 'needs a dflash artifact' },
  eagle3: { available: false, reason: 'needs an eagle3 artifact' },
  dspark: { available: false, reason: 'needs a dspark artifact' },
  'ngram-simple': { available: true },
  'ngram-map-k': { available: true },
  'ngram-map-k4v': { available: true },
  'ngram-mod': { available: true },
  'ngram-cache': { available: true },
};
// llama.cpp's n-gram families: offered on every target, after the strategies above
const LLAMA_NGRAMS = ['ngram-simple', 'ngram-map-k', 'ngram-map-k4v', 'ngram-mod', 'ngram-cache'];

describe('formatting', () => {
  test('a missing figure is a dash, never 0 or NaN', () => {
    for (const f of [percent, duration, tokensPerSecond, bytes]) {
      assert.equal(f(null), '—');
      assert.equal(f(Number.NaN), '—');
    }
    assert.equal(shortDigest(null), '—');
  });
  test('figures read in their units', () => {
    assert.equal(percent(0.625), '62.5%');
    assert.equal(percent(1), '100.0%');
    assert.equal(duration(0.5), '500 µs');
    assert.equal(duration(12.34), '12 ms');
    assert.equal(duration(2500), '2.50 s');
    assert.equal(tokensPerSecond(42.26), '42.3 tok/s');
    assert.equal(tokensPerSecond(312.7), '313 tok/s');
    assert.equal(bytes(1536), '1.5 KiB');
    assert.equal(bytes(3 * 1024 ** 3), '3.0 GiB');
    assert.equal(shortDigest(`sha256:${'ab'.repeat(32)}`), 'abababab…abab');
  });
  test('the prompt figure names the reused tokens and the images the projector encoded, only when there are some', () => {
    assert.equal(promptFigure(stats()), '10 tokens');
    assert.equal(promptFigure(stats({ promptTokens: 300, reusedPromptTokens: 280 })), '300 tokens · 280 kept from the previous request');
    assert.equal(promptFigure(stats({ imagesEncoded: 2 })), '10 tokens · 2 images encoded');
    assert.equal(promptFigure(stats({ imagesEncoded: 1 })), '10 tokens · 1 image encoded');
    assert.equal(
      promptFigure(stats({ promptTokens: 600, reusedPromptTokens: 590, imagesEncoded: 0 })),
      '600 tokens · 590 kept from the previous request · no image encoded (all kept)',
    );
    assert.equal(promptFigure(null), '—');
  });
  test('the decode rate is read from the stats', () => {
    assert.equal(decodeRate(stats({ decodeTokensPerSecondMedian: 321 })), 321);
    assert.equal(decodeRate(null), null);
  });

  test('the engine evidence says whether the kernels were batch-invariant', () => {
    assert.deepEqual(engineEvidence(ENVIRONMENT.backend), { text: 'cpu, Flash Attention off, batch-invariant', exact: true });
    const flagged = engineEvidence({ ...ENVIRONMENT.backend, flavour: 'cpu-prebuilt', flashAttn: 'on', batchInvariant: false });
    assert.equal(flagged.exact, false);
    assert.match(flagged.text, /^cpu-prebuilt, Flash Attention on, not batch-invariant: may differ from the control at near-ties$/);
    assert.deepEqual(engineEvidence(undefined), { text: '—', exact: null });
  });
});

describe('error advice', () => {
  test('each API error code says what to do', () => {
    const n = describeError('Loading the model', { code: 'unsupported', message: 'the draft is incompatible: vocabulary differs' });
    assert.equal(n.code, 'unsupported');
    assert.equal(n.message, 'the draft is incompatible: vocabulary differs');
    assert.match(n.action, /another draft method/);
    assert.match(describeError('Sending', { code: 'engine-crashed', message: 'x' }).action, /reloads/);
    assert.match(describeError('Sending', { code: 'busy', message: 'x' }).action, /Stop/);
  });
  test('anything else thrown becomes an internal error with its message', () => {
    const n = describeError('Sending', new Error('socket hang up'));
    assert.equal(n.code, 'internal');
    assert.equal(n.message, 'socket hang up');
    assert.equal(describeError('x', { code: 'no-such-code', message: 'm' }).code, 'internal');
  });
});

describe('draft method and draft model pickers', () => {
  test('an attention-only target without drafts offers none and the n-gram strategies only', () => {
    const options = draftMethodOptions(ALL_AVAILABLE, []);
    assert.deepEqual(
      options.map((o) => o.value),
      ['none', 'ngram', 'suffix', ...LLAMA_NGRAMS],
    );
    assert.ok(options.every((o) => !o.disabled));
  });
  test('mtp is offered when the target has NextN layers', () => {
    const options = draftMethodOptions({ ...ALL_AVAILABLE, mtp: { available: true } }, []);
    assert.deepEqual(
      options.map((o) => o.value),
      ['none', 'ngram', 'suffix', 'mtp', ...LLAMA_NGRAMS],
    );
  });
  test('draft-model appears with compatible drafts; incompatible drafts are disabled with their reason', () => {
    const drafts = [
      { modelId: 'a', name: 'draft-close', strategy: 'draft-model', compatible: true },
      { modelId: 'b', name: 'draft-badvocab', strategy: 'draft-model', compatible: false, reason: 'the vocabularies differ' },
    ];
    assert.deepEqual(
      draftMethodOptions(ALL_AVAILABLE, drafts).map((o) => o.value),
      ['none', 'ngram', 'suffix', 'draft-model', ...LLAMA_NGRAMS],
    );
    const files = draftFileOptions('draft-model', drafts, ALL_AVAILABLE);
    assert.deepEqual(files[0], { value: 'a', label: 'draft-close', disabled: false });
    assert.equal(files[1]!.disabled, true);
    assert.equal(files[1]!.reason, 'the vocabularies differ');
    assert.match(files[1]!.label, /vocabularies differ/);
    assert.deepEqual(draftFileOptions('ngram', drafts, ALL_AVAILABLE), []);
  });
  test('a draft strategy with only incompatible drafts is disabled with the reason; an artifact strategy with a compatible one is offered', () => {
    const options = draftMethodOptions(ALL_AVAILABLE, [
      { modelId: 'b', name: 'bad', strategy: 'draft-model', compatible: false, reason: 'the vocabularies differ' },
      { modelId: 'c', name: 'eagle', strategy: 'eagle3', compatible: true },
    ]);
    const dm = options.find((o) => o.value === 'draft-model')!;
    assert.equal(dm.disabled, true);
    assert.match(dm.reason!, /vocabularies differ/);
    const eagle = options.find((o) => o.value === 'eagle3')!;
    assert.equal(eagle.disabled, false);
  });
  test('mtp is offered with a Gemma 4 assistant from the library when the target has no NextN layers', () => {
    const drafts = [
      { modelId: 'g', name: 'gemma4-assistant', strategy: 'mtp', compatible: true },
      { modelId: 'h', name: 'other-assistant', strategy: 'mtp', compatible: false, reason: 'another window' },
    ];
    const mtp = draftMethodOptions(ALL_AVAILABLE, drafts).find((o) => o.value === 'mtp');
    assert.deepEqual(mtp, { value: 'mtp', label: 'mtp', disabled: false });
    const files = draftFileOptions('mtp', drafts, ALL_AVAILABLE);
    assert.deepEqual(files[0], { value: 'g', label: 'gemma4-assistant', disabled: false });
    assert.equal(files[1]!.disabled, true);
    // a target with NextN layers drafts with its own: no assistant is asked for
    assert.deepEqual(draftFileOptions('mtp', drafts, { ...ALL_AVAILABLE, mtp: { available: true } }), []);
    // only assistants or sidecars made for other models: mtp is no option of this target at all
    assert.equal(
      draftMethodOptions(ALL_AVAILABLE, drafts.slice(1)).some((o) => o.value === 'mtp'),
      false,
    );
  });
  test('the choice is kept while usable, otherwise the first usable option is taken', () => {
    const options = draftMethodOptions(ALL_AVAILABLE, []);
    assert.equal(settleChoice('ngram', options), 'ngram');
    assert.equal(settleChoice('mtp', options), 'none');
    assert.equal(settleChoice(null, []), null);
  });
  test('GPU layers: empty is all, a negative other than -1 or a fraction is refused', () => {
    assert.equal(parseGpuLayers(''), -1);
    assert.equal(parseGpuLayers('12'), 12);
    assert.equal(parseGpuLayers('-2'), null);
    assert.equal(parseGpuLayers('1.5'), null);
  });
});

describe('Custom profile form', () => {
  test('K must be a whole number from 1 to K_MAX', () => {
    for (const k of ['0', String(K_MAX + 1), '', '2.5', 'seven', '-1']) {
      const r = checkCustomProfile(k, '', true);
      assert.equal(r.ok, false, k);
      if (!r.ok) assert.match(r.kError!, /K must be/);
    }
    assert.deepEqual(checkCustomProfile(' 5 ', '', true), { ok: true, k: 5, s: null });
  });
  test('S must not exceed K on a recurrent target', () => {
    const r = checkCustomProfile('4', '6', true);
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.kError, null);
      assert.match(r.sError!, /must not exceed K \(4\)/);
    }
    assert.deepEqual(checkCustomProfile('7', '6', true), { ok: true, k: 7, s: 6 });
    assert.deepEqual(checkCustomProfile('7', '0', true), { ok: true, k: 7, s: 0 });
  });
  test('S does not apply to an attention-only target: it is ignored, never an error', () => {
    assert.deepEqual(checkCustomProfile('3', '99', false), { ok: true, k: 3, s: null });
  });
  test('custom profiles are named by their K/S', () => {
    assert.equal(customProfileName(5, 3), 'Custom K5/S3');
    assert.equal(customProfileName(5, null), 'Custom K5');
  });
});

describe('sampling settings', () => {
  test('the defaults pass and empty fields are left to the service', () => {
    const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, seed: '' });
    assert.ok(r.ok);
    if (r.ok) {
      assert.equal(r.sampling.temperature, 0);
      assert.equal('seed' in r.sampling, false);
    }
  });
  test('a bad value is refused with the field name', () => {
    const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, topP: '1.5', maxTokens: 'lots' });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.errors.topP, 'Top-p must be a number above 0, at most 1.');
      assert.equal(r.errors.maxTokens, 'Max tokens must be a whole number from 1 to 1000000.');
    }
    const seed = checkSampling({ ...DEFAULT_SAMPLING_FORM, seed: '1.5' });
    assert.equal(seed.ok, false);
  });
  test('reply format: text sends no schema, JSON sends the format and a schema that is a JSON object, or refuses it', () => {
    const text = checkSampling({ ...DEFAULT_SAMPLING_FORM, jsonSchema: '{"type": "array"}' });
    assert.ok(text.ok && text.sampling.format !== 'json' && !('jsonSchema' in text.sampling), 'a schema under Text is not sent');
    const json = checkSampling({ ...DEFAULT_SAMPLING_FORM, format: 'json' });
    assert.deepEqual(json.ok && [json.sampling.format, json.sampling.jsonSchema], ['json', undefined]);
    const schema = checkSampling({ ...DEFAULT_SAMPLING_FORM, format: 'json', jsonSchema: ' {"type": "object"} ' });
    assert.deepEqual(schema.ok && schema.sampling.jsonSchema, '{"type": "object"}');
    for (const bad of ['{"type": ', '[1, 2]', '"object"']) {
      const r = checkSampling({ ...DEFAULT_SAMPLING_FORM, format: 'json', jsonSchema: bad });
      assert.ok(!r.ok && r.errors.jsonSchema === 'JSON schema must be a JSON object, or empty for any JSON object.', bad);
    }
  });
});

describe('JSON replies', () => {
  const sampling = (over: object) => ({ ...ChatSampling.parse({}), seed: null, ...over }) as AssistantMessage['sampling'];
  test('a whole JSON reply of a JSON chat is pretty-printed; free text, an unfinished reply or a text chat is not', () => {
    assert.equal(prettyJsonReply(sampling({ format: 'json' }), '{"a":1,"b":[true]}'), '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
    assert.equal(prettyJsonReply(sampling({ format: 'json' }), '{"a":'), null);
    assert.equal(prettyJsonReply(sampling({}), '{"a":1}'), null);
    assert.equal(prettyJsonReply(undefined, '{"a":1}'), null);
  });
  test('the evidence names the format', () => {
    assert.equal(formatPart(sampling({ format: 'json' })), 'JSON');
    assert.equal(formatPart(sampling({ format: 'json', jsonSchema: '{}' })), 'JSON schema');
    assert.equal(formatPart(sampling({})), null);
  });
});

describe('live replies', () => {
  const streamed = (r: ApiRound, ids: number[], texts: string[], origins: ApiRound['origins']) => ({ ...r, tokenIds: ids, texts, origins });
  /** One live event of message m in chat c: the rounds it streams, the text they add, the stats so far. */
  const event = (rounds: LiveEvent['rounds'], text: string, accepted: number): LiveEvent => ({
    chatId: 'c',
    messageId: 'm',
    rounds,
    text,
    stats: stats({ accepted }),
  });
  test('one frame of batches appends tokens and rounds in order and keeps the latest stats', () => {
    const before = {};
    const after = applyLiveEvents(before, [
      event([streamed(round(1, 1000, 1), [1], ['He'], ['target'])], 'He', 0),
      event([], '', 0),
      event([streamed(round(2, 2000, 1), [2], ['llo'], ['accepted'])], 'llo', 1),
    ]);
    assert.deepEqual(before, {}, 'the previous state is not mutated');
    const reply = after['m']!;
    assert.equal(reply.status, 'streaming');
    assert.deepEqual(
      reply.tokens.map((t) => t.text),
      ['He', 'llo'],
    );
    assert.deepEqual(
      reply.tokens.map((t) => [t.id, t.origin, t.round]),
      [
        [1, 'target', 1],
        [2, 'accepted', 2],
      ],
    );
    assert.equal(reply.rounds.length, 2);
    assert.equal('texts' in reply.rounds[0]!, false, 'rounds are stored without their texts (the tokens hold them)');
    assert.equal(reply.stats!.accepted, 1);
    const next = applyLiveEvents(after, [event([streamed(round(3, 3000, 1), [3], ['!'], ['bonus'])], '!', 1)]);
    assert.equal(after['m']!.tokens.length, 2, 'earlier snapshots stay as they were');
    assert.equal(next['m']!.tokens.length, 3);
    const tail = applyLiveEvents(next, [event([], '\uFFFD', 1)]);
    assert.equal(tail['m']!.tokens.at(-1)!.text, '!\uFFFD', 'the tail of an unfinished character joins the last token');
  });
  test('decode rate per round is tokens over the time since the previous round', () => {
    assert.deepEqual(decodeSeries([round(1, 1000, 1), round(2, 3000, 4), round(3, 7000, 2)]), [2000, 500]);
    assert.deepEqual(decodeSeries([round(1, 1000, 1)]), []);
  });
  test('rolling acceptance pools proposals across replies', () => {
    assert.equal(rollingAcceptance([stats({ proposed: 10, accepted: 5 }), null, stats({ proposed: 30, accepted: 25 })]), 0.75);
    assert.equal(rollingAcceptance([stats({ proposed: 0, accepted: 0 })]), null);
  });
  test('there are K position bars, empty where no round reached the position', () => {
    assert.deepEqual(positionBars([1, 0.5], 4), [1, 0.5, null, null]);
    assert.deepEqual(positionBars([1, 0.5, 0.2], null), [1, 0.5, 0.2]);
  });
});

describe('A/B and the report', () => {
  const side = (over: Partial<AbSide>): AbSide => ({
    messageId: 'm',
    profile: 'Balanced',
    strategy: 'draft-model',
    k: 7,
    s: null,
    digest: 'sha256:aa',
    stats: stats(),
    tokens: 32,
    ...over,
  });
  test('speedup is the ratio of steady decode rates; digests are compared', () => {
    const r = compareAb(
      side({ stats: stats({ decodeTokensPerSecondMedian: 150, requestTokensPerSecond: 120 }) }),
      side({ strategy: 'none', stats: stats({ decodeTokensPerSecondMedian: 100, requestTokensPerSecond: 100 }) }),
    );
    assert.equal(r.decodeSpeedup, 1.5);
    assert.equal(r.requestSpeedup, 1.2);
    assert.equal(r.digestsMatch, true);
    assert.equal(compareAb(side({}), side({ digest: 'sha256:bb' })).digestsMatch, false);
    assert.equal(compareAb(side({}), side({ stats: null })).decodeSpeedup, null);
  });

  // issue 55: ngram K7 on the real model, the control on a cold session, the speculative reply on a warm one
  const cold = stats({ ttftMs: 2484, promptTokens: 2048, evaluatedPromptTokens: 2048, reusedPromptTokens: 0, prefillTokensPerSecond: 824 });
  const warm = stats({ ttftMs: 631, promptTokens: 2048, evaluatedPromptTokens: 2048, reusedPromptTokens: 0, prefillTokensPerSecond: 3245 });

  test('a cold prefill against a warm one makes no request-wide speedup claim: the verdict says why, with both times to first token', () => {
    const r = compareAb(
      side({ strategy: 'ngram', stats: { ...warm, decodeTokensPerSecondMedian: 120, requestTokensPerSecond: 30 } as ReplyStats }),
      side({ strategy: 'none', stats: { ...cold, decodeTokensPerSecondMedian: 100, requestTokensPerSecond: 8.4 } as ReplyStats }),
    );
    assert.equal(r.decodeSpeedup, 1.2);
    assert.equal(r.requestSpeedup, null, 'the 3.57× of the two prefills is no speculation figure');
    assert.equal(r.prefill.alike, false);
    const v = abVerdict(r);
    assert.equal(v.speed, '1.2× faster');
    assert.equal(
      v.request,
      'no request-wide speedup: the prefills differ (prefill at 3245 tok/s vs 824 tok/s, 2048 prompt tokens each; ' +
        'time to first token 631 ms vs 2.48 s), and a ratio over the whole request would measure them, not the speculation',
    );
    assert.doesNotMatch(v.request, /faster|slower/);
  });

  test('prompt tokens kept on one side only: no request-wide speedup, the counts say why', () => {
    const kept = stats({
      ttftMs: 90,
      promptTokens: 2048,
      evaluatedPromptTokens: 48,
      reusedPromptTokens: 2000,
      prefillTokensPerSecond: 800,
    });
    const r = compareAb(side({ stats: kept }), side({ strategy: 'none', stats: { ...warm, prefillTokensPerSecond: 800 } as ReplyStats }));
    assert.equal(r.requestSpeedup, null);
    assert.equal(r.prefill.why, '48 vs 2048 prompt tokens evaluated, 2000 vs 0 kept from the previous request');
    // a reply saved before the counts were recorded is judged as the chat's JSON export judges it
    // (app/contract/report/prefill.ts): by its time to first token and prefill rate
    const unrecordedStats = stats({ evaluatedPromptTokens: null, reusedPromptTokens: null, ttftMs: 40 });
    const unrecorded = compareAb(side({ stats: unrecordedStats }), side({ strategy: 'none' }));
    assert.equal(unrecorded.requestSpeedup, null);
    assert.match(
      abVerdict(unrecorded).request,
      /^no request-wide speedup: the prefills differ \(the prompt tokens each side evaluated are not recorded, and the times to first token or the prefill rates are more than 1\.25× apart; time to first token 40 ms vs 12 ms\)/,
    );
    assert.equal(compareAb(side({ stats: { ...unrecordedStats, ttftMs: 12 } }), side({ strategy: 'none' })).prefill.alike, true);
  });

  test(`alike prefills (same tokens, rates within ${PREFILL_BAND}×) keep the request-wide ratio, with both times to first token`, () => {
    const r = compareAb(
      side({ stats: stats({ decodeTokensPerSecondMedian: 150, requestTokensPerSecond: 120, prefillTokensPerSecond: 520, ttftMs: 20 }) }),
      side({
        strategy: 'none',
        stats: stats({ decodeTokensPerSecondMedian: 100, requestTokensPerSecond: 100, prefillTokensPerSecond: 480, ttftMs: 21 }),
      }),
    );
    assert.equal(r.requestSpeedup, 1.2);
    assert.deepEqual(r.prefill, { alike: true, why: null });
    assert.equal(abVerdict(r).request, 'request-wide 1.2× faster (prefills alike; time to first token 20 ms vs 21 ms)');
    // nothing evaluated on either side (the whole prompt kept): no prefill to differ
    const none = stats({ evaluatedPromptTokens: 0, reusedPromptTokens: 10, prefillTokensPerSecond: null });
    assert.equal(compareAb(side({ stats: none }), side({ strategy: 'none', stats: none })).prefill.alike, true);
  });
});

describe('the Report tab', () => {
  test("lists the chat's replies in conversation order, replaced ones before the one shown, and counts the reportable ones", async () => {
    const chat = await sampleChat();
    assert.deepEqual(
      replyRows(chat).map((r) => [r.message.id, r.turn, r.superseded]),
      [
        ['s1', 1, true],
        ['c1', 1, false],
        ['s2', 2, true],
        ['p2', 2, false],
        ['e3', 3, false],
      ],
    );
    assert.equal(reportable(replyRows(chat)), 4, 'the failed reply is not reportable');
    assert.deepEqual(replyRows(null), []);
  });
  test("decodes an export's base64 to its bytes", () => {
    const bytes = Buffer.from('%PDF-1.4\n\u00ff', 'latin1');
    assert.deepEqual(Buffer.from(base64Bytes(bytes.toString('base64'))), bytes);
  });
});

describe('frame batching', () => {
  test('everything pushed before a frame is delivered once, in order', () => {
    const frames: Array<() => void> = [];
    const delivered: number[][] = [];
    const batcher = createFrameBatcher<number>(
      (items) => delivered.push(items),
      (cb) => frames.push(cb),
    );
    for (let i = 0; i < 500; i++) batcher.push(i);
    assert.equal(frames.length, 1, 'one frame is scheduled for many tokens');
    frames.shift()!();
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]!.length, 500);
    batcher.push(500);
    batcher.flush();
    assert.deepEqual(delivered[1], [500]);
    frames.shift()!();
    assert.equal(delivered.length, 2, 'a frame after a flush delivers nothing');
  });
});
