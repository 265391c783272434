// After a stall the frame clock delivers every owed tick, in order, and a leg sends each one's
// frame up to the send bound (late-frames.ts), so a stall's audio is played late, not lost; only
// frames later than the bound are left unsent (and counted). On a hand-moved clock: no real time.
// A media worker keeps every frame the main thread's clock writes while catching up (shared memory
// written and read by hand: no threads).
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { FrameClock, type TimeSource } from "../../server/media/frame-clock.js";
import { MAX_SEND_LATENESS_MS, tooLateToSend } from "../../server/media/late-frames.js";
import { LegMemory } from "../../server/media/worker/leg-memory.js";

/** Time that moves only when told; a stall moves it without any timer running. */
class ManualTime implements TimeSource {
  t = 0;
  #timers: { at: number; fn: () => void }[] = [];

  now(): number {
    return this.t;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    const timer = { at: this.t + Math.max(1, delayMs), fn };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((x) => x !== timer);
    };
  }

  advanceTo(to: number): void {
    for (;;) {
      const next = [...this.#timers].sort((a, b) => a.at - b.at)[0];
      if (!next || next.at > to) break;
      this.#timers = this.#timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = to;
  }

  stall(ms: number): void {
    this.t += ms;
  }
}

/** A leg's send decision at each tick, as PeerLeg makes it: frame n is the one for tick n. */
function sender() {
  const time = new ManualTime();
  const clock = new FrameClock({ time });
  const sent: number[] = [];
  const unsent: number[] = [];
  clock.subscribe((tick) => (tooLateToSend(clock.lateMs) ? unsent : sent).push(tick));
  return { time, clock, sent, unsent };
}

describe("catch-up after a stall", () => {
  it("sends every frame owed after a 90 ms stall, in order, none skipped", () => {
    const { time, clock, sent, unsent } = sender();
    time.advanceTo(200);
    // The loop blocked for 90 ms just after tick 10: ticks 11-14 come due meanwhile.
    time.stall(90);
    time.advanceTo(600);
    expect(unsent).toEqual([]);
    expect(sent).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(clock.stats().skipped).toBe(0);
    // The first owed tick ran 70 ms late: 60 ms was the bound before, so its frame was dropped.
    expect(clock.stats().latenessMaxMs).toBeGreaterThan(60);
  });

  it("still bounds the burst: after a 150 ms stall only the frames later than the bound go unsent", () => {
    const { time, clock, sent, unsent } = sender();
    time.advanceTo(200);
    time.stall(150);
    time.advanceTo(600);
    // Ticks 11..17 came due during the stall; delivered from 350 on, one per timer turn (1 ms
    // apart), they ran 130, 111, 92, 73 ... ms late: the first two are past the bound.
    expect(unsent).toEqual([11, 12]);
    expect([...sent, ...unsent].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(sent).toEqual(Array.from({ length: 28 }, (_, i) => i + (i < 10 ? 1 : 3)));
    expect(clock.stats().skipped).toBe(0);
  });

  it("is 100 ms: five frames", () => {
    expect(MAX_SEND_LATENESS_MS).toBe(100);
    expect(tooLateToSend(100)).toBe(false);
    expect(tooLateToSend(100.5)).toBe(true);
    expect(tooLateToSend(1000, Infinity)).toBe(false);
  });
});

describe("catch-up after a stall, across the worker's shared memory", () => {
  it("keeps every owed frame for a media worker: ten ticks written before it reads the first", () => {
    const main = new LegMemory();
    const worker = new LegMemory(main.buffer);
    const source = worker.source();
    // The main thread's clock catches up ten ticks before the worker's loop reads their messages.
    for (let tick = 101; tick <= 110; tick++) main.writeOut(tick, new Int16Array(FRAME_SAMPLES).fill(tick));
    const read = [];
    for (let tick = 101; tick <= 110; tick++) read.push(source.read(tick)[0]);
    expect(read).toEqual(Array.from({ length: 10 }, (_, i) => 101 + i));
  });
});
