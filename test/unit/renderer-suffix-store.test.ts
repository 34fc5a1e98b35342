// The line the "Remember earlier replies for suffix drafting" setting shows under Load settings:
// the loaded model's store in tokens and on disk, before the engine has read it, off, and a problem.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { suffixStoreLine } from '../../renderer/src/logic/suffix-store.js';

const STATE = { remember: true, modelId: 'm1', tokens: 1234, bytes: 5_000, problem: null };

test('the store line gives the tokens held and the bytes on disk', () => {
  assert.equal(suffixStoreLine(STATE), 'Store for this model: 1,234 tokens, 4.9 KiB on disk');
});

test('before the engine has read the store, the line gives its file alone and says when it is read', () => {
  assert.equal(
    suffixStoreLine({ ...STATE, tokens: null }),
    "Store for this model: 4.9 KiB on disk (read at this model's first suffix reply)",
  );
  assert.equal(suffixStoreLine({ ...STATE, tokens: 0, bytes: 0 }), 'Store for this model: 0 tokens, nothing on disk');
});

test('turned off, the line says new replies are not added; a problem with the file is named', () => {
  assert.equal(
    suffixStoreLine({ ...STATE, remember: false }),
    'Store for this model: 1,234 tokens, 4.9 KiB on disk; off: new replies are not added or drafted from',
  );
  assert.match(suffixStoreLine({ ...STATE, problem: "could not write the store's file /x" }), /\(could not write the store's file \/x\)$/);
});

test('without a loaded model or an answer yet, the line says so', () => {
  assert.equal(suffixStoreLine(null), 'Store of earlier replies: not read yet');
  assert.equal(suffixStoreLine({ ...STATE, modelId: null, tokens: null, bytes: 0 }), 'Store of earlier replies: no model loaded');
});
