import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { FrameClock, MediaEngine, MediaLoad, type CpuMeter } from "../../server/media/index.js";
import { LateTime } from "../helpers/late-time.js";

/** The process's CPU as a test says: `cores` used from now on, a second passing per refusal(). */
class FakeCpu implements CpuMeter {
  #at = 0;
  #used = 0;
  cores = 0;

  now(): number {
    return this.#at;
  }

  usedMs(): number {
    return this.#used;
  }

  /** A second passes at `cores`. */
  second(): void {
    this.#at += 1000;
    this.#used += 1000 * this.cores;
  }
}

function running(busyCores?: number) {
  const time = new LateTime();
  const cpu = new FakeCpu();
  const clock = new FrameClock({ time });
  const stop = clock.subscribe(() => undefined);
  const load = new MediaLoad(clock, { cpu, busyCores }, 3);
  /** The check as a new call makes it, a second after the last one, the server at `cores`. */
  const check = (cores: number) => {
    cpu.cores = cores;
    cpu.second();
    return load.refusal();
  };
  return { time, clock, load, stop, check };
}

describe("MediaLoad: new calls refused while the frame clock runs late and the server is busy", () => {
  it("keeps up while ticks run under 40 ms late, or over it for fewer than 5 of the last 50", () => {
    const { time, check } = running();
    time.run(50, 39);
    expect(check(2)).toBeUndefined();
    time.run(4, 45);
    time.run(10, 0);
    expect(check(2)).toBeUndefined();
  });

  it("refuses with the reason once 5 of the last 50 ticks ran over 40 ms late, and takes calls again once fewer did", () => {
    const { time, check } = running();
    time.run(20, 0);
    time.run(5, 45);
    expect(check(1.9)).toBe("media engine overloaded: 5 of the last 25 frame-clock ticks ran more than 40 ms late (worst 45 ms) while the server used 1.9 cores");
    time.run(45, 0);
    expect(check(1.9)).toMatch(/^media engine overloaded: 5 of the last 50 /);
    time.run(1, 0);
    expect(check(1.9)).toBeUndefined();
  });

  it("takes calls while the ticks are late but the server is not busy: the lateness is other processes'", () => {
    const { time, load, check } = running();
    // Three media threads (main and two workers) on this machine: busy from 0.8 of each.
    expect(load.busyCores).toBeCloseTo(0.8 * Math.min(3, availableParallelism()), 5);
    time.run(50, 80);
    expect(check(load.busyCores - 0.05)).toBeUndefined();
    expect(check(load.busyCores)).toMatch(/^media engine overloaded: 50 of the last 50 /);
  });

  it("counts the ticks a stall made the clock skip as late", () => {
    const { time, clock, check } = running(1);
    time.run(10, 0);
    time.stall(500);
    expect(clock.stats().skipped).toBeGreaterThan(0);
    // 10 on time, the 24 skipped (480, 460 ... 20 ms late by their due times), the one delivered on time.
    expect(check(1)).toBe("media engine overloaded: 22 of the last 35 frame-clock ticks ran more than 40 ms late (worst 480 ms) while the server used 1.0 cores");
  });

  it("forgets the lateness once the clock stops (no call left): the next call is taken", () => {
    const { time, clock, check, stop } = running(1);
    time.run(10, 80);
    expect(check(1)).toBeDefined();
    stop();
    expect(clock.running).toBe(false);
    expect(clock.recentLateness()).toEqual([]);
    expect(check(1)).toBeUndefined();
  });

  it("takes its thresholds from the engine's options, and refuses nonsense ones", () => {
    const time = new LateTime();
    const cpu = new FakeCpu();
    const engine = new MediaEngine({ frameClock: { time }, load: { lateMs: 10, maxLateTicks: 1, busyCores: 0.5, cpu } });
    engine.clock.subscribe(() => undefined);
    time.run(1, 11);
    cpu.cores = 0.5;
    cpu.second();
    expect(engine.refusal()).toMatch(/^media engine overloaded: 1 of the last 1 frame-clock ticks ran more than 10 ms late .* 0\.5 cores$/);
    expect(new MediaEngine({ workers: 2 }).load.busyCores).toBeGreaterThan(new MediaEngine().load.busyCores);
    expect(() => new MediaEngine({ load: { maxLateTicks: 0 } })).toThrow(RangeError);
    expect(() => new MediaEngine({ load: { maxLateTicks: 51 } })).toThrow(RangeError);
    expect(() => new MediaEngine({ load: { lateMs: 0 } })).toThrow(RangeError);
    expect(() => new MediaEngine({ load: { busyCores: -1 } })).toThrow(RangeError);
  });
});
