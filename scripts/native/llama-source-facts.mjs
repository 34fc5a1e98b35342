// Facts read from the llama.cpp source the addon is built against, so that they follow the release
// instead of being copied by hand: the architectures it loads, and those whose graph hands its
// layer inputs to a draft artifact. Both go into build-info.json; the second is also compiled into
// the addon (native/CMakeLists.txt, POWER_LAYER_INPUT_ARCHS), so the library's check in Node and
// the engine's check in C++ hold one list.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { fail } from './flavours.mjs';

/** LLM_ARCH_<ID> -> its GGUF name, from llama-arch.cpp's name table (clip, a quantizer-only dummy, and unknown left out). */
function archNames(srcDir) {
  const text = readFileSync(join(srcDir, 'src', 'llama-arch.cpp'), 'utf8');
  const table = text.slice(text.indexOf('LLM_ARCH_NAMES'), text.indexOf('};', text.indexOf('LLM_ARCH_NAMES')));
  const names = new Map(
    [...table.matchAll(/\{\s*LLM_ARCH_(\w+),\s*"([^"]+)"\s*\}/g)].filter(([, id]) => id !== 'CLIP' && id !== 'UNKNOWN').map(([, id, name]) => [id, name]),
  );
  if (names.size < 10) fail('could not read the architecture table from llama-arch.cpp');
  return names;
}

/** The architectures this llama.cpp release can load. */
export function knownArchitectures(srcDir) {
  return [...archNames(srcDir).values()];
}

/**
 * The architectures whose graph stores every layer's input (res->t_layer_inp, which
 * llama_get_embeddings_layer_inp reads): the only targets an EAGLE-3/DFlash/DSpark artifact can
 * read; on any other, asking for them aborts while the graph is built. Found as: the model
 * classes whose graph (src/models/*.cpp, llama_model_<x>::graph) sets t_layer_inp, and the
 * architectures llama-model.cpp creates those classes for.
 */
export function layerInputArchitectures(srcDir) {
  const modelsDir = join(srcDir, 'src', 'models');
  const classes = new Set();
  for (const file of readdirSync(modelsDir).filter((f) => f.endsWith('.cpp'))) {
    const text = readFileSync(join(modelsDir, file), 'utf8');
    if (!text.includes('t_layer_inp[')) continue;
    for (const m of text.matchAll(/llama_model_(\w+)::graph(?:<[^>]*>)?::graph\(/g)) classes.add(m[1]);
  }
  const factory = readFileSync(join(srcDir, 'src', 'llama-model.cpp'), 'utf8');
  const names = archNames(srcDir);
  const out = new Set();
  for (const m of factory.matchAll(/((?:case LLM_ARCH_\w+:\s*)+)return new llama_model_(\w+)\(/g)) {
    if (!classes.has(m[2])) continue;
    for (const [, id] of m[1].matchAll(/LLM_ARCH_(\w+)/g)) if (names.has(id)) out.add(names.get(id));
  }
  if (classes.size === 0 || out.size === 0 || !out.has('llama')) {
    fail("could not read which llama.cpp graphs expose their layer inputs (src/models/*.cpp, llama-model.cpp): the release's layout changed");
  }
  return [...out].sort();
}
