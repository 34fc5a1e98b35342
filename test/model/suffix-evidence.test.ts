// Where a `suffix` draft came from, per verify round (issue 56, "Evidence"): the engine's round
// records name the source (this request, or the model's store of earlier replies) and how many of
// the proposals the drafter expected accepted; a first request drafts from the request, the same
// request sent again from the store, and the chat report sums the rounds per source. Synthetic
// models through the real engine host and service; every speculative run against its control.
import assert from 'node:assert/strict';
import { describe, test, before, after } from 'node:test';

import type { RoundRecord } from '../../app/contract/engine-types.js';
import { roundSamples } from '../../app/contract/report/request.js';
import { Report } from '../../app/contract/report/schema.js';
import { sourceStats } from '../../app/contract/report/stats.js';
import { EngineClient } from '../../app/engine/client.js';
import { runRequest } from '../../app/service/request.js';
import { assertDrafted, assertDraftedSameAsControl } from '../fixtures/drafting.js';
import { disposeAndClose, GREEDY, loadSynthetic } from '../fixtures/engine-generate.js';
import { ask, startService, startedReply } from '../fixtures/service.js';

const PROMPT = [1, 300, 301, 302, 303];
const TOKENS = 64;

/** Every drafted round names a source, and its drafter's expectation lies within what it proposed. */
function assertEvidence(rounds: readonly RoundRecord[], label: string): void {
  for (const [i, r] of rounds.entries()) {
    if (r.proposed === 0) {
      assert.equal(r.draftSource, undefined, `${label}: round ${i} drafted nothing and names no source`);
      continue;
    }
    assert.ok(r.draftSource === 'request' || r.draftSource === 'store', `${label}: round ${i} names its source`);
    assert.ok(
      r.expectedAccepted! >= 0 && r.expectedAccepted! <= r.proposed,
      `${label}: round ${i} expected ${r.expectedAccepted} of ${r.proposed}`,
    );
  }
}

describe('suffix draft sources in the round records', () => {
  let engine: EngineClient;
  let target = '';
  let draft = '';

  before(async () => {
    engine = EngineClient.start();
    [target, draft] = await loadSynthetic(engine, 'target.gguf', 'draft-close.gguf');
  });

  after(() => disposeAndClose(engine, [target, draft]));

  const session = async (strategy: 'none' | 'suffix' | 'ngram', fallbacks: ('draft-model' | 'suffix')[] = []) =>
    (
      await engine.call('createSession', {
        modelId: target,
        contextSize: 512,
        threads: 1,
        strategy,
        fallbacks,
        k: strategy === 'none' ? 0 : 7,
        s: 0,
        ...(fallbacks.includes('draft-model') ? { draftModelId: draft } : {}),
      })
    ).sessionId;
  const run = (sessionId: string) => runRequest(engine, { sessionId, prompt: PROMPT, maxTokens: TOKENS, sampling: GREEDY });

  test('a first request drafts from the request; the same request again drafts from the store, and it pays', async () => {
    const control = await session('none');
    const first = await session('suffix');
    try {
      await engine.call('suffixStore', { sessionId: first, clear: true });
      const want = await run(control);
      const a = await run(first);
      assertDraftedSameAsControl(a, want, { label: 'suffix, a first request' });
      assertEvidence(a.rounds, 'a first request');
      const fromA = sourceStats(roundSamples(a.rounds));
      assert.deepEqual(
        fromA.map((s) => s.source),
        ['request'],
        `the store was empty: ${JSON.stringify(fromA)}`,
      );
      // the first reply goes to the store as the next request starts
      const b = await run(first);
      assertDraftedSameAsControl(b, want, { label: 'suffix, the same request again', accepted: true });
      assertEvidence(b.rounds, 'the same request again');
      const store = sourceStats(roundSamples(b.rounds)).find((s) => s.source === 'store');
      assert.ok(store && store.accepted > 0, `drafted from the store and accepted: ${JSON.stringify(sourceStats(roundSamples(b.rounds)))}`);
      assert.ok(store.meanExpected! > 0, 'the drafter expected its store drafts to be accepted');
    } finally {
      await engine.call('suffixStore', { sessionId: first, clear: true });
      await engine.call('disposeSession', { sessionId: first });
      await engine.call('disposeSession', { sessionId: control });
    }
  });

  test("a chain names the source of suffix's rounds only; a drafter that does not tell names none", async () => {
    const chain = await session('suffix', ['draft-model']);
    const ngram = await session('ngram');
    try {
      await engine.call('suffixStore', { sessionId: chain, clear: true });
      const c = await run(chain);
      assertDrafted(c, { label: 'suffix,draft-model' });
      for (const r of c.rounds) {
        if (r.proposed > 0) assert.equal(r.draftSource !== undefined, r.member === 0, `member ${r.member}'s round and its source`);
      }
      assert.ok(
        c.rounds.some((r) => r.member === 1),
        'the draft model drafted some rounds',
      );
      const n = await run(ngram);
      assertDrafted(n, { label: 'ngram' });
      assert.ok(
        n.rounds.every((r) => r.draftSource === undefined && r.expectedAccepted === undefined),
        'ngram names no source',
      );
    } finally {
      await engine.call('suffixStore', { sessionId: chain, clear: true });
      await engine.call('disposeSession', { sessionId: chain });
      await engine.call('disposeSession', { sessionId: ngram });
    }
  });
});

test("the chat report sums a suffix chat's rounds per draft source, expected against accepted", async () => {
  const f = await startService();
  try {
    const modelId = f.models['target.gguf']!.id;
    await f.service.engine.load({ modelId, device: 'cpu', threads: 1, contextSize: 1024, draftMethod: { strategy: 'suffix' } });
    await f.service.engine.setSuffixStore({ clear: true });
    const chat = await f.service.chats.create({});
    const first = await ask(f.service, chat.id, 'one two three four five', { maxTokens: 40 });
    assert.equal(first.end.kind, 'done');
    const { end } = await startedReply(f.service, f.service.chats.regenerate({ chatId: chat.id, sampling: { maxTokens: 40 } }));
    assert.equal((await end).kind, 'done');
    const exported = (format: 'json' | 'md') =>
      f.service.reports.exportChat({ chatId: chat.id, format }).then((file) => Buffer.from(file.base64, 'base64').toString('utf8'));
    const report = Report.parse(JSON.parse(await exported('json')));
    const sources = report.profiles.flatMap((p) => p.sources ?? []);
    const store = sources.find((s) => s.source === 'store');
    assert.ok(
      store && store.accepted > 0 && store.meanExpected !== null,
      `the regenerate drafted from the store: ${JSON.stringify(sources)}`,
    );
    const samples = report.requests.flatMap((r) => r.samples).filter((s) => s.draftSource !== undefined);
    assert.equal(
      sources.reduce((n, s) => n + s.rounds, 0),
      samples.length,
      'every round that names a source is counted once',
    );
    const md = await exported('md');
    assert.match(md, /## Draft sources[^\n]*\n\n\| profile \| source \|/);
    assert.match(md, /\| store \| \d+ \|/);
  } finally {
    await f.dispose();
  }
});
