// Where a request is sampled (engine/sampling-path.ts) and the uniform numbers llama.cpp's dist
// sampler draws (node/service/sampling-draw.ts, checked against libstdc++'s own output).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SAMPLING_DEFAULTS } from '../../contract/engine-types.js';
import { proposerSamplingPath, resolveSamplingPath } from '../../engine/sampling-path.js';
import { uniformDraw } from '../../node/service/sampling-draw.js';

const PENALTIES = { ...SAMPLING_DEFAULTS, repeatPenalty: 1.1 };

test('auto samples on the backend on a GPU and on the CPU elsewhere, saying why', () => {
  assert.deepEqual(resolveSamplingPath('auto', SAMPLING_DEFAULTS, { onGpu: true, k: 7 }), { path: 'backend', reason: null });
  const cpu = resolveSamplingPath('auto', SAMPLING_DEFAULTS, { onGpu: false, k: 7 });
  assert.equal(cpu.problem, undefined);
  assert.equal(cpu.path, 'cpu');
  assert.match(cpu.reason ?? '', /runs on the CPU/);
});

test('penalties keep a speculative chain on the CPU: auto says so, an explicit backend is refused', () => {
  const auto = resolveSamplingPath('auto', PENALTIES, { onGpu: true, k: 3 });
  assert.equal(auto.problem, undefined);
  assert.equal(auto.path, 'cpu');
  assert.match(auto.reason ?? '', /penalties/);
  const refused = resolveSamplingPath('backend', PENALTIES, { onGpu: true, k: 3 });
  assert.match(refused.problem ?? '', /penalties.*--sampling cpu/);
  // without proposals there is one row per pass: penalties run on the backend
  assert.deepEqual(resolveSamplingPath('backend', PENALTIES, { onGpu: false, k: 0 }), { path: 'backend', reason: null });
  // repeat-last-n 0 turns the penalties off
  assert.deepEqual(resolveSamplingPath('backend', { ...PENALTIES, repeatLastN: 0 }, { onGpu: false, k: 3 }), { path: 'backend', reason: null });
});

test('an explicit path is kept; the proposer drafts on the backend where auto puts the target there', () => {
  assert.deepEqual(resolveSamplingPath('cpu', SAMPLING_DEFAULTS, { onGpu: true, k: 3 }), { path: 'cpu', reason: null });
  assert.equal(proposerSamplingPath('auto', true), 'backend');
  assert.equal(proposerSamplingPath('auto', false), 'cpu');
  assert.equal(proposerSamplingPath('backend', false), 'backend');
});

test("the dist sampler's uniform draws match std::mt19937 with uniform_real_distribution<double>", () => {
  // printed by a C++ program compiled with g++ (libstdc++), the library llama.cpp is built with here
  const expected: [number, number, number][] = [
    [0, 0, 0.59284461651668263], [0, 4, 0.62356369649610832],
    [7, 0, 0.22733907496470684], [7, 2, 0.97822289621420422],
    [1234, 1, 0.81783844288953322], [1234, 4, 0.86066977348643725],
  ];
  for (const [seed, index, u] of expected) assert.equal(uniformDraw(seed, index), u, `seed ${seed}, draw ${index}`);
});
