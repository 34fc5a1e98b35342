// The evidence computed from round records, and the token digest.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';

import type { NativeGenerateResult, RoundRecord } from '../../app/contract/engine-types.js';
import { computeStats, RunningStats, tokenDigest } from '../../app/contract/generation-result.js';

const piece = new Uint8Array();
function round(endUs: number, tokens: number, proposed = 0, accepted = 0): RoundRecord {
  return {
    type: 'round',
    proposed,
    accepted,
    replay: false,
    clampedTo: null,
    startUs: 0,
    endUs,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
    tokens: Array.from({ length: tokens }, (_, i) => ({ id: i, piece, origin: 'target' as const })),
  };
}
const native = {
  stopReason: 'max-tokens' as const,
  replays: 0,
  clampedTo: null,
  promptTokens: 10,
  reusedTokens: 2,
  prefillUs: 4000,
  totalUs: 10_000,
  generated: 0,
  grammarCut: 0,
};

/** The stats by their definition, over all rounds at once (what RunningStats must keep up incrementally). */
function definitionStats(n: NativeGenerateResult, rounds: readonly RoundRecord[]) {
  const emitted = rounds.reduce((t, r) => t + r.tokens.length, 0);
  const proposed = rounds.reduce((t, r) => t + r.proposed, 0);
  const accepted = rounds.reduce((t, r) => t + r.accepted, 0);
  const verify = rounds.filter((r) => r.proposed > 0);
  const width = verify.reduce((w, r) => Math.max(w, r.proposed), 0);
  const steady = rounds.slice(2).reduce((t, r) => t + r.tokens.length, 0);
  const steadyUs = rounds.length > 2 ? rounds.at(-1)!.endUs - rounds[1]!.endUs : 0;
  return {
    promptTokens: n.promptTokens,
    ttftMs: rounds[0] ? rounds[0].endUs / 1000 : null,
    prefillTokensPerSecond:
      n.prefillUs > 0 && n.promptTokens > n.reusedTokens ? ((n.promptTokens - n.reusedTokens) * 1e6) / n.prefillUs : null,
    steadyDecodeTokensPerSecond: steadyUs > 0 ? (steady * 1e6) / steadyUs : null,
    requestTokensPerSecond: emitted > 0 && n.totalUs > 0 ? (emitted * 1e6) / n.totalUs : null,
    proposed,
    accepted,
    rounds: verify.length,
    replays: n.replays,
    clampedTo: n.clampedTo,
    acceptanceRate: proposed > 0 ? accepted / proposed : null,
    meanAcceptanceLength: verify.length > 0 ? 1 + accepted / verify.length : null,
    acceptancePerPosition: Array.from(
      { length: width },
      (_, i) => verify.filter((r) => r.proposed > i && r.accepted > i).length / verify.filter((r) => r.proposed > i).length,
    ),
  };
}

describe('RunningStats', () => {
  test('a snapshot after each round equals the stats by their definition over every round so far', () => {
    let x = 7;
    const next = (n: number) => ((x = (x * 1103515245 + 12345) % 2147483648), x % n);
    const rounds: RoundRecord[] = [];
    const running = new RunningStats();
    let endUs = 0;
    for (let i = 0; i < 300; i++) {
      const proposed = i === 0 ? 0 : next(8);
      const accepted = proposed === 0 ? 0 : next(proposed + 1);
      const r = {
        ...round((endUs += 500 + next(1000)), accepted + 1, proposed, accepted),
        replay: i === 40,
        clampedTo: i === 40 ? 6 : null,
      };
      rounds.push(r);
      running.add(r);
      const partial = running.partialNative(12);
      assert.deepEqual(running.stats(partial), definitionStats(partial, rounds), `after round ${i}`);
    }
    const partial = running.partialNative(12);
    assert.deepEqual(
      [partial.replays, partial.clampedTo, partial.generated, partial.totalUs],
      [1, 6, rounds.reduce((n, r) => n + r.tokens.length, 0), endUs],
    );
  });
});

describe('computeStats', () => {
  test('autoregressive rounds: rates from emission times, no speculative evidence', () => {
    // first token at 5 ms; then 1 ms, 1 ms, 2 ms, 2 ms apart
    const rounds = [round(5000, 1), round(6000, 1), round(7000, 1), round(9000, 1), round(11000, 1)];
    const s = computeStats({ ...native, totalUs: 11000 }, rounds);
    assert.equal(s.ttftMs, 5);
    assert.equal(s.prefillTokensPerSecond, 2000); // 8 new prompt tokens in 4 ms
    // steady part: the 3 tokens after the two warm-up rounds, in the 5 ms after round 1 ended
    assert.equal(s.steadyDecodeTokensPerSecond, 600);
    assert.ok(Math.abs(s.requestTokensPerSecond! - 5 / 0.011) < 1e-9);
    assert.deepEqual([s.proposed, s.accepted, s.rounds, s.acceptanceRate, s.meanAcceptanceLength], [0, 0, 0, null, null]);
    assert.deepEqual(s.acceptancePerPosition, []);
  });

  test('speculative rounds: acceptance rate, mean length and per position', () => {
    const rounds = [round(1000, 3, 4, 2), round(2000, 5, 4, 4), round(3000, 1, 4, 0)];
    const s = computeStats(native, rounds);
    assert.equal(s.proposed, 12);
    assert.equal(s.accepted, 6);
    assert.equal(s.rounds, 3);
    assert.equal(s.acceptanceRate, 0.5);
    assert.equal(s.meanAcceptanceLength, 3);
    assert.deepEqual(s.acceptancePerPosition, [2 / 3, 2 / 3, 1 / 3, 1 / 3]);
  });

  test('steady decode is tokens over time after warm-up, not a median of per-round rates', () => {
    // after warm-up: two fully accepted rounds (5 tokens in 1 ms) and a rejecting one (1 token in 2 ms)
    const rounds = [round(1000, 1), round(2000, 5, 4, 4), round(3000, 5, 4, 4), round(5000, 1, 4, 0), round(6000, 5, 4, 4)];
    const s = computeStats({ ...native, totalUs: 6000 }, rounds);
    // 11 tokens in 4 ms; the median of the per-round rates (5000, 500, 5000 tok/s) would say 5000
    assert.equal(s.steadyDecodeTokensPerSecond, 2750);
  });

  test('a request that ends within warm-up has no steady rate', () => {
    const s = computeStats(native, [round(1000, 1), round(2000, 5, 4, 4)]);
    assert.equal(s.steadyDecodeTokensPerSecond, null);
  });

  test('no rounds at all', () => {
    const s = computeStats({ ...native, stopReason: 'cancelled' }, []);
    assert.equal(s.ttftMs, null);
    assert.equal(s.steadyDecodeTokensPerSecond, null);
    assert.equal(s.requestTokensPerSecond, null);
  });
});

describe('tokenDigest', () => {
  test('is sha256 over little-endian int32 ids', async () => {
    const ids = [1, 255, 256, 65535, 2 ** 31 - 1];
    const bytes = Buffer.alloc(ids.length * 4);
    ids.forEach((t, i) => bytes.writeInt32LE(t, i * 4));
    assert.equal(await tokenDigest(ids), `sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    assert.equal(await tokenDigest([]), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
