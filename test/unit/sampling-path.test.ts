// Where a request is sampled (app/engine/sampling-path.ts), the uniform numbers llama.cpp's dist
// sampler draws (app/service/sampling-draw.ts, checked against libstdc++'s own output), and how
// `power audit --compare-sampling` explains a difference between the paths from the CPU's row
// (explainDivergence: no difference occurs between the paths on this machine, so its rows here
// are built to hold a tie or a draw at a boundary).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SAMPLING_DEFAULTS } from '../../app/contract/engine-types.js';
import { proposerSamplingPath, resolveSamplingPath, VULKAN_NO_BACKEND_SAMPLING } from '../../app/engine/sampling-path.js';
import { explainDivergence, type DivergenceEvidence } from '../../app/service/audit.js';
import { uniformDraw } from '../../app/service/sampling-draw.js';

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
  assert.deepEqual(resolveSamplingPath('backend', { ...PENALTIES, repeatLastN: 0 }, { onGpu: false, k: 3 }), {
    path: 'backend',
    reason: null,
  });
});

test('an explicit path is kept; the proposer drafts on the backend where auto puts the target there', () => {
  assert.deepEqual(resolveSamplingPath('cpu', SAMPLING_DEFAULTS, { onGpu: true, k: 3 }), { path: 'cpu', reason: null });
  assert.equal(proposerSamplingPath('auto', true), 'backend');
  assert.equal(proposerSamplingPath('auto', false), 'cpu');
  assert.equal(proposerSamplingPath('backend', false), 'backend');
});

test('a GPU backend that cannot sample in its graph (Vulkan): auto samples on the CPU saying why, an explicit backend is refused, the proposer drafts on the CPU', () => {
  const place = { onGpu: true, k: 7, noBackend: VULKAN_NO_BACKEND_SAMPLING };
  const auto = resolveSamplingPath('auto', SAMPLING_DEFAULTS, place);
  assert.equal(auto.problem, undefined);
  assert.equal(auto.path, 'cpu');
  assert.match(auto.reason ?? '', /^auto: llama\.cpp's Vulkan backend/);
  assert.match(resolveSamplingPath('backend', SAMPLING_DEFAULTS, place).problem ?? '', /not available here.*--sampling cpu/);
  assert.deepEqual(resolveSamplingPath('cpu', SAMPLING_DEFAULTS, place), { path: 'cpu', reason: null });
  assert.equal(proposerSamplingPath('auto', true, VULKAN_NO_BACKEND_SAMPLING), 'cpu');
});

test("the dist sampler's uniform draws match std::mt19937 with uniform_real_distribution<double>", () => {
  // printed by a C++ program compiled with g++ (libstdc++), the library llama.cpp is built with here
  const expected: [number, number, number][] = [
    [0, 0, 0.59284461651668263],
    [0, 4, 0.62356369649610832],
    [7, 0, 0.22733907496470684],
    [7, 2, 0.97822289621420422],
    [1234, 1, 0.81783844288953322],
    [1234, 4, 0.86066977348643725],
  ];
  for (const [seed, index, u] of expected) assert.equal(uniformDraw(seed, index), u, `seed ${seed}, draw ${index}`);
});

/** A row of 8 logits whose candidates, in the CPU's summing order, are `ids` with probabilities `p`. */
function evidence(over: Partial<DivergenceEvidence>): DivergenceEvidence {
  return {
    cpuToken: 2,
    backendToken: 5,
    row: Float32Array.from([0.1, 0.2, 3.5, 0.3, 1.0, 3.5, 0.4, 0.5]),
    drawnFromIds: Int32Array.from([2, 5, 4]),
    drawnFromP: Float64Array.from([0.45, 0.35, 0.2]),
    draw: null,
    seeded: false,
    ...over,
  };
}

test('a greedy difference between equal top logits is a tie; between unequal ones it is unexplained', () => {
  const tie = explainDivergence(evidence({}));
  assert.equal(tie.cause, 'greedy-tie');
  assert.equal(tie.cpuLogit, tie.backendLogit);
  assert.equal(explainDivergence(evidence({ backendToken: 4 })).cause, 'unexplained');
});

test('a seeded draw within rounding of the edge between two adjacent candidates is explained; elsewhere it is not', () => {
  const draw = uniformDraw(7, 0);
  // the CPU's token ends where the backend's begins, and the real draw of seed 7 lands just past that edge
  const p = Float64Array.from([draw - 1e-6, 0.2, 1 - draw - 0.2 + 1e-6]);
  const atEdge = explainDivergence(evidence({ seeded: true, draw, drawnFromP: p }));
  assert.equal(atEdge.cause, 'draw-at-boundary');
  assert.deepEqual(atEdge.cpuCumulative, { before: 0, after: p[0] });
  assert.equal(atEdge.backendCumulative?.before, p[0]);
  // far from the edge (0.1 away), or the two tokens not next to each other in the order
  assert.equal(
    explainDivergence(evidence({ seeded: true, draw, drawnFromP: Float64Array.from([draw - 0.1, 0.2, 0.9 - draw]) })).cause,
    'unexplained',
  );
  assert.equal(explainDivergence(evidence({ seeded: true, draw, drawnFromP: p, backendToken: 4 })).cause, 'unexplained');
  // a token outside the candidates, or a speculative run (its draws are not counted)
  assert.equal(explainDivergence(evidence({ seeded: true, draw, drawnFromP: p, backendToken: 7 })).cause, 'unexplained');
  assert.equal(explainDivergence(evidence({ seeded: true, draw: null, drawnFromP: p })).cause, 'unexplained');
  // seeded, equal logits are no tie: the draw chose
  assert.equal(explainDivergence(evidence({ seeded: true, draw: 0.99, drawnFromP: p })).cause, 'unexplained');
});
