// CLI value parsing: each bad value names the flag and what it accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { choice, int, num, parseFlags, tokenList } from '../../app/cli/args.js';
import { UsageError } from '../../app/cli/errors.js';

const flags = { n: { type: 'string' }, x: { type: 'string' }, on: { type: 'boolean' } } as const;

test('integers, numbers, choices and token lists parse or say why not', () => {
  const { values } = parseFlags(['--n', '12', '--x', '0.5', '--on'], flags, 0);
  assert.equal(int(values, 'n', { min: 1, max: 20 }), 12);
  assert.equal(num(values, 'x', { min: 0, max: 1 }), 0.5);
  assert.equal(values.on, true);
  assert.equal(int(values, 'absent', { min: 0, max: 1 }), undefined);
  assert.throws(() => int(values, 'n', { min: 1, max: 10 }), /--n must be an integer from 1 to 10 \(got '12'\)/);
  assert.throws(() => int({ n: '1.5' }, 'n', { min: 0, max: 9 }), UsageError);
  assert.throws(() => num({ x: 'NaN' }, 'x', { min: 0, max: 1 }), /--x must be a number/);
  assert.throws(() => num({ x: '0' }, 'x', { min: 0, max: 1, minExclusive: true }), /greater than 0/);
  assert.equal(choice({ c: 'on' }, 'c', ['on', 'off']), 'on');
  assert.throws(() => choice({ c: 'up' }, 'c', ['on', 'off']), /--c must be one of on, off \(got 'up'\)/);
  assert.deepEqual(tokenList({ t: '1, 2,3' }, 't'), [1, 2, 3]);
  assert.throws(() => tokenList({ t: '1,-2' }, 't'), /comma-separated token ids/);
});

test('unknown flags and extra arguments are usage errors', () => {
  assert.throws(() => parseFlags(['--nope'], flags, 0), /unknown option '--nope'/);
  assert.throws(() => parseFlags(['a', 'b'], flags, 1), /unexpected argument 'b'/);
});
