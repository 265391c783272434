// A media worker's clock (tick-share.ts) on hand-moved time: each worker's tick is due its phase
// after the main thread's edge, a worker sends only ticks the main thread has marked (never a
// frame not yet played), a tick marked after the worker's phase is the main thread's to announce
// (through the worker's wake word), and a tick the main clock skipped is not sent. No threads, no real time.
import { describe, expect, it } from "vitest";
import type { TimeSource } from "../../server/media/frame-clock.js";
import { workerSemiSpaceMb } from "../../server/media/worker/flags.js";
import { needsNudge, NUDGE_MARGIN_MS, TickShare, WorkerClock, workerPhaseMs, workerTickMode } from "../../server/media/worker/tick-share.js";

/** Time moved by hand; timers fire in order as it passes them. */
class HandTime implements TimeSource {
  #t = 0;
  #timers: { at: number; fn: () => void }[] = [];
  readonly wakes: number[] = [];

  constructor(start: number) {
    this.#t = start;
  }

  now(): number {
    return this.#t;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    const timer = { at: this.#t + Math.max(0, delayMs), fn };
    this.#timers.push(timer);
    return () => (this.#timers = this.#timers.filter((t) => t !== timer));
  }

  /** Moves to `to`, running each timer at its due time on the way. */
  advanceTo(to: number): void {
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#t = Math.max(this.#t, next.at);
      this.wakes.push(this.#t);
      next.fn();
    }
    this.#t = to;
  }
}

/** A worker clock at `phaseMs` whose deliveries (tick, time, lateness) are listed. */
function workerAt(phaseMs: number, share: TickShare, time: HandTime) {
  const clock = new WorkerClock({ share, phaseMs, time, origin: 0 });
  const got: { tick: number; at: number; lateMs: number }[] = [];
  const stop = clock.subscribe((tick) => got.push({ tick, at: time.now(), lateMs: clock.lateMs }));
  return { clock, got, stop };
}

describe("media workers' phases", () => {
  it("spreads the workers evenly after the main thread's edge; relayed, every worker wakes on it", () => {
    expect([0, 1].map((k) => workerPhaseMs("phased", k, 2))).toEqual([20 / 3, 40 / 3]);
    expect(workerPhaseMs("phased", 0, 1)).toBe(10);
    expect([0, 1].map((k) => workerPhaseMs("relayed", k, 2))).toEqual([0, 0]);
    expect(workerTickMode({ SWITCHBOARD_WORKER_TICKS: "phased" })).toBe("phased");
    expect(workerTickMode({ SWITCHBOARD_WORKER_TICKS: "bogus" })).toBe("relayed");
    expect(workerTickMode({})).toBe("relayed");
  });

  it("each worker sends a tick at its own phase after the tick's due time, once the main thread marked it", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    share.mark(1, 1000);
    const early = workerAt(20 / 3, share, time);
    const late = workerAt(40 / 3, share, time);
    // Main: tick 2 due at 1020, its legs' frames written 2 ms later.
    for (let tick = 2; tick <= 4; tick++) {
      const due = 1000 + (tick - 1) * 20;
      time.advanceTo(due + 2);
      share.mark(tick, due);
    }
    time.advanceTo(1080);
    expect(early.got.map((g) => g.tick)).toEqual([2, 3, 4]);
    expect(early.got.map((g) => g.at)).toEqual([1020, 1040, 1060].map((d) => d + 20 / 3));
    expect(late.got.map((g) => g.at)).toEqual([1020, 1040, 1060].map((d) => d + 40 / 3));
    // Lateness is counted from the worker's own due time (the main thread's plus its phase): a
    // steady offset spends none of a leg's send bound.
    for (const { lateMs } of late.got) expect(lateMs).toBeCloseTo(0, 9);
  });

  it("does not send a tick the main thread has not marked by its phase; the main thread's message does, at once", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    share.mark(1, 1000);
    const worker = workerAt(10, share, time);
    // Tick 2 (due 1020) is marked only at 1035: the main thread ran 15 ms late.
    time.advanceTo(1035);
    expect(worker.got).toEqual([]);
    share.mark(2, 1020);
    expect(needsNudge(10, 15, false)).toBe(true);
    worker.clock.nudge(2);
    expect(worker.got).toEqual([{ tick: 2, at: 1035, lateMs: 5 }]);
    // The timer did not move to a later tick: tick 3 goes out at its phase, not a period late.
    time.advanceTo(1042);
    share.mark(3, 1040);
    time.advanceTo(1055);
    expect(worker.got.map((g) => [g.tick, g.at])).toEqual([
      [2, 1035],
      [3, 1050],
    ]);
    // A second message for a tick already sent sends nothing again.
    worker.clock.nudge(3);
    expect(worker.got).toHaveLength(2);
  });

  it("sends no frame for a tick the main clock skipped after a stall", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    share.mark(1, 1000);
    const worker = workerAt(10, share, time);
    // Ticks 2-12 skipped (a stall past the catch-up); tick 13 marked, a jump: messaged.
    time.advanceTo(1245);
    share.mark(13, 1240);
    expect(needsNudge(10, 5, true)).toBe(true);
    worker.clock.nudge(13);
    expect(worker.got.map((g) => g.tick)).toEqual([13]);
  });

  it("relayed (phase 0): no timer, each message sends the marked ticks up to the one it names", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    const worker = workerAt(0, share, time);
    expect(worker.clock.timed).toBe(false);
    share.mark(1, 1000);
    share.mark(2, 1020);
    time.advanceTo(1030);
    expect(worker.got).toEqual([]);
    worker.clock.nudge(1);
    expect(worker.got.map((g) => g.tick)).toEqual([1]);
    worker.clock.nudge(2);
    expect(worker.got.map((g) => [g.tick, g.lateMs])).toEqual([
      [1, 30],
      [2, 10],
    ]);
  });

  it("messages a phased worker only for a tick marked near or after its phase, or after a jump", () => {
    expect(needsNudge(0, 0, false)).toBe(true);
    expect(needsNudge(10, 10 - NUDGE_MARGIN_MS - 0.1, false)).toBe(false);
    expect(needsNudge(10, 10 - NUDGE_MARGIN_MS, false)).toBe(true);
    expect(needsNudge(10, 1, true)).toBe(true);
  });

  it("after the main clock was idle a long while, wakes at the next phase from now", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    share.mark(1, 1000);
    const worker = workerAt(10, share, time);
    // An hour with no tick marked: the timer keeps its phase, one wake-up a period.
    time.advanceTo(1000 + 3_600_000);
    const wakes = time.wakes.length;
    time.advanceTo(1000 + 3_600_000 + 100);
    expect(time.wakes.length - wakes).toBe(5);
    expect(time.wakes.at(-1)).toBe(1000 + 3_600_000 + 90);
    expect(worker.got).toEqual([]);
  });

  it("stops its timer when its last leg leaves", () => {
    const share = new TickShare();
    const time = new HandTime(1000);
    share.mark(1, 1000);
    const worker = workerAt(10, share, time);
    expect(worker.clock.timed).toBe(true);
    worker.stop();
    expect(worker.clock.timed).toBe(false);
  });

  it("takes the workers' starting semi-space from SWITCHBOARD_WORKER_SEMI_SPACE_MB only when it is a whole 1-64 MB", () => {
    expect(workerSemiSpaceMb({})).toBeUndefined();
    expect(workerSemiSpaceMb({ SWITCHBOARD_WORKER_SEMI_SPACE_MB: "8" })).toBe(8);
    for (const bad of ["0", "65", "2.5", "eight", ""]) expect(workerSemiSpaceMb({ SWITCHBOARD_WORKER_SEMI_SPACE_MB: bad })).toBeUndefined();
  });
});
