import { describe, expect, it } from "vitest";
import { FrameClock, MediaEngine, MediaLoad } from "../../server/media/index.js";
import { LateTime } from "../helpers/late-time.js";

function running() {
  const time = new LateTime();
  const clock = new FrameClock({ time });
  const stop = clock.subscribe(() => undefined);
  return { time, clock, load: new MediaLoad(clock), stop };
}

describe("MediaLoad: new calls refused while the frame clock runs late", () => {
  it("keeps up while ticks run under 40 ms late, or over it for fewer than 5 of the last 50", () => {
    const { time, load } = running();
    time.run(50, 39);
    expect(load.refusal()).toBeUndefined();
    time.run(4, 45);
    time.run(10, 0);
    expect(load.refusal()).toBeUndefined();
  });

  it("refuses with the reason once 5 of the last 50 ticks ran over 40 ms late, and takes calls again once they are a second behind", () => {
    const { time, load } = running();
    time.run(20, 0);
    time.run(5, 45);
    expect(load.refusal()).toBe("media engine overloaded: 5 of the last 25 frame-clock ticks ran more than 40 ms late (worst 45 ms)");
    time.run(45, 0);
    expect(load.refusal()).toMatch(/^media engine overloaded: 5 of the last 50 /);
    time.run(1, 0);
    expect(load.refusal()).toBeUndefined();
  });

  it("counts the ticks a stall made the clock skip as late", () => {
    const { time, clock, load } = running();
    time.run(10, 0);
    time.stall(500);
    expect(clock.stats().skipped).toBeGreaterThan(0);
    // 10 on time, the 24 skipped (480, 460 ... 20 ms late by their due times), the one delivered on time.
    expect(load.refusal()).toBe("media engine overloaded: 22 of the last 35 frame-clock ticks ran more than 40 ms late (worst 480 ms)");
  });

  it("forgets the lateness once the clock stops (no call left): the next call is taken", () => {
    const { time, clock, load, stop } = running();
    time.run(10, 80);
    expect(load.refusal()).toBeDefined();
    stop();
    expect(clock.running).toBe(false);
    expect(clock.recentLateness()).toEqual([]);
    expect(load.refusal()).toBeUndefined();
  });

  it("takes its thresholds from the engine's options, and refuses nonsense ones", () => {
    const time = new LateTime();
    const engine = new MediaEngine({ frameClock: { time }, load: { lateMs: 10, maxLateTicks: 1 } });
    engine.clock.subscribe(() => undefined);
    time.run(1, 11);
    expect(engine.refusal()).toMatch(/^media engine overloaded: 1 of the last 1 frame-clock ticks ran more than 10 ms late/);
    expect(() => new MediaEngine({ load: { maxLateTicks: 0 } })).toThrow(RangeError);
    expect(() => new MediaEngine({ load: { maxLateTicks: 51 } })).toThrow(RangeError);
    expect(() => new MediaEngine({ load: { lateMs: 0 } })).toThrow(RangeError);
  });
});
