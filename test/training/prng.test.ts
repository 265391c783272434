// The training mode's generator: xoshiro128** as its authors define it (its first outputs from
// the state {1, 2, 3, 4}, worked by hand from the reference algorithm), seeded streams that
// repeat and differ, and unbiased integers.
import { describe, expect, it } from "vitest";
import { Prng } from "../../server/training/index.js";

describe("Prng", () => {
  it("gives xoshiro128**'s outputs from the state {1, 2, 3, 4}", () => {
    const rng = Prng.fromState([1, 2, 3, 4]);
    expect([rng.nextUint32(), rng.nextUint32(), rng.nextUint32()]).toEqual([11520, 0, 5927040]);
    expect(() => Prng.fromState([0, 0, 0, 0])).toThrow(RangeError);
  });

  it("repeats a seed's stream, and another seed or stream differs", () => {
    const take = (rng: Prng) => Array.from({ length: 8 }, () => rng.nextUint32());
    expect(take(new Prng(42))).toEqual(take(new Prng(42)));
    expect(take(new Prng(42))).not.toEqual(take(new Prng(43)));
    expect(take(new Prng(42, 1))).not.toEqual(take(new Prng(42, 2)));
    expect(new Prng(9).randomSource().bytes(16)).toEqual(new Prng(9).randomSource().bytes(16));
  });

  it("draws floats in [0, 1) and integers in [0, n) with every value about equally often", () => {
    const rng = new Prng(1);
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 60_000; i += 1) {
      const x = rng.next();
      expect(x >= 0 && x < 1).toBe(true);
      const k = rng.int(6);
      counts[k] = (counts[k] ?? 0) + 1;
    }
    // chi-square(5) at alpha 0.01: 15.09.
    const chi2 = counts.reduce((sum, c) => sum + (c - 10_000) ** 2 / 10_000, 0);
    expect(chi2).toBeLessThan(15.09);
    expect(() => rng.int(0)).toThrow(RangeError);
  });
});
