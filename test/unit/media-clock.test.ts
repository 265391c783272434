import { describe, expect, it } from "vitest";
import { FrameClock } from "../../server/media/frame-clock.js";
import { HandTime } from "../helpers/hand-time.js";


function setup(options: { maxCatchUpTicks?: number } = {}) {
  const time = new HandTime();
  const clock = new FrameClock({ time, ...options });
  const ticks: { tick: number; at: number }[] = [];
  const stop = clock.subscribe((tick) => ticks.push({ tick, at: time.now() }));
  return { time, clock, ticks, stop };
}

describe("FrameClock", () => {
  it("ticks every 20 ms, numbered one by one", () => {
    const { time, ticks } = setup();
    time.advanceTo(1000);
    expect(ticks).toHaveLength(50);
    expect(ticks.map((t) => t.tick)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(ticks.map((t) => t.at)).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * 20));
  });

  it("does not drift when every timer fires late", () => {
    const { time, clock, ticks } = setup();
    time.lateMs = 3;
    time.advanceTo(100_000);
    // Deadlines stay on the 20 ms grid: 5000 ticks in 100 s (the last one is 3 ms from due).
    expect(ticks.length).toBeGreaterThanOrEqual(4999);
    expect(ticks.length).toBeLessThanOrEqual(5000);
    expect(clock.stats().latenessP50Ms).toBeCloseTo(3, 0);
    expect(clock.stats().skipped).toBe(0);
  });

  it("catches up after a stall with the ticks it owes, one timer turn apart, then resumes the cadence", () => {
    const { time, clock, ticks } = setup();
    time.advanceTo(100);
    expect(ticks).toHaveLength(5);
    time.stall(95); // t = 195: ticks due at 120..180 are owed
    time.advanceTo(200);
    // Each owed tick is re-armed with no delay (1 ms here), so I/O can run between them.
    expect(ticks.slice(5)).toEqual([
      { tick: 6, at: 195 },
      { tick: 7, at: 196 },
      { tick: 8, at: 197 },
      { tick: 9, at: 198 },
      { tick: 10, at: 200 },
    ]);
    time.advanceTo(400);
    expect(ticks).toHaveLength(20);
    expect(clock.stats().latenessMaxMs).toBe(75);
  });

  it("tells each listener how late the tick it is delivering runs (legs drop stale audio by it)", () => {
    const time = new HandTime();
    const clock = new FrameClock({ time });
    const late: number[] = [];
    clock.subscribe(() => late.push(clock.lateMs));
    time.advanceTo(100);
    expect(late).toEqual([0, 0, 0, 0, 0]);
    time.stall(95); // t = 195: the ticks due at 120..180 are delivered 75..15 ms late
    time.advanceTo(200);
    expect(late.slice(5)).toEqual([75, 56, 37, 18, 0]);
  });

  it("skips ahead instead of bursting after a stall longer than maxCatchUpTicks", () => {
    const { time, clock, ticks } = setup({ maxCatchUpTicks: 5 });
    time.advanceTo(20);
    time.stall(1000);
    time.advanceTo(1030);
    const stats = clock.stats();
    expect(stats.skipped).toBeGreaterThanOrEqual(45);
    // Tick numbers still count time, so RTP timestamps derived from them stay honest.
    expect(ticks.at(-1)?.tick).toBe(51);
    expect(ticks.length).toBeLessThan(10);
  });

  it("stops and leaves no timer when the last listener unsubscribes, restarts on the next", () => {
    const { time, clock, ticks, stop } = setup();
    const other = clock.subscribe(() => undefined);
    time.advanceTo(40);
    stop();
    expect(clock.running).toBe(true);
    other();
    expect(clock.running).toBe(false);
    expect(time.pending).toBe(0);
    time.advanceTo(1000);
    expect(ticks).toHaveLength(2);
    const again: number[] = [];
    clock.subscribe((tick) => again.push(tick));
    time.advanceTo(1040);
    expect(again).toEqual([3, 4]);
  });

  it("keeps ticking for the others when a listener throws, and reports the error", () => {
    const errors: unknown[] = [];
    const time = new HandTime();
    const clock = new FrameClock({ time, onListenerError: (e) => errors.push(e) });
    let calls = 0;
    clock.subscribe(() => {
      throw new Error("boom");
    });
    clock.subscribe(() => calls++);
    time.advanceTo(60);
    expect(calls).toBe(3);
    expect(errors).toHaveLength(3);
  });

  it("lets a listener join inside a tick without restarting the schedule", () => {
    const time = new HandTime();
    const clock = new FrameClock({ time });
    const late: number[] = [];
    const stop = clock.subscribe((tick) => {
      if (tick === 2) clock.subscribe((t) => late.push(time.now() - t * 20));
    });
    time.advanceTo(200);
    stop();
    expect(late.length).toBeGreaterThanOrEqual(8);
    expect(new Set(late)).toEqual(new Set([0]));
    expect(time.pending).toBe(1);
  });

  it("on real time, delivers ticks never ahead of the 20 ms they stand for, and counts them", async () => {
    const clock = new FrameClock();
    let count = 0;
    const started = performance.now();
    const stop = clock.subscribe(() => count++);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const expected = Math.floor((performance.now() - started) / 20);
    stop();
    // Never ahead of real time; how far behind a busy machine leaves it is a figure (bench/media.ts).
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(expected);
    const stats = clock.stats();
    expect(stats.ticks).toBe(count);
    expect(Number.isFinite(stats.latenessMaxMs)).toBe(true);
    expect(clock.running).toBe(false);
  });
});
