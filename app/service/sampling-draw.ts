// The uniform numbers llama.cpp's dist sampler draws: std::mt19937 seeded with the request's
// seed, one std::uniform_real_distribution<double>(0, 1) per sampled token (libstdc++'s
// generate_canonical: two 32-bit outputs, low word first). The CPU path compares the running
// sum of probabilities in double with it; the backend path casts it to float and compares an
// f32 cumulative sum. `power audit --compare-sampling` uses it to say where a draw fell.

const N = 624;
const M = 397;

class Mt19937 {
  private readonly mt = new Uint32Array(N);
  private index = N;

  constructor(seed: number) {
    this.mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = this.mt[i - 1]! ^ (this.mt[i - 1]! >>> 30);
      // 1812433253 * prev + i, mod 2^32, without losing bits to doubles
      this.mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }

  next(): number {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  private twist(): void {
    for (let i = 0; i < N; i++) {
      const y = (this.mt[i]! & 0x80000000) | (this.mt[(i + 1) % N]! & 0x7fffffff);
      let v = this.mt[(i + M) % N]! ^ (y >>> 1);
      if (y & 1) v ^= 0x9908b0df;
      this.mt[i] = v >>> 0;
    }
    this.index = 0;
  }
}

/** The uniform draw number `index` (0-based) of a dist sampler seeded with `seed`. */
export function uniformDraw(seed: number, index: number): number {
  const rng = new Mt19937(seed);
  let u = 0;
  for (let i = 0; i <= index; i++) {
    const low = rng.next();
    const high = rng.next();
    u = (low + high * 4294967296) / 18446744073709551616;
    if (u >= 1) u = 1 - Number.EPSILON / 2; // as generate_canonical clamps below 1
  }
  return u;
}
