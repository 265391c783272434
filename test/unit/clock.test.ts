// The server's clocks: the manual one tests drive, and the controllable one the training mode will
// run paused, fast or jumped ahead (here on a manual clock standing for real time).
import { describe, expect, it } from "vitest";
import { ControllableClock, ManualClock, SwitchedClock } from "../../server/clock-control.js";
import { randomUuid, systemClock, systemRandom } from "../../server/clock.js";

describe("ManualClock", () => {
  it("runs due timers in time order, ties in the order set, each at its own time", async () => {
    const clock = new ManualClock(1000);
    const ran: string[] = [];
    clock.after(300, () => ran.push(`c@${clock.now()}`));
    clock.after(100, () => ran.push(`a@${clock.now()}`));
    clock.after(100, () => ran.push(`b@${clock.now()}`));
    clock.after(500, () => ran.push("late"));
    await clock.advance(300);
    expect(ran).toEqual(["a@1100", "b@1100", "c@1300"]);
    expect(clock.now()).toBe(1300);
    expect(clock.pending()).toBe(1);
  });

  it("does not run a cancelled timer, and cancelling after it ran is harmless", async () => {
    const clock = new ManualClock(0);
    const ran: string[] = [];
    const cancel = clock.after(10, () => ran.push("cancelled"));
    const done = clock.after(5, () => ran.push("ran"));
    cancel();
    await clock.advance(20);
    done();
    expect(ran).toEqual(["ran"]);
    expect(clock.pending()).toBe(0);
  });

  it("runs a timer set by a timer when it falls due within the same advance", async () => {
    const clock = new ManualClock(0);
    const ran: number[] = [];
    clock.after(10, () => {
      ran.push(clock.now());
      clock.after(10, () => ran.push(clock.now()));
      clock.after(0, () => ran.push(clock.now()));
    });
    clock.after(15, () => ran.push(clock.now()));
    await clock.advance(25);
    expect(ran).toEqual([10, 10, 15, 20]);
  });

  it("repeats an every() timer each period until cancelled", async () => {
    const clock = new ManualClock(0);
    const ran: number[] = [];
    const cancel = clock.every(100, () => ran.push(clock.now()));
    await clock.advance(350);
    cancel();
    await clock.advance(1000);
    expect(ran).toEqual([100, 200, 300]);
  });

  it("lets a timer's promises settle before the next timer runs", async () => {
    const clock = new ManualClock(0);
    const ran: string[] = [];
    clock.after(1, () => void Promise.resolve().then(() => ran.push("first's promise")));
    clock.after(2, () => ran.push("second"));
    await clock.advance(2);
    expect(ran).toEqual(["first's promise", "second"]);
  });

  it("tells when its next timer is due", async () => {
    const clock = new ManualClock(0);
    expect(clock.nextDue()).toBeUndefined();
    const cancel = clock.after(70, () => undefined);
    clock.after(90, () => undefined);
    expect(clock.nextDue()).toBe(70);
    cancel();
    expect(clock.nextDue()).toBe(90);
  });

  it("runUntil steps from due time to due time until the condition holds", async () => {
    const clock = new ManualClock(0);
    let rings = 0;
    clock.every(1000, () => rings++);
    expect(await clock.runUntil(() => rings === 3, 10_000)).toBe(true);
    expect(clock.now()).toBe(3000);
    expect(await clock.runUntil(() => rings === 100, 2500)).toBe(false);
    expect(clock.now()).toBe(5500);
  });
});

/** A controllable clock over a manual one standing for real time. */
function controllable(rate = 1): { real: ManualClock; clock: ControllableClock } {
  const real = new ManualClock(0);
  return { real, clock: new ControllableClock({ base: real, startMs: 1_000_000, rate }) };
}

describe("ControllableClock", () => {
  it("follows real time at its rate", async () => {
    const { real, clock } = controllable(4);
    await real.advance(250);
    expect(clock.now()).toBe(1_001_000);
  });

  it("fires a timer at the real moment its virtual time comes", async () => {
    const { real, clock } = controllable(10);
    const ran: number[] = [];
    clock.after(5000, () => ran.push(clock.now()));
    await real.advance(499);
    expect(ran).toEqual([]);
    await real.advance(1);
    expect(ran).toEqual([1_005_000]);
  });

  it("sets the real wait again when the rate changes mid-wait", async () => {
    const { real, clock } = controllable(1);
    const ran: number[] = [];
    clock.after(10_000, () => ran.push(real.now()));
    await real.advance(4000);
    clock.setRate(6);
    // 6 s of virtual time left, at 6x: 1 s of real time.
    await real.advance(999);
    expect(ran).toEqual([]);
    await real.advance(1);
    expect(ran).toEqual([5000]);
  });

  it("holds time and timers while paused, and goes on where it stopped", async () => {
    const { real, clock } = controllable(1);
    const ran: number[] = [];
    clock.after(1000, () => ran.push(clock.now()));
    await real.advance(400);
    clock.pause();
    expect(clock.paused).toBe(true);
    await real.advance(10_000);
    expect(clock.now()).toBe(1_000_400);
    expect(ran).toEqual([]);
    clock.resume();
    await real.advance(599);
    expect(ran).toEqual([]);
    await real.advance(1);
    expect(ran).toEqual([1_001_000]);
  });

  it("runs at once, in order, what a jump forward made due, and later timers at their time", async () => {
    const { real, clock } = controllable(1);
    const ran: string[] = [];
    clock.after(3000, () => ran.push("b"));
    clock.after(1000, () => ran.push("a"));
    clock.after(9000, () => ran.push("c"));
    clock.jump(5000);
    expect(ran).toEqual([]);
    await real.advance(0);
    expect(ran).toEqual(["a", "b"]);
    await real.advance(3999);
    expect(ran).toEqual(["a", "b"]);
    await real.advance(1);
    expect(ran).toEqual(["a", "b", "c"]);
  });

  it("runs an every() timer once for a jump over many periods, then keeps its period", async () => {
    const { real, clock } = controllable(1);
    const ran: number[] = [];
    clock.every(1000, () => ran.push(clock.now() - 1_000_000));
    clock.jump(10_500);
    await real.advance(0);
    expect(ran).toEqual([10_500]);
    await real.advance(1000);
    expect(ran).toEqual([10_500, 11_500]);
  });

  it("refuses to jump back or to run at a rate that is not positive", () => {
    const { clock } = controllable(1);
    expect(() => clock.jumpTo(999_999)).toThrow(RangeError);
    expect(() => clock.setRate(0)).toThrow(RangeError);
    expect(() => clock.setRate(Number.NaN)).toThrow(RangeError);
    expect(clock.rate).toBe(1);
  });

  it("drops a cancelled timer", async () => {
    const { real, clock } = controllable(1);
    const ran: string[] = [];
    const cancel = clock.after(100, () => ran.push("x"));
    cancel();
    await real.advance(1000);
    expect(ran).toEqual([]);
    expect(clock.pending()).toBe(0);
    expect(real.pending()).toBe(0);
  });

  it("tells when its next timer is due, and runs what is due at once on runDue (serve mode's clock control)", async () => {
    const { real, clock } = controllable(1);
    const ran: number[] = [];
    expect(clock.nextDue()).toBeUndefined();
    clock.after(3000, () => ran.push(clock.now()));
    clock.after(1000, () => ran.push(clock.now()));
    expect(clock.nextDue()).toBe(1_001_000);
    clock.jumpTo(1_001_000);
    // Due, not yet run (its real wake is the next turn): runDue runs it now, without waiting.
    expect(ran).toEqual([]);
    clock.runDue();
    expect(ran).toEqual([1_001_000]);
    expect(clock.nextDue()).toBe(1_003_000);
    // Nothing else due: runDue does nothing, and the remaining timer still fires on real time.
    clock.runDue();
    expect(ran).toEqual([1_001_000]);
    await real.advance(2000);
    expect(ran).toEqual([1_001_000, 1_003_000]);
  });
});

describe("SwitchedClock", () => {
  it("moves its waiting timers to a new source with the time they had left, and reads the new source's time", async () => {
    const real = new ManualClock(1_000_000);
    const run = new ControllableClock({ base: real });
    const clock = new SwitchedClock(real);
    const ran: string[] = [];
    clock.after(10_000, () => ran.push("timeout"));
    const cancelled = clock.after(20_000, () => ran.push("cancelled"));
    await real.advance(4_000);
    expect(clock.switchTo(run)).toBe(0);
    run.pause();
    // Paused, the source holds the timer past its time on the real clock.
    await real.advance(60_000);
    expect(ran).toEqual([]);
    expect(clock.now()).toBe(1_004_000);
    run.resume();
    cancelled();
    await real.advance(5_999);
    expect(ran).toEqual([]);
    // Back on the real clock, 60 s ahead of the run's: the last millisecond left still waits.
    expect(clock.switchTo(real)).toBe(60_000);
    await real.advance(1);
    expect(ran).toEqual(["timeout"]);
    expect(clock.pending()).toBe(0);
    expect(real.pending()).toBe(0);
  });
});

describe("systemClock", () => {
  it("runs a timer after its wait and not once cancelled", async () => {
    const ran: string[] = [];
    const cancel = systemClock.after(1, () => ran.push("cancelled"));
    cancel();
    await new Promise<void>((resolve) => systemClock.after(5, resolve));
    expect(ran).toEqual([]);
  });
});

describe("systemRandom", () => {
  it("hands out each pooled byte once, across refills, and large draws whole", () => {
    // 600 draws of 16 bytes span more than two 4 KiB pools.
    const draws = Array.from({ length: 600 }, () => systemRandom.bytes(16));
    expect(draws.every((b) => b.length === 16)).toBe(true);
    expect(new Set(draws.map((b) => b.toString("hex"))).size).toBe(600);
    expect(systemRandom.bytes(10_000)).toHaveLength(10_000);
  });

  it("makes version 4 UUIDs", () => {
    expect(randomUuid(systemRandom)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(randomUuid({ bytes: (n) => Buffer.alloc(n, 0xff) })).toBe("ffffffff-ffff-4fff-bfff-ffffffffffff");
  });
});
