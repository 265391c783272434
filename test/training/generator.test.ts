// The seeded generator: the same seed gives the same callers; the arrivals follow the profile's
// rates (chi-square over many simulated hours) and patience follows its distribution
// (Kolmogorov-Smirnov), each at a fixed seed so the verdict never changes between runs.
import { describe, expect, it } from "vitest";
import { plannedCallers, Prng, type Distribution } from "../../server/training/index.js";
import { draw } from "../../server/training/distributions.js";
import { persona, scenario } from "./fixtures.js";

/** The hourly multipliers of a working day: quiet night, a morning peak, lunch, an afternoon bump. */
const DAY = [0.2, 0.1, 0.1, 0.1, 0.2, 0.4, 0.8, 1.5, 2.5, 3, 2.5, 2, 1.5, 1.8, 2.2, 2, 1.6, 1.2, 0.9, 0.7, 0.5, 0.4, 0.3, 0.2];

function dayScenario(seed: number) {
  return scenario({
    seed,
    duration_s: 86_400,
    queues: [{ number: "+14155550100", rate_per_hour: 200, profile: DAY.map((multiplier, h) => ({ from_s: h * 3600, to_s: (h + 1) * 3600, multiplier })) }],
  });
}

describe("the same seed, the same callers", () => {
  it("draws the same arrival times, personas, numbers and draws in two runs; another seed differs", () => {
    const s = scenario({
      personas: [persona({ name: "Calm", weight: 3 }), persona({ name: "Hurried", weight: 1, patience: { distribution: "lognormal", mean_s: 30, sd_s: 20 }, talk_time: { distribution: "normal", mean_s: 200, sd_s: 60 } })],
      queues: [
        { number: "+14155550100", rate_per_hour: 90, bursts: [{ at_s: 600, count: 12, within_s: 30 }] },
        { number: "+14155550200", rate_per_hour: 40, profile: [{ from_s: 0, to_s: 1800, multiplier: 2 }] },
      ],
      faults: [{ at_s: 1200, kind: "burst", target: "+14155550200", count: 5 }],
    });
    const first = plannedCallers(s);
    const second = plannedCallers(structuredClone(s));
    expect(first.length).toBeGreaterThan(100);
    expect(second).toEqual(first);
    expect(new Set(first.map((c) => c.persona_name))).toEqual(new Set(["Calm", "Hurried"]));
    expect(first.filter((c) => c.source === "burst")).toHaveLength(12);
    expect(first.filter((c) => c.source === "fault")).toHaveLength(5);
    for (const c of first) expect(c.caller_id.number).toMatch(/^\+1415555\d{4}$/);
    const other = plannedCallers({ ...s, seed: 8 });
    expect(other.map((c) => c.arrival_s)).not.toEqual(first.map((c) => c.arrival_s));
  });

  it("keeps arrivals in time order, within the run, and bursts within their window", () => {
    const callers = plannedCallers(scenario({ queues: [{ number: "+14155550100", rate_per_hour: 300, bursts: [{ at_s: 100, count: 50, within_s: 20 }] }] }));
    const times = callers.map((c) => c.arrival_s);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (const c of callers) {
      const [from, to] = c.source === "burst" ? [100, 120] : [0, 3600];
      expect(c.arrival_s).toBeGreaterThanOrEqual(from);
      expect(c.arrival_s).toBeLessThan(to);
    }
    expect(callers.map((c) => c.index)).toEqual(callers.map((_, i) => i));
  });

  it("a persona that never abandons has no patience; one that texts is marked so", () => {
    const callers = plannedCallers(scenario({ personas: [persona({ name: "Stays", abandons: false }), persona({ name: "Texter", texts_instead: true })] }));
    for (const c of callers) {
      if (c.persona_name === "Stays") expect(c.patience_s).toBeNull();
      else expect(c.texts_instead).toBe(true);
    }
  });
});

describe("statistics", () => {
  it("arrival counts per hour match the profile's rates: chi-square over 120 simulated hours under its 1% critical value", () => {
    // Five days at five seeds, 24 hourly bins each: the expected count of every bin is known
    // exactly (rate x multiplier), so the statistic has 120 degrees of freedom.
    let chi2 = 0;
    let bins = 0;
    let total = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const counts = new Array<number>(24).fill(0);
      for (const c of plannedCallers(dayScenario(seed))) counts[Math.floor(c.arrival_s / 3600)] = (counts[Math.floor(c.arrival_s / 3600)] ?? 0) + 1;
      DAY.forEach((m, h) => {
        const expected = 200 * m;
        chi2 += ((counts[h] ?? 0) - expected) ** 2 / expected;
        bins += 1;
        total += counts[h] ?? 0;
      });
    }
    expect(bins).toBe(120);
    expect(total).toBeGreaterThan(25_000);
    // chi-square(120) at alpha 0.01 (tables): 158.95.
    expect(chi2).toBeLessThan(158.95);
  });

  it("the same day with the profile ignored would fail the test: a flat rate of the same total is far off", () => {
    // The statistic has the power to see a wrong profile: a flat day with the same mean.
    const flat = DAY.reduce((a, b) => a + b, 0) / 24;
    const callers = plannedCallers(scenario({ seed: 1, duration_s: 86_400, queues: [{ number: "+14155550100", rate_per_hour: 200 * flat }] }));
    const counts = new Array<number>(24).fill(0);
    for (const c of callers) counts[Math.floor(c.arrival_s / 3600)] = (counts[Math.floor(c.arrival_s / 3600)] ?? 0) + 1;
    const chi2 = DAY.reduce((sum, m, h) => sum + ((counts[h] ?? 0) - 200 * m) ** 2 / (200 * m), 0);
    // chi-square(24) at alpha 0.01: 42.98.
    expect(chi2).toBeGreaterThan(42.98);
  });

  it("patience follows its distribution: Kolmogorov-Smirnov statistic under its 1% critical value (exponential and lognormal)", () => {
    const cases: { d: Distribution; cdf: (x: number) => number }[] = [
      { d: { distribution: "exponential", mean_s: 90 }, cdf: (x) => 1 - Math.exp(-x / 90) },
      { d: { distribution: "lognormal", mean_s: 60, sd_s: 40 }, cdf: lognormalCdf(60, 40) },
    ];
    for (const { d, cdf } of cases) {
      const s = scenario({ seed: 11, duration_s: 86_400, queues: [{ number: "+14155550100", rate_per_hour: 150 }], personas: [persona({ patience: d })] });
      const patience = plannedCallers(s).map((c) => c.patience_s ?? -1);
      expect(patience.length).toBeGreaterThan(3000);
      const stat = ks(patience, cdf);
      // Critical value at alpha 0.01 for large n: 1.628 / sqrt(n).
      expect(stat, d.distribution).toBeLessThan(1.628 / Math.sqrt(patience.length));
    }
  });

  it("uniform, normal and fixed draws keep their bounds and means", () => {
    const rng = new Prng(3);
    const uniform = Array.from({ length: 5000 }, () => draw({ distribution: "uniform", min_s: 10, max_s: 30 }, rng));
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...uniform)).toBeLessThan(30);
    expect(ks(uniform, (x) => Math.min(1, Math.max(0, (x - 10) / 20)))).toBeLessThan(1.628 / Math.sqrt(5000));
    const normal = Array.from({ length: 5000 }, () => draw({ distribution: "normal", mean_s: 200, sd_s: 30, min_s: 100 }, rng));
    expect(Math.min(...normal)).toBeGreaterThanOrEqual(100);
    expect(Math.abs(normal.reduce((a, b) => a + b, 0) / 5000 - 200)).toBeLessThan(3);
    expect(draw({ distribution: "fixed", mean_s: 42 }, rng)).toBe(42);
  });
});

/** The largest distance between the sample's empirical distribution and `cdf`. */
function ks(sample: readonly number[], cdf: (x: number) => number): number {
  const sorted = [...sample].sort((a, b) => a - b);
  const n = sorted.length;
  let d = 0;
  sorted.forEach((x, i) => {
    const f = cdf(x);
    d = Math.max(d, Math.abs(f - i / n), Math.abs((i + 1) / n - f));
  });
  return d;
}

/** The lognormal CDF for the distribution's own mean and standard deviation. */
function lognormalCdf(mean: number, sd: number): (x: number) => number {
  const sigma2 = Math.log(1 + (sd * sd) / (mean * mean));
  const mu = Math.log(mean) - sigma2 / 2;
  return (x) => (x <= 0 ? 0 : 0.5 * (1 + erf((Math.log(x) - mu) / Math.sqrt(2 * sigma2))));
}

/** Abramowitz and Stegun 7.1.26: absolute error under 1.5e-7. */
function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return sign * y;
}
