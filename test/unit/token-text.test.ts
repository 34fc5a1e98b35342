// Token text is whole UTF-8 characters: a character split across token pieces arrives with the
// token that completes it; bytes that never complete one show as U+FFFD at the end.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TokenText } from '../../app/service/token-text.js';

const bytes = (s: string) => new TextEncoder().encode(s);

test('a character split over pieces comes with the piece that completes it', () => {
  const t = new TokenText();
  const euro = bytes('€'); // 3 bytes
  const smile = bytes('😀'); // 4 bytes
  const texts = [
    t.push(bytes('a')),
    t.push(euro.subarray(0, 1)),
    t.push(euro.subarray(1, 2)),
    t.push(Uint8Array.of(...euro.subarray(2), ...smile.subarray(0, 2))),
    t.push(Uint8Array.of(...smile.subarray(2), ...bytes('b'))),
  ];
  assert.deepEqual(texts, ['a', '', '', '€', '😀b']);
  assert.equal(t.flush(), '');
});

test('invalid or unfinished bytes become U+FFFD, never disappear', () => {
  const t = new TokenText();
  assert.equal(t.push(Uint8Array.of(0xff)), '\uFFFD');
  assert.equal(t.push(bytes('€').subarray(0, 2)), '');
  assert.equal(t.flush(), '\uFFFD');
});
