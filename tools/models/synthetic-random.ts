// Seeded randomness of the synthetic models: every tensor draws from its own seed text.
import type { GgufTensorSpec } from '../../app/gguf/types.js';

/** FNV-1a, to turn "seed/tensor-name" into a 32-bit PRNG seed. */
function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Adds `std`·N(0,1) samples (Box–Muller) drawn from `seedText` to `out`. */
export function addGaussian(out: Float32Array, std: number, seedText: string): void {
  const next = mulberry32(hashSeed(seedText));
  for (let i = 0; i < out.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - next())) * std;
    const theta = 2 * Math.PI * next();
    out[i] = (out[i] ?? 0) + r * Math.cos(theta);
    if (i + 1 < out.length) out[i + 1] = (out[i + 1] ?? 0) + r * Math.sin(theta);
  }
}

/** A constant, or N(0, std²) samples. */
export type F32Init = { std: number } | { value: number };

/**
 * An F32 tensor whose values are made when it is written: the constant, or N(0, std²) drawn from
 * "seed/name"; then `more` (noise, masks) on them.
 */
export function f32Tensor(name: string, shape: number[], init: F32Init, seed: number, more?: (data: Float32Array) => void): GgufTensorSpec {
  const n = shape.reduce((a, b) => a * b, 1);
  return {
    name,
    shape,
    type: 'f32',
    data: () => {
      const out = new Float32Array(n);
      if ('value' in init) out.fill(init.value);
      else addGaussian(out, init.std, `${seed}/${name}`);
      more?.(out);
      return out;
    },
  };
}
