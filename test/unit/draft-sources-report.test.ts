// A `suffix` profile's rounds by draft source in the report (issue 56, "Evidence"): the profile
// summary's `sources` (rounds, drafted, accepted, mean expected against mean accepted, only the
// sources some round names), the Markdown/HTML table and the CSV `sources` column.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { summarizeProfiles } from '../../app/contract/report/aggregate.js';
import type { ProfileRun, Report, RequestRecord, RoundSample } from '../../app/contract/report/schema.js';
import { sourceStats } from '../../app/contract/report/stats.js';
import { sourcesField } from '../../app/report/csv.js';
import { sourcesTable } from '../../app/report/tables.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function round(proposed: number, accepted: number, source?: 'request' | 'store', expected?: number): RoundSample {
  return {
    proposed,
    accepted,
    emitted: accepted + 1,
    replay: false,
    clampedTo: null,
    endUs: 0,
    proposeUs: 0,
    verifyUs: 0,
    commitUs: 0,
    ...(source ? { draftSource: source, expectedAccepted: expected ?? 0 } : {}),
  };
}

function request(profile: string, samples: RoundSample[]): RequestRecord {
  return {
    task: 't',
    category: 'c',
    profile,
    repeat: 0,
    seed: null,
    promptTokens: 5,
    generatedTokens: 10,
    stopReason: 'max-tokens',
    ttftMs: 1,
    prefillTokensPerSecond: 1,
    steadyDecodeTokensPerSecond: 1,
    requestTokensPerSecond: 1,
    proposed: samples.reduce((n, s) => n + s.proposed, 0),
    accepted: samples.reduce((n, s) => n + s.accepted, 0),
    rounds: samples.length,
    acceptanceRate: null,
    meanAcceptanceLength: null,
    acceptancePerPosition: [],
    replays: 0,
    clampedTo: null,
    digest: DIGEST,
    matchesControl: true,
    samples,
  };
}

const SUFFIX: ProfileRun = { name: 'suffix', strategy: 'suffix', k: 7, s: null };
const NGRAM: ProfileRun = { name: 'ngram', strategy: 'ngram', k: 7, s: null };

test('sources sum the rounds per source, expected against accepted a round, in request-then-store order', () => {
  const rounds = [round(0, 0), round(3, 1, 'store', 2.5), round(4, 2, 'request', 1.5), round(2, 2, 'request', 0.5), round(3, 0)];
  assert.deepEqual(sourceStats(rounds), [
    { source: 'request', rounds: 2, drafted: 6, accepted: 4, meanExpected: 1, meanAccepted: 2 },
    { source: 'store', rounds: 1, drafted: 3, accepted: 1, meanExpected: 2.5, meanAccepted: 1 },
  ]);
  assert.deepEqual(sourceStats([round(0, 0), round(3, 1)]), [], 'a drafter that does not tell has no sources');
});

test('a profile summary lists its sources pooled over its requests; a profile without them has none', () => {
  const requests = [
    request('suffix', [round(4, 4, 'store', 3), round(2, 1, 'request', 1)]),
    request('suffix', [round(6, 5, 'store', 4)]),
    request('ngram', [round(3, 2)]),
  ];
  const [suffix, ngram] = summarizeProfiles([SUFFIX, NGRAM], requests);
  assert.deepEqual(suffix!.sources, [
    { source: 'request', rounds: 1, drafted: 2, accepted: 1, meanExpected: 1, meanAccepted: 1 },
    { source: 'store', rounds: 2, drafted: 10, accepted: 9, meanExpected: 3.5, meanAccepted: 4.5 },
  ]);
  assert.equal('sources' in ngram!, false);

  const table = sourcesTable({ profiles: [suffix, ngram] } as unknown as Report);
  assert.deepEqual(table.headers, ['profile', 'source', 'rounds', 'drafted', 'accepted', 'acceptance', 'expected/round', 'accepted/round']);
  assert.deepEqual(
    table.rows.map((r) => r.slice(0, 5).concat(r.slice(6))),
    [
      ['suffix', 'request', '1', '2', '1', '1.00', '1.00'],
      ['suffix', 'store', '2', '10', '9', '3.50', '4.50'],
    ],
  );
  assert.equal(sourcesField(requests[0]!), 'request:1:2:1:1;store:1:4:4:3');
  assert.equal(sourcesField(requests[2]!), '', 'empty for a drafter that does not tell');
});
