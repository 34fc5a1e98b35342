// Sliding-window targets under rollback, on the real Gemma 3 270M (a 512-cell window on five of
// every six blocks, llama.cpp's iSWA cache): a conversation of several turns, far longer than
// the window, through draft-model K7 (an early-exit draft of the model's first 3 blocks with its
// embeddings and head: seven proposals every round, a rejection in nearly every one) with seeded
// sampling, against the autoregressive control. After each turn the KV cache's
// used cells, read from llama.cpp's memory (engine method memoryCells), are exactly the
// positions the session committed, in the full-attention and in the sliding-window cache: a
// rollback that left rejected rows behind in either (about K cells per rejecting round) would
// show at once and would run out of the 4,096-cell context within the test. Each turn's tokens
// equal the control's, and each turn after the first reuses the conversation's cached state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { EngineResult } from '../../app/engine/protocol.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type RequestOutcome } from '../../app/service/request.js';
import { disposeAndClose, GREEDY } from '../fixtures/engine-generate.js';
import { REAL_MODEL, REAL_SWA_WINDOW, realDraft, realModelSkip } from '../fixtures/real-model.js';

const skip = realModelSkip();
const CONTEXT = 4096;
const K = 7;
const REPLY_TOKENS = 180;
// a draft of the first 3 of 18 blocks: cheap rounds that reject often
const DRAFT_BLOCKS = 3;
// each turn brings a passage of its own (prompt positions are cheap: one batch), so that the
// conversation runs far past the window in a few hundred verify rounds per turn
const OPENING =
  'The following is a long conversation between a curious student and a patient teacher about the history of ' +
  'science, from the astronomers of Babylon to the physicists of the twentieth century. The teacher answers ' +
  'each question at length, with names, dates and the reasons why each discovery mattered, and the student ' +
  'reads a passage from a textbook before asking the next question.\n\nStudent: I read that the Babylonians ' +
  'kept records of the positions of the planets for centuries, written on clay tablets, and that they could ' +
  'predict eclipses of the moon. Where did astronomy begin, and why did they care so much about the sky?\nTeacher:';
const PASSAGES = [
  'Greek philosophers such as Thales, Pythagoras and Aristotle asked why the heavens move as they do, and ' +
    'Ptolemy of Alexandria wrote a book that described the motions of the sun, the moon and the planets with ' +
    'circles upon circles. His system was used for more than a thousand years. What did the Greeks add to the ' +
    'records of the Babylonians?',
  'After the fall of Rome much of the Greek learning was preserved and extended by scholars in Baghdad, Cairo ' +
    'and Cordoba, who translated the old books, built observatories and improved the instruments. Later these ' +
    'works were translated into Latin and taught in the first European universities. What happened to that ' +
    'knowledge in the Middle Ages?',
  'In 1543 Nicolaus Copernicus published a book in which the sun, not the earth, stood at the centre, and the ' +
    'earth turned once a day and went around the sun once a year. Few people accepted it at first, and it did not ' +
    'predict the planets much better than the old system. Why was Copernicus so important?',
  'Galileo Galilei turned a telescope to the sky in 1609 and saw the moons of Jupiter, the phases of Venus and ' +
    'the mountains of the moon. Johannes Kepler found that the planets move in ellipses, and Isaac Newton showed ' +
    'that one law of gravitation explains the fall of an apple and the orbit of the moon. Tell me about them.',
  'In 1905 Albert Einstein published papers on the light quantum, on the motion of small particles in water and ' +
    'on the electrodynamics of moving bodies, and ten years later his general theory of relativity described ' +
    'gravity as the curvature of space and time. What changed with Einstein?',
  'At the same time Max Planck, Niels Bohr, Werner Heisenberg and Erwin Schrodinger built quantum mechanics, ' +
    'which describes atoms and light in terms of probabilities, and which is the basis of chemistry, of ' +
    'electronics and of the lasers in every shop. How did quantum mechanics begin, and why was it so strange?',
  'Finally, astronomers such as Edwin Hubble found that the galaxies move away from each other, and in 1965 ' +
    'two engineers found the faint glow left over from the beginning of the universe. Looking back over the whole ' +
    'story, what does it teach us about how science works?',
];
const READING = `\n\nThe textbook's chapter, which the student has read:\n\n${PASSAGES.join('\n\n')}`;
const TURNS = PASSAGES.slice(0, 5).map((passage) => `\n\nStudent: ${passage}\nTeacher:`);
const SAMPLING: SamplingOptions = { ...GREEDY, temperature: 0.8, seed: 7 };

type Cells = EngineResult<'memoryCells'>;

describe('a sliding-window target under rollback: Gemma 3 270M, draft-model K7, a conversation past the window', { skip }, () => {
  let engine: EngineClient;
  let modelId = '';
  let draftModelId = '';

  before(async () => {
    engine = EngineClient.start();
    modelId = (await engine.call('loadModel', { path: REAL_MODEL, gpuLayers: 0 })).modelId;
    draftModelId = (await engine.call('loadModel', { path: await realDraft(DRAFT_BLOCKS), gpuLayers: 0 })).modelId;
  });

  after(() => disposeAndClose(engine, [modelId, draftModelId]));

  const tokenize = (text: string) => engine.call('tokenize', { modelId, text, addSpecial: false, parseSpecial: false });

  /** the KV cache holds exactly the positions 0..committed-1, one cell each, in both caches */
  function assertCellsAre(cells: Cells, committed: number, what: string): void {
    assert.equal(cells.kind, 'iswa', `${what}: Gemma 3's memory is the iSWA cache`);
    const positions = { size: CONTEXT, used: committed, posMin: 0, posMax: committed - 1 };
    assert.deepEqual(cells.base, positions, `${what}: the full-attention cache holds one cell per committed position`);
    // the session's sliding-window cache is full-size (swa_full, native/src/session.cpp): no
    // cell is reused, so it holds the same cells; a rollback that freed only the full-attention
    // rows would leave more here
    assert.deepEqual(cells.swa, positions, `${what}: the sliding-window cache holds one cell per committed position`);
    assert.deepEqual([cells.posMin, cells.posMax], [0, committed - 1], `${what}: llama_memory_seq_pos_min/_max`);
  }

  test('used cells stay the committed positions, every turn equals the control, and the next turn reuses the cache', async () => {
    const spec = await engine.call('createSession', {
      modelId,
      contextSize: CONTEXT,
      threads: 2,
      strategy: 'draft-model',
      k: K,
      s: 0,
      draftModelId,
    });
    const control = await engine.call('createSession', { modelId, contextSize: CONTEXT, threads: 2, strategy: 'none', k: 0, s: 0 });
    assert.equal(spec.contextSize, CONTEXT);
    try {
      let prompt = [
        ...(await engine.call('tokenize', {
          modelId,
          text: READING.trimStart() + '\n\n' + OPENING,
          addSpecial: true,
          parseSpecial: false,
        })),
      ];
      let committed = 0; // what the sessions hold after the previous turn
      let verifyRounds = 0;
      let rejecting = 0;
      for (let turn = 0; turn <= TURNS.length; turn++) {
        const sampling = { ...SAMPLING, seed: SAMPLING.seed + turn };
        const want: RequestOutcome = await runRequest(engine, { sessionId: control.sessionId, prompt, maxTokens: REPLY_TOKENS, sampling });
        const got: RequestOutcome = await runRequest(engine, { sessionId: spec.sessionId, prompt, maxTokens: REPLY_TOKENS, sampling });
        const at = got.tokens.findIndex((t, j) => t !== want.tokens[j]);
        assert.deepEqual(got.tokens, want.tokens, `turn ${turn}: diverges from the control at token ${at}`);
        assert.equal(got.stopReason, want.stopReason);
        console.log(
          `# turn ${turn}: ${prompt.length} prompt + ${got.tokens.length} tokens, ${got.rounds.filter((r) => r.proposed > 0).length} verify rounds, reused ${got.native.reusedTokens}`,
        );
        if (turn > 0) {
          // the whole conversation so far is the prompt's prefix: everything the session held is kept
          assert.equal(got.native.reusedTokens, committed, `turn ${turn}: reuses the previous turns' cache`);
          assert.equal(want.native.reusedTokens, committed, `turn ${turn}: the control reuses it too`);
        }
        const rounds = got.rounds.filter((r) => r.proposed > 0);
        verifyRounds += rounds.length;
        rejecting += rounds.filter((r) => r.accepted < r.proposed).length;

        // a reply that ran out of tokens leaves its last token unevaluated (the next anchor);
        // one that ended at end-of-generation keeps every token
        committed = prompt.length + got.tokens.length - (got.stopReason === 'eos' ? 0 : 1);
        assertCellsAre(await engine.call('memoryCells', { sessionId: spec.sessionId }), committed, `turn ${turn}, draft-model K${K}`);
        assertCellsAre(await engine.call('memoryCells', { sessionId: control.sessionId }), committed, `turn ${turn}, control`);
        if (turn < TURNS.length) prompt = [...prompt, ...got.tokens, ...(await tokenize(TURNS[turn]!))];
      }
      assert.ok(
        committed > 2000 && committed > 3 * REAL_SWA_WINDOW,
        `the conversation (${committed} positions) runs far past the ${REAL_SWA_WINDOW}-cell window`,
      );
      assert.ok(verifyRounds > 1000, `${verifyRounds} verify rounds with proposals`);
      assert.ok(rejecting > verifyRounds / 2, `${rejecting} of ${verifyRounds} verify rounds rejected a proposal`);
    } finally {
      await engine.call('disposeSession', { sessionId: spec.sessionId });
      await engine.call('disposeSession', { sessionId: control.sessionId });
    }
  });
});
