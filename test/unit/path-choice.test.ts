// The per-direction path choice of the forward path (server/media/path-choice.ts), fed by hand:
// packets' arrival times against their RTP timestamps, and the frame clock's tick lateness.
import { describe, expect, it } from "vitest";
import { PathChoice } from "../../server/media/path-choice.js";

/** A stream of 20 ms packets read on a hand-moved time: `at` ms after the stream's own time. */
function stream(choice: PathChoice, start = 1000) {
  let n = 0;
  return {
    /** The next packet, arriving `lateMs` after its time against the stream's. */
    packet(lateMs = 0): number {
      const late = choice.arrival(start + n * 20 + lateMs, (n * 160) >>> 0);
      n++;
      return late;
    },
    run(count: number, lateMs = 0): void {
      for (let i = 0; i < count; i++) this.packet(lateMs);
    },
  };
}

describe("PathChoice", () => {
  it("keeps arrival while packets come on time; a steady delay is no lateness once a window has passed", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    s.run(100);
    expect(choice.ticks).toBe(false);
    expect(choice.lateEvents).toBe(0);
    // The thread got 30 ms slower for good: late against the window's earliest for a window, then not.
    expect(s.packet(30)).toBe(240);
    expect(choice.lateEvents).toBe(1);
    s.run(49, 30);
    expect(s.packet(30)).toBe(0);
  });

  it("two late packets within the window are not enough; a third moves the direction to the ticks", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    s.run(20);
    s.packet(35);
    s.run(10);
    s.packet(25);
    s.run(10);
    expect(choice.lateEvents).toBe(2);
    expect(choice.ticks).toBe(false);
    s.packet(21);
    expect(choice.ticks).toBe(true);
  });

  it("late packets further apart than the window do not add up", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    for (let i = 0; i < 10; i++) {
      s.packet(40);
      s.run(50);
    }
    expect(choice.ticks).toBe(false);
    expect(choice.lateEvents).toBe(0);
  });

  it("late ticks of the frame clock count as late events too", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    s.run(10);
    for (let i = 0; i < 3; i++) {
      choice.tick(25);
      s.packet();
    }
    expect(choice.ticks).toBe(true);
  });

  it("back to arrival only after 150 packets in a row with no packet or tick more than 10 ms late", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    s.run(10);
    s.run(3, 30);
    expect(choice.ticks).toBe(true);
    s.run(149);
    expect(choice.ticks).toBe(true);
    // A packet 15 ms late (not a late event, but not calm) starts the count again.
    s.packet(15);
    s.run(149);
    expect(choice.ticks).toBe(true);
    // So does a tick 12 ms late.
    choice.tick(12);
    s.packet();
    s.run(149);
    expect(choice.ticks).toBe(true);
    s.packet();
    expect(choice.ticks).toBe(false);
    // The window starts empty: one more late packet does not move it back at once.
    s.packet(40);
    expect(choice.ticks).toBe(false);
    expect(choice.lateEvents).toBe(1);
  });

  it("counts no late event in the stream's first 50 packets (a call's set-up)", () => {
    const choice = new PathChoice();
    const s = stream(choice);
    s.run(40);
    s.run(10, 60);
    expect(choice.lateEvents).toBe(0);
    expect(choice.ticks).toBe(false);
    s.run(3, 90);
    expect(choice.ticks).toBe(true);
  });

  it("a jump of seconds in the timestamps (the far end's new timeline) is not lateness", () => {
    const choice = new PathChoice({ setup: 0 });
    const s = stream(choice);
    s.run(20);
    // 100 s ahead, then 10 s behind that: each a new timeline, the window emptied.
    expect(choice.arrival(1400, 8000 * 100)).toBe(0);
    expect(choice.arrival(1420, 8000 * 100 + 160)).toBe(0);
    expect(choice.arrival(1440, 8000 * 90)).toBe(0);
    expect(choice.arrival(1460 + 35, 8000 * 90 + 160)).toBe(35 * 8);
    expect(choice.lateEvents).toBe(1);
  });

  it("reads timestamps that wrap at 2^32 as the stream going on", () => {
    const choice = new PathChoice({ setup: 0 });
    const base = 2 ** 32 - 160 * 5;
    let late = 0;
    for (let n = 0; n < 10; n++) late = Math.max(late, choice.arrival(n * 20, (base + n * 160) >>> 0));
    expect(late).toBe(0);
    expect(choice.arrival(10 * 20 + 35, (base + 10 * 160) >>> 0)).toBe(35 * 8);
  });
});
