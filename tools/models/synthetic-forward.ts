// A plain F32 forward pass of a synthetic llama target (the graph of llama.cpp's
// llama model: RMSNorm, RoPE "norm" pairs, grouped-query attention, SwiGLU FFN), used
// to build draft artifacts that know what the target says after a short context. Not an
// inference engine: two positions, one thread, float64 sums over F32 weights.

export interface LlamaShape {
  embd: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ff: number;
  ropeFreqBase: number;
  rmsEps: number;
}

type Weights = (name: string) => Float32Array;

function rmsnorm(x: Float64Array, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v) => v * inv);
}

/** out[o] = Σ_i w[o·nIn + i] · x[i] (ggml's [nIn, nOut] layout, weights of ones for norms are skipped). */
function matvec(w: Float32Array, x: Float64Array, nOut: number): Float64Array {
  const nIn = x.length;
  const out = new Float64Array(nOut);
  for (let o = 0; o < nOut; o++) {
    let s = 0;
    const row = o * nIn;
    for (let i = 0; i < nIn; i++) s += (w[row + i] ?? 0) * (x[i] ?? 0);
    out[o] = s;
  }
  return out;
}

function scale(x: Float64Array, w: Float32Array): Float64Array {
  return x.map((v, i) => v * (w[i] ?? 0));
}

function rope(x: Float64Array, pos: number, headDim: number, base: number): void {
  for (let h = 0; h < x.length / headDim; h++) {
    for (let p = 0; p < headDim / 2; p++) {
      const theta = pos * base ** ((-2 * p) / headDim);
      const a = h * headDim + 2 * p;
      const x0 = x[a] ?? 0;
      const x1 = x[a + 1] ?? 0;
      x[a] = x0 * Math.cos(theta) - x1 * Math.sin(theta);
      x[a + 1] = x0 * Math.sin(theta) + x1 * Math.cos(theta);
    }
  }
}

/**
 * For every token t: the target's greedy next token after [first, t] (e.g. first = BOS), i.e. with
 * the shortest context a chat has. Returns argmax ids, one per token.
 */
export function nextAfterPair(s: LlamaShape, w: Weights, vocabSize: number, first: number): Int32Array {
  const E = s.embd;
  const D = E / s.heads;
  const group = s.heads / s.kvHeads;
  const embd = w('token_embd.weight');
  const row = (t: number) => Float64Array.from(embd.subarray(t * E, (t + 1) * E));
  const layer = (l: number) => ({
    attnNorm: w(`blk.${l}.attn_norm.weight`),
    q: w(`blk.${l}.attn_q.weight`),
    k: w(`blk.${l}.attn_k.weight`),
    v: w(`blk.${l}.attn_v.weight`),
    o: w(`blk.${l}.attn_output.weight`),
    ffnNorm: w(`blk.${l}.ffn_norm.weight`),
    gate: w(`blk.${l}.ffn_gate.weight`),
    up: w(`blk.${l}.ffn_up.weight`),
    down: w(`blk.${l}.ffn_down.weight`),
  });
  const layers = Array.from({ length: s.layers }, (_, l) => layer(l));
  const outNorm = w('output_norm.weight');
  const output = w('output.weight');

  // one position through every layer, attending to the cached keys/values before it
  const step = (x: Float64Array, pos: number, cache: { k: Float64Array; v: Float64Array }[][]) => {
    layers.forEach((L, l) => {
      const h = scale(rmsnorm(x, s.rmsEps), L.attnNorm);
      const q = matvec(L.q, h, s.heads * D);
      const k = matvec(L.k, h, s.kvHeads * D);
      const v = matvec(L.v, h, s.kvHeads * D);
      rope(q, pos, D, s.ropeFreqBase);
      rope(k, pos, D, s.ropeFreqBase);
      const keys = [...(cache[l] ?? []), { k, v }];
      const attn = new Float64Array(s.heads * D);
      for (let hd = 0; hd < s.heads; hd++) {
        const kv = Math.floor(hd / group);
        const scores = keys.map((c) => {
          let dot = 0;
          for (let i = 0; i < D; i++) dot += (q[hd * D + i] ?? 0) * (c.k[kv * D + i] ?? 0);
          return dot / Math.sqrt(D);
        });
        const max = Math.max(...scores);
        const ex = scores.map((x) => Math.exp(x - max));
        const sum = ex.reduce((a, b) => a + b, 0);
        keys.forEach((c, j) => {
          for (let i = 0; i < D; i++) attn[hd * D + i] = (attn[hd * D + i] ?? 0) + ((ex[j] ?? 0) / sum) * (c.v[kv * D + i] ?? 0);
        });
      }
      const o = matvec(L.o, attn, E);
      for (let i = 0; i < E; i++) x[i] = (x[i] ?? 0) + (o[i] ?? 0);
      const f = scale(rmsnorm(x, s.rmsEps), L.ffnNorm);
      const g = matvec(L.gate, f, s.ff);
      const u = matvec(L.up, f, s.ff);
      const a = g.map((z, i) => (z / (1 + Math.exp(-z))) * (u[i] ?? 0));
      const d = matvec(L.down, a, E);
      for (let i = 0; i < E; i++) x[i] = (x[i] ?? 0) + (d[i] ?? 0);
      cache[l] = keys;
    });
    return x;
  };

  const prefix: { k: Float64Array; v: Float64Array }[][] = [];
  step(row(first), 0, prefix);
  const next = new Int32Array(vocabSize);
  for (let t = 0; t < vocabSize; t++) {
    const cache = prefix.map((c) => [...c]);
    const x = step(row(t), 1, cache);
    const h = scale(rmsnorm(x, s.rmsEps), outNorm);
    const logits = matvec(output, h, vocabSize);
    let best = 0;
    for (let v = 1; v < vocabSize; v++) if ((logits[v] ?? -Infinity) > (logits[best] ?? -Infinity)) best = v;
    next[t] = best;
  }
  return next;
}
