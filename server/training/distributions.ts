// Draws of seconds from a scenario's distributions, each from the run's seeded generator.
import type { Prng } from "./prng.js";
import type { Distribution } from "./scenario.js";

/**
 * One draw in seconds. Normal draws use one Box-Muller pair per draw (the second value is left
 * unused, so each draw takes the same two uniforms whatever came before); lognormal's mean_s and
 * sd_s are the distribution's own, turned into the underlying normal's parameters. min_s and
 * max_s clamp the draw, and no draw is below 0.
 */
export function draw(d: Distribution, rng: Prng): number {
  const mean = d.mean_s ?? 0;
  const sd = d.sd_s ?? 0;
  let x: number;
  switch (d.distribution) {
    case "fixed":
      x = mean;
      break;
    case "exponential":
      x = -mean * Math.log(rng.nextOpen());
      break;
    case "uniform": {
      const min = d.min_s ?? 0;
      x = min + ((d.max_s ?? min) - min) * rng.next();
      break;
    }
    case "normal":
      x = mean + sd * standardNormal(rng);
      break;
    case "lognormal": {
      const sigma2 = Math.log(1 + (sd * sd) / (mean * mean));
      x = Math.exp(Math.log(mean) - sigma2 / 2 + Math.sqrt(sigma2) * standardNormal(rng));
      break;
    }
  }
  return Math.min(Math.max(x, d.min_s ?? 0, 0), d.max_s ?? Infinity);
}

/** The distribution's mean before clamping (offered load, Erlang inputs). */
export function meanOf(d: Distribution): number {
  return d.distribution === "uniform" ? ((d.min_s ?? 0) + (d.max_s ?? d.min_s ?? 0)) / 2 : (d.mean_s ?? 0);
}

function standardNormal(rng: Prng): number {
  const u = rng.nextOpen();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
