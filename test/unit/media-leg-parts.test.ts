import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { FrameFifo } from "../../server/media/frame-fifo.js";
import { IllegalLegTransition, LegStateMachine, type LegStateChange } from "../../server/media/leg-state.js";

const frame = (value: number) => new Int16Array(FRAME_SAMPLES).fill(value);

describe("FrameFifo", () => {
  it("reads silence until primed, then frames in order, then silence when empty", () => {
    const fifo = new FrameFifo({ prime: 2 });
    fifo.push(frame(1));
    expect(fifo.pop()[0]).toBe(0);
    fifo.push(frame(2));
    expect([fifo.pop()[0], fifo.pop()[0], fifo.pop()[0]]).toEqual([1, 2, 0]);
    expect(fifo.stats).toEqual({ pushed: 2, played: 2, dropped: 0, underruns: 1 });
  });

  it("drops the oldest frame when full, bounding the delay", () => {
    const fifo = new FrameFifo({ capacity: 3, prime: 1 });
    for (let i = 1; i <= 5; i++) fifo.push(frame(i));
    expect(fifo.depth).toBe(3);
    expect(fifo.pop()[0]).toBe(3);
    expect(fifo.stats.dropped).toBe(2);
  });

  it("trims a backlog that lasts, so a fast sender does not build up delay", () => {
    const fifo = new FrameFifo({ capacity: 20, prime: 2, trimAfterPops: 10 });
    for (let i = 0; i < 8; i++) fifo.push(frame(i));
    // One in, one out: the backlog of 7 would stay forever without the trim.
    for (let i = 0; i < 30; i++) {
      fifo.pop();
      fifo.push(frame(100 + i));
    }
    expect(fifo.depth).toBeLessThanOrEqual(5);
    expect(fifo.stats.dropped).toBeGreaterThanOrEqual(3);
  });

  it("stretches its cushion on request up to maxPrime, and relaxes it after calm reads", () => {
    const fifo = new FrameFifo({ prime: 2, maxPrime: 4, relaxAfterPops: 5 });
    for (let i = 0; i < 5; i++) fifo.stretch();
    expect(fifo.prime).toBe(4);
    for (let i = 1; i <= 3; i++) fifo.push(frame(i));
    expect(fifo.pop()[0]).toBe(0); // 3 frames < prime 4: still gathering
    fifo.push(frame(4));
    expect(fifo.pop()[0]).toBe(1);
    for (let i = 0; i < 5; i++) {
      fifo.pop();
      fifo.push(frame(10 + i));
    }
    expect(fifo.prime).toBe(3);
  });

  it("skips frames whose time has passed, counting them as dropped", () => {
    const fifo = new FrameFifo({ prime: 1 });
    for (let i = 1; i <= 4; i++) fifo.push(frame(i));
    fifo.skip(2);
    expect(fifo.pop()[0]).toBe(3);
    fifo.skip(5);
    expect(fifo.depth).toBe(0);
    expect(fifo.stats.dropped).toBe(3);
  });
});

describe("LegStateMachine", () => {
  function machine() {
    let now = 1_000;
    const changes: LegStateChange[] = [];
    const m = new LegStateMachine({ now: () => now++ }, (c) => changes.push(c));
    return { m, changes };
  }

  it("walks new → negotiating → connected → closed, stamping each change once", () => {
    const { m, changes } = machine();
    m.transition("negotiating");
    m.transition("connected");
    m.transition("closed", "hangup");
    expect(changes).toEqual([
      { from: "new", to: "negotiating", at: 1000 },
      { from: "negotiating", to: "connected", at: 1001 },
      { from: "connected", to: "closed", at: 1002, reason: "hangup" },
    ]);
  });

  it("throws on arrows the diagram does not have, and closed is final", () => {
    const { m, changes } = machine();
    expect(() => m.transition("connected")).toThrow(IllegalLegTransition);
    m.transition("closed", "cancelled");
    for (const to of ["new", "negotiating", "connected", "closed"] as const) expect(() => m.transition(to)).toThrow(IllegalLegTransition);
    expect(changes).toHaveLength(1);
  });
});
