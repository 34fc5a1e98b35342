// Structured output under speculation (docs/exactness.md "Grammars"): with a GBNF grammar or a
// JSON schema the target's rows are drawn through the grammar, which advances only for emitted
// tokens, so every speculative run emits the autoregressive control's tokens, greedy and seeded,
// past position 256, on each proposer class (n-gram lookup, a draft model, the MTP head with its
// guarded replay, llama.cpp's n-gram family), and every run drafts. The n-gram proposers draft
// without the grammar, and what it refuses is cut before verification (grammarCut: the lookup's
// words and capitals inside a JSON object); the draft model and the MTP head draft under it, so
// nothing of theirs is cut. The summary line reports the acceptance. Bad grammars and schemas
// are refused with llama.cpp's reason, before the request runs, and the session serves the next
// request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { SamplingOptions } from '../../app/contract/engine-types.js';
import type { Strategy } from '../../app/contract/strategies.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest, type RequestOutcome } from '../../app/service/request.js';
import type { ModelSet } from '../../tools/models/synthetic.js';
import { assertSameAsControl, cachedControl, configLabel, counterTotals, loadedOnce, type ContractConfig } from '../fixtures/contract.js';
import { disposeAndClose, GREEDY } from '../fixtures/engine-generate.js';
import { syntheticModels } from '../fixtures/models.js';

const PROMPT = [1, 300, 301, 302, 303, 304, 305, 306];
// prompt + 300 tokens crosses position 256 (a new KV block of the CPU's attention)
const TOKENS = 300;
// lower-case words and spaces, never finished: the reply cannot end before TOKENS
const WORDS = 'root ::= [a-z ]+ "\\n\\n\\n\\n"';
// an object whose strings are bounded: the reply ends once the object is closed
const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { name: { type: 'string', maxLength: 12 }, tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 } },
  required: ['name', 'tags'],
  additionalProperties: false,
});
const SEEDED: SamplingOptions = { ...GREEDY, temperature: 0.9, seed: 77, repeatPenalty: 1.1, path: 'cpu' };

type ModelName = keyof ModelSet;
const rate = (n: number, of: number) => (of > 0 ? (n / of).toFixed(3) : '-');
const CONFIGS: ContractConfig<ModelName>[] = [
  { target: 'target.gguf', strategy: 'ngram', k: 7, s: 7 },
  { target: 'target.gguf', strategy: 'draft-model', draft: 'draft-close.gguf', k: 7, s: 7 },
  { target: 'target.gguf', strategy: 'ngram-mod', k: 3, s: 3 },
  { target: 'hybrid-mtp.gguf', strategy: 'mtp', k: 3, s: 2 },
];

describe('grammars and JSON schemas under speculation', () => {
  let models: ModelSet;
  let engine: EngineClient;
  const summary: string[] = [];

  const loaded = loadedOnce(async (name: ModelName) => {
    const { modelId } = await engine.call('loadModel', { path: models[name], gpuLayers: 0, loadMtp: name.startsWith('hybrid-mtp') });
    return modelId;
  });
  const modelId = loaded.id;

  async function session(c: ContractConfig<ModelName> & { strategy: Strategy }): Promise<string> {
    const created = await engine.call('createSession', {
      modelId: await modelId(c.target),
      contextSize: 512,
      threads: 1,
      strategy: c.strategy,
      k: c.k,
      s: c.s,
      ...(c.draft ? { draftModelId: await modelId(c.draft) } : {}),
    });
    return created.sessionId;
  }

  async function run(c: ContractConfig<ModelName>, sampling: SamplingOptions): Promise<RequestOutcome> {
    const sessionId = await session(c);
    try {
      return await runRequest(engine, { sessionId, prompt: Int32Array.from(PROMPT), maxTokens: TOKENS, sampling });
    } finally {
      await engine.call('disposeSession', { sessionId });
    }
  }

  const control = cachedControl(run);

  before(async () => {
    models = await syntheticModels();
    engine = EngineClient.start();
  });

  after(async () => {
    console.log(`grammar contract (${TOKENS} tokens; the proposers draft without the grammar):\n${summary.join('\n')}`);
    await disposeAndClose(engine, loaded.ids());
  });

  const modes = [
    ['greedy words', { ...GREEDY, grammar: WORDS }],
    ['seeded words', { ...SEEDED, grammar: WORDS }],
    ['greedy schema', { ...GREEDY, jsonSchema: SCHEMA }],
    ['seeded schema', { ...SEEDED, jsonSchema: SCHEMA }],
  ] as const;

  // llama.cpp's n-gram families draft only once the text repeats itself at length (ngram-mod: a
  // 24-token match, 48 tokens to follow): here only the greedy word loop does, and a run in which
  // nothing is proposed would check nothing the control does not
  const drafts = (c: ContractConfig<ModelName>, mode: string) => c.strategy !== 'ngram-mod' || mode === 'greedy words';
  // the draft model and the MTP head draft under a copy of the grammar (grammar_guided_pick): the
  // grammar cannot refuse what they propose
  const guided = (c: ContractConfig<ModelName>) => c.strategy === 'draft-model' || c.strategy === 'mtp';

  for (const c of CONFIGS) {
    for (const [mode, sampling] of modes.filter(([m]) => drafts(c, m))) {
      test(`${configLabel(c)} ${mode} emits the control's tokens, which follow the grammar`, async () => {
        const ar = await control(c.target, mode, sampling);
        const spec = await run(c, sampling);
        assertSameAsControl(spec, ar, mode);
        if (mode.endsWith('words')) {
          assert.equal(ar.tokens.length, TOKENS, 'the grammar cannot end: every token is generated');
          assert.match(ar.text, /^[a-z ]+$/, 'only lower-case words and spaces');
        } else {
          // the schema ends the reply: a closed object of its shape (or the token limit inside it)
          if (ar.stopReason === 'eos') {
            const value = JSON.parse(ar.text) as { name: unknown; tags: unknown };
            assert.equal(typeof value.name, 'string');
            assert.ok(Array.isArray(value.tags) && value.tags.length <= 3);
            assert.deepEqual(Object.keys(value).sort(), ['name', 'tags']);
          } else {
            assert.match(ar.text, /^\{\s*"name"/);
          }
        }
        const { proposed, accepted } = counterTotals([spec]);
        assert.ok(proposed > 0, 'the proposer drafted');
        // a refused proposal is never verified: without the cut the same rounds would verify `cut` more rows
        const cut = spec.native.grammarCut;
        assert.equal(ar.native.grammarCut, 0, 'the control proposes nothing');
        if (guided(c)) assert.equal(cut, 0, 'a proposer drafting under the grammar proposes nothing it refuses');
        // the n-gram lookup copies the context (the prompt's capitals, words) into a JSON object
        else if (c.strategy === 'ngram' && !mode.endsWith('words'))
          assert.ok(cut > 0, 'the schema refused some of what the lookup drafted');
        summary.push(
          `  ${configLabel(c).padEnd(52)} ${mode.padEnd(14)} identical  ${String(spec.tokens.length).padStart(3)} tokens` +
            `  accepted ${accepted} of ${proposed} verified (${rate(accepted, proposed)}), of ${proposed + cut} drafted (${rate(accepted, proposed + cut)})`,
        );
      });
    }
  }

  test('a grammar that does not parse, a schema llama.cpp cannot convert, both at once, or backend sampling: refused, the session goes on', async () => {
    const sessionId = await session({ target: 'target.gguf', strategy: 'ngram', k: 3, s: 3 });
    const generate = (sampling: SamplingOptions) =>
      runRequest(engine, { sessionId, prompt: Int32Array.from(PROMPT), maxTokens: 8, sampling });
    await assert.rejects(generate({ ...GREEDY, grammar: 'root ::= "a' }), /GBNF parser refused the grammar/);
    await assert.rejects(generate({ ...GREEDY, grammar: 'start ::= "a"' }), /GBNF parser refused the grammar/);
    await assert.rejects(generate({ ...GREEDY, jsonSchema: '{"type": ' }), /the JSON schema is not JSON/);
    await assert.rejects(
      generate({ ...GREEDY, jsonSchema: '{"$ref": "#/definitions/missing"}' }),
      /cannot turn the JSON schema into a grammar/,
    );
    await assert.rejects(
      engine.call('generate', {
        sessionId,
        requestId: 'both',
        prompt: Int32Array.from(PROMPT),
        maxTokens: 8,
        sampling: { ...GREEDY, grammar: WORDS, jsonSchema: SCHEMA },
      }),
      /a grammar or a JSON schema, not both/,
    );
    await assert.rejects(generate({ ...GREEDY, grammar: WORDS, path: 'backend' }), /grammar \(or JSON schema\) is applied on the CPU only/);
    const after = await generate({ ...GREEDY, grammar: WORDS });
    assert.equal(after.tokens.length, 8);
    assert.match(after.text, /^[a-z ]+$/);
    await engine.call('disposeSession', { sessionId });
  });
});
