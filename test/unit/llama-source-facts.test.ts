// What the build reads from the llama.cpp source instead of copying it by hand
// (scripts/native/llama-source-facts.mjs): the targets whose graph hands its layer inputs to a
// draft artifact. The library's check (build-info.json) and the engine's (compiled in) use it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { readBuildInfo } from '../../app/engine/build-info.js';
import { layerInputTargets } from '../../app/models/draft-compat.js';
import { ROOT } from '../../app/paths.js';
import { knownArchitectures, layerInputArchitectures } from '../../scripts/native/llama-source-facts.mjs';

const SRC = join(ROOT, 'build', 'llama.cpp');

describe('facts read from the llama.cpp source', () => {
  test('the layer-input targets are the graphs that set t_layer_inp, under their GGUF names', () => {
    const archs = layerInputArchitectures(SRC);
    // a template graph (llama, lfm2), a class whose file name differs from its name (gpt-oss), plain ones
    for (const a of ['llama', 'lfm2', 'gpt-oss', 'qwen3', 'qwen35', 'qwen3moe', 'gemma4'])
      assert.ok(archs.includes(a), `${a} in ${archs.join(' ')}`);
    // graphs that keep no layer inputs
    for (const a of ['gemma3', 'qwen2', 'phi3']) assert.ok(!archs.includes(a), a);
    assert.ok(archs.every((a) => knownArchitectures(SRC).includes(a)));
  });

  test("the library's check reads the list the addon was built with", () => {
    assert.deepEqual([...layerInputTargets()], readBuildInfo().layerInputArchitectures);
    assert.deepEqual(readBuildInfo().layerInputArchitectures, layerInputArchitectures(SRC));
  });
});
