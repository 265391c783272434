// The training mode's one seeded generator: every arrival, persona, patience, talk and handle time
// of a run is drawn from it, so a scenario at a fixed seed plays out the same every time.
//
// The algorithm is xoshiro128** (Blackman and Vigna, "Scrambled linear pseudorandom number
// generators", 2018): 128 bits of state, period 2^128 - 1, passes BigCrush, and needs only 32-bit
// integer arithmetic, which JavaScript does exactly through Math.imul and `>>> 0`. Its state is
// filled from the seed by SplitMix32 steps (a Weyl sequence through a 32-bit finaliser), as the
// authors advise, so neighbouring seeds give unrelated streams. Written here rather than taken from
// a package: the registry's well-kept option (pure-rand) is only a development dependency of
// fast-check in this project, and the server ships its runtime dependencies alone.
import type { RandomSource } from "../clock.js";

const TWO_POW_32 = 2 ** 32;

/** SplitMix32's output function: a 32-bit finaliser of one step of the golden-ratio sequence. */
function mix32(x: number): number {
  let z = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** `seed` is an unsigned 32-bit integer; `stream` picks an independent stream of the same seed. */
  constructor(seed: number, stream = 0) {
    let x = (seed ^ Math.imul(stream + 1, 0x632be5ab)) >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      return mix32(x);
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
    // The all-zero state is the one xoshiro cannot leave.
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** A generator at the given state (the algorithm's reference vectors start from one). */
  static fromState(state: readonly [number, number, number, number]): Prng {
    const rng = new Prng(0);
    [rng.#s0, rng.#s1, rng.#s2, rng.#s3] = state.map((x) => x >>> 0) as [number, number, number, number];
    if ((rng.#s0 | rng.#s1 | rng.#s2 | rng.#s3) === 0) throw new RangeError("xoshiro128** cannot start from the all-zero state");
    return rng;
  }

  /** The next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.#s1 << 9) >>> 0;
    this.#s2 = (this.#s2 ^ this.#s0) >>> 0;
    this.#s3 = (this.#s3 ^ this.#s1) >>> 0;
    this.#s1 = (this.#s1 ^ this.#s2) >>> 0;
    this.#s0 = (this.#s0 ^ this.#s3) >>> 0;
    this.#s2 = (this.#s2 ^ t) >>> 0;
    this.#s3 = rotl(this.#s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    const high = this.nextUint32() >>> 5;
    const low = this.nextUint32() >>> 6;
    return (high * 67108864 + low) / 9007199254740992;
  }

  /** Uniform in (0, 1]: safe under a logarithm. */
  nextOpen(): number {
    return 1 - this.next();
  }

  /** A uniform integer in [0, n), without modulo bias (rejection of the short last range). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > TWO_POW_32) throw new RangeError(`int(n) takes an integer in 1..2^32, not ${n}`);
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** The engine's RandomSource (session ids) drawn from this stream. */
  randomSource(): RandomSource {
    return {
      bytes: (n) => {
        const out = Buffer.alloc(n);
        for (let i = 0; i < n; i += 4) {
          const word = this.nextUint32();
          for (let j = 0; j < 4 && i + j < n; j += 1) out[i + j] = (word >>> (8 * j)) & 0xff;
        }
        return out;
      },
    };
  }
}
