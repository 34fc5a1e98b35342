// Stop strings: held back while they may still match, cut where they do. StopStrings itself, then
// the one place replies end at them, runRequest (app/service/request.ts), over a scripted engine:
// a marker split across token pieces and across the engine's batches, inside a speculative
// round, after a character split across pieces; and which stop strings a conversation asks for
// (the ChatML fallback's end of turn unless the model has it as its end-of-generation token).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import type { RoundRecord } from '../../app/contract/engine-types.js';
import type { NativeModelInfo } from '../../app/engine/protocol.js';
import type { EngineClient } from '../../app/engine/client.js';
import { CHATML_END, Conversation } from '../../app/service/conversation.js';
import { runRequest, type RoundsBatch } from '../../app/service/request.js';
import { StopStrings } from '../../app/service/stop-strings.js';
import { SAMPLING_DEFAULTS } from '../../app/contract/engine-types.js';

function run(stops: string[], pieces: string[]): { shown: string[]; stopped: boolean } {
  const s = new StopStrings(stops);
  const shown = pieces.map((p) => s.push(p));
  shown.push(s.flush());
  return { shown, stopped: s.stopped };
}

describe('StopStrings', () => {
  test('without stop sequences text passes straight through', () => {
    assert.deepEqual(run([], ['a', 'b']), { shown: ['a', 'b', ''], stopped: false });
  });

  test('a stop sequence split over pieces ends the reply before it; nothing after it is shown', () => {
    assert.deepEqual(run(['\nUser:'], ['Hello', '\nUs', 'er: more', 'x']), { shown: ['Hello', '', '', '', ''], stopped: true });
  });

  test('a held-back prefix that does not complete is released', () => {
    assert.deepEqual(run(['STOP'], ['ab S', 'To', 'p', 'ST']), { shown: ['ab ', 'STo', 'p', '', 'ST'], stopped: false });
  });

  test('the earliest of several stop sequences wins, and says which it was', () => {
    const s = new StopStrings(['cd', 'b']);
    assert.equal(s.push('abcd'), 'a');
    assert.equal(s.stop, 'b');
    assert.equal(s.flush(), '');
  });
});

// --- runRequest over a scripted engine ------------------------------------------------------

const enc = new TextEncoder();

interface ScriptedToken {
  id: number;
  piece: string | Uint8Array<ArrayBuffer>;
}

/** one round: its tokens (the first a target token, the rest accepted proposals) */
type ScriptedRound = ScriptedToken[];

/**
 * An engine whose generate hands over `batches` (each batch in its own task, as the engine
 * client does) until cancelled, then answers like the engine: cancelled, or max-tokens.
 */
function scriptedEngine(batches: ScriptedRound[][]): { engine: EngineClient; cancels: () => number; delivered: () => number } {
  let listener: ((round: RoundRecord) => void) | null = null;
  let cancelled = 0;
  let delivered = 0;
  const roundOf = (tokens: ScriptedRound): RoundRecord => ({
    type: 'round',
    proposed: tokens.length - 1,
    accepted: tokens.length - 1,
    replay: false,
    clampedTo: null,
    startUs: 0,
    endUs: 1,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
    tokens: tokens.map((t, i) => ({
      id: t.id,
      piece: typeof t.piece === 'string' ? enc.encode(t.piece) : t.piece,
      origin: i === 0 ? 'target' : 'accepted',
    })),
  });
  const engine = {
    onRound(_id: string, l: (round: RoundRecord) => void) {
      listener = l;
      return () => {
        listener = null;
      };
    },
    async call(method: string) {
      if (method === 'cancel') {
        cancelled++;
        return {};
      }
      assert.equal(method, 'generate');
      let generated = 0;
      for (const batch of batches) {
        // the engine stops at its next round once cancelled: a batch already committed still arrives
        if (cancelled > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
        for (const round of batch) {
          listener?.(roundOf(round));
          generated += round.length;
        }
        delivered++;
      }
      return {
        stopReason: cancelled > 0 ? 'cancelled' : 'max-tokens',
        replays: 0,
        clampedTo: null,
        promptTokens: 3,
        reusedTokens: 0,
        prefillUs: 1,
        totalUs: 2,
        generated,
        sampling: { path: 'cpu', reason: null },
      };
    },
  };
  return { engine: engine as unknown as EngineClient, cancels: () => cancelled, delivered: () => delivered };
}

async function generate(batches: ScriptedRound[][], stops: string[]) {
  const scripted = scriptedEngine(batches);
  const sunk: RoundsBatch[] = [];
  const outcome = await runRequest(
    scripted.engine,
    { sessionId: 's', prompt: [1, 2, 3], maxTokens: 100, sampling: SAMPLING_DEFAULTS, stops },
    { sink: (b) => sunk.push(b), keepRounds: true },
  );
  const streamedText = sunk.map((b) => b.text).join('');
  const tokenTexts = sunk.flatMap((b) => b.rounds.flatMap((r) => r.texts));
  const streamedIds = sunk.flatMap((b) => b.rounds.flatMap((r) => r.tokenIds));
  return { outcome, sunk, streamedText, tokenTexts, streamedIds, cancels: scripted.cancels(), delivered: scripted.delivered() };
}

const tok = (id: number, piece: string | Uint8Array<ArrayBuffer>): ScriptedRound => [{ id, piece }];

describe('runRequest ends a reply at a stop string', () => {
  test('a marker split over token pieces and over two batches: the text stops before it, the tokens with the one that completes it', async () => {
    const r = await generate(
      [
        [tok(10, 'Hi'), tok(11, ' there'), tok(12, '.<')],
        [tok(13, '|im'), tok(14, '_end')],
        [tok(15, '|>\n'), tok(16, '<|im_start|>user')],
        [tok(17, '\nmore')],
      ],
      [CHATML_END],
    );
    assert.equal(r.outcome.text, 'Hi there.');
    assert.equal(r.outcome.stopReason, 'stop');
    assert.equal(r.outcome.stop, CHATML_END);
    assert.deepEqual(r.outcome.tokens, [10, 11, 12, 13, 14, 15]);
    assert.equal(r.outcome.tokensText, 'Hi there.<|im_end|>\n');
    // what streamed is the reply: every token's text adds up to it, the marker is nowhere
    assert.equal(r.streamedText, 'Hi there.');
    assert.equal(r.tokenTexts.join(''), 'Hi there.');
    assert.deepEqual(r.tokenTexts, ['Hi', ' there', '.', '', '', '']);
    assert.deepEqual(r.streamedIds, r.outcome.tokens);
    assert.ok(
      r.sunk.every((b) => !b.text.includes('<|')),
      JSON.stringify(r.sunk.map((b) => b.text)),
    );
    // the engine was cancelled once, and its last batch never reached the reply
    assert.equal(r.cancels, 1);
    assert.equal(r.delivered, 3);
    assert.equal(r.outcome.stats.promptTokens, 3);
  });

  test('inside a speculative round: the round ends with the token that completes the marker, the rest is dropped', async () => {
    const r = await generate(
      [
        [
          [
            { id: 1, piece: 'Yes' },
            { id: 2, piece: '<|im_' },
            { id: 3, piece: 'end|>' },
            { id: 4, piece: ' after' },
          ],
        ],
        [tok(5, 'never')],
      ],
      [CHATML_END],
    );
    assert.equal(r.outcome.text, 'Yes');
    assert.deepEqual(r.outcome.tokens, [1, 2, 3]);
    assert.deepEqual(
      r.outcome.rounds.map((x) => x.tokens.map((t) => t.id)),
      [[1, 2, 3]],
    );
    assert.deepEqual(r.sunk[0]!.rounds[0]!.tokenIds, [1, 2, 3]);
    assert.equal(r.outcome.stopReason, 'stop');
  });

  test('a character split over pieces right before the marker is shown whole; a prefix that never completes is released at the end', async () => {
    const euro = enc.encode('€');
    const cut = await generate(
      [[tok(1, euro.subarray(0, 2)), tok(2, Uint8Array.of(...euro.subarray(2), ...enc.encode('<|im_e'))), tok(3, 'nd|>')]],
      [CHATML_END],
    );
    assert.equal(cut.outcome.text, '€');
    assert.deepEqual(cut.tokenTexts, ['', '€', '']);
    // "<|im" could still become the marker until the reply ends: then it is the reply's, as a tail
    const open = await generate([[tok(1, 'a <|'), tok(2, 'im')]], [CHATML_END]);
    assert.equal(open.outcome.text, 'a <|im');
    assert.equal(open.outcome.stopReason, 'max-tokens');
    assert.equal(open.outcome.stop, null);
    assert.deepEqual(open.tokenTexts, ['a ', '']);
    const last = open.sunk.at(-1)!;
    assert.deepEqual([last.rounds, last.text], [[], '<|im']);
    assert.equal(open.streamedText, 'a <|im');
    assert.equal(open.cancels, 0);
  });

  test('without stop strings every token and its text pass as they come', async () => {
    const r = await generate([[tok(1, 'a<|im_end|>b')], [tok(2, 'c')]], []);
    assert.equal(r.outcome.text, 'a<|im_end|>bc');
    assert.equal(r.outcome.tokensText, r.outcome.text);
    assert.equal(r.outcome.stopReason, 'max-tokens');
    assert.equal(r.cancels, 0);
  });
});

describe('the stop strings of a conversation', () => {
  const info = (chatTemplate: string | null) => ({ bos: 1, eos: 2, eot: 7, addBos: true, chatTemplate }) as unknown as NativeModelInfo;
  const engineTokenizing = (ids: number[]) =>
    ({ call: async (method: string) => (method === 'tokenize' ? Int32Array.from(ids) : '') }) as unknown as EngineClient;

  test('the ChatML fallback ends its turn at <|im_end|> unless the model has it as its EOS or EOT token', async () => {
    // Gemma 3 270M: <|im_end|> is six pieces of text
    assert.deepEqual(await new Conversation(engineTokenizing([236820, 236909, 548, 236779, 643, 111038]), 'm', info(null)).stops(), [
      CHATML_END,
    ]);
    // one token, but not one the engine stops at: still a stop string
    assert.deepEqual(await new Conversation(engineTokenizing([151645]), 'm', info(null)).stops(), [CHATML_END]);
    assert.deepEqual(await new Conversation(engineTokenizing([7]), 'm', info(null)).stops(), []);
    assert.deepEqual(await new Conversation(engineTokenizing([2]), 'm', info(null)).stops(), []);
    // the model's own template: its end of turn is the model's business
    assert.deepEqual(await new Conversation(engineTokenizing([99]), 'm', info('{{ messages }}')).stops(), []);
  });
});
