// OpenAI stop sequences over streamed text: held back while they may still match, cut where they do.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StopStrings } from '../../node/serve/openai/stop-strings.js';

function run(stops: string[], pieces: string[]): { shown: string[]; stopped: boolean } {
  const s = new StopStrings(stops);
  const shown = pieces.map((p) => s.push(p));
  shown.push(s.flush());
  return { shown, stopped: s.stopped };
}

test('without stop sequences text passes straight through', () => {
  assert.deepEqual(run([], ['a', 'b']), { shown: ['a', 'b', ''], stopped: false });
});

test('a stop sequence split over pieces ends the reply before it; nothing after it is shown', () => {
  assert.deepEqual(run(['\nUser:'], ['Hello', '\nUs', 'er: more', 'x']), { shown: ['Hello', '', '', '', ''], stopped: true });
});

test('a held-back prefix that does not complete is released', () => {
  assert.deepEqual(run(['STOP'], ['ab S', 'To', 'p', 'ST']), { shown: ['ab ', 'STo', 'p', '', 'ST'], stopped: false });
});

test('the earliest of several stop sequences wins', () => {
  assert.deepEqual(run(['cd', 'b'], ['abcd']), { shown: ['a', ''], stopped: true });
});
