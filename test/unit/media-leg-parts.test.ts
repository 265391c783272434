import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { FrameFifo } from "../../server/media/frame-fifo.js";
import { IllegalLegTransition, LegStateMachine, type LegStateChange } from "../../server/media/leg-state.js";
import { ReceiveBuffer } from "../../server/media/receive-buffer.js";

const frame = (value: number) => new Int16Array(FRAME_SAMPLES).fill(value);

describe("FrameFifo", () => {
  it("reads silence until primed, then frames in order, then silence when empty", () => {
    const fifo = new FrameFifo({ prime: 2 });
    fifo.push(frame(1));
    expect(fifo.pop()[0]).toBe(0);
    fifo.push(frame(2));
    expect([fifo.pop()[0], fifo.pop()[0], fifo.pop()[0]]).toEqual([1, 2, 0]);
    expect(fifo.stats).toEqual({ pushed: 2, played: 2, dropped: 0, overflowed: 0, skipped: 0, compressed: 0, underruns: 1 });
  });

  it("drops the oldest frame when full, bounding the delay", () => {
    const fifo = new FrameFifo({ capacity: 3, prime: 1 });
    for (let i = 1; i <= 5; i++) fifo.push(frame(i));
    expect(fifo.depth).toBe(3);
    expect(fifo.pop()[0]).toBe(3);
    expect(fifo.stats).toMatchObject({ dropped: 2, overflowed: 2, skipped: 0 });
  });

  /** Frames of a tone whose period is `period` samples, continuing from sample `from`. */
  function tone(period: number) {
    let k = 0;
    return () => Int16Array.from({ length: FRAME_SAMPLES }, () => Math.round(10_000 * Math.sin((2 * Math.PI * k++) / period)));
  }
  /** True when every sample equals the one a period earlier: no jump, no phase break. */
  const periodic = (samples: number[], period: number) => samples.every((v, k) => k < period || v === samples[k - period]);

  it("takes a backlog that lasts out by cutting whole periods of the audio, dropping no frame", () => {
    const fifo = new FrameFifo({ capacity: 20, prime: 2, trimAfterPops: 10 });
    const next = tone(8); // 1 kHz
    for (let i = 0; i < 8; i++) fifo.push(next());
    const played: number[] = [];
    // One in, one out: the backlog of 8 would stay forever without the cuts.
    for (let i = 0; i < 100; i++) {
      played.push(...fifo.pop());
      fifo.push(next());
    }
    expect(fifo.depth).toBeLessThanOrEqual(5);
    expect(fifo.stats).toMatchObject({ dropped: 0, underruns: 0 });
    expect(fifo.stats.compressed).toBeGreaterThanOrEqual(3);
    expect(periodic(played, 8)).toBe(true);
  });

  it("cuts part frames where the period does not divide a frame, and plays the part left when it runs dry", () => {
    const fifo = new FrameFifo({ capacity: 20, prime: 1, trimAfterPops: 1 });
    const next = tone(30); // 266.7 Hz: the best cut is 5 periods, 150 samples
    for (let i = 0; i < 6; i++) fifo.push(next());
    const played: number[] = [];
    // The first read leaves 5 frames (> prime + 2): cuts of 150 follow until a frame's worth is out.
    for (let i = 0; i < 4; i++) played.push(...fifo.pop());
    expect(fifo.stats).toMatchObject({ compressed: 1, dropped: 0 });
    expect(periodic(played, 30)).toBe(true);
    // 300 cut + 640 read of 960 samples, 20 left: they play, then silence; then the FIFO is dry.
    const last = [...fifo.pop()];
    expect(periodic([...played, ...last.slice(0, 20)], 30)).toBe(true);
    expect(last.slice(20).every((v) => v === 0)).toBe(true);
    expect(fifo.stats).toMatchObject({ dropped: 0, underruns: 0 });
    expect(fifo.pop().every((v) => v === 0)).toBe(true);
    expect(fifo.stats).toMatchObject({ dropped: 0, underruns: 1 });
  });

  it("cuts silence a whole frame at a time", () => {
    const fifo = new FrameFifo({ capacity: 20, prime: 1, trimAfterPops: 1 });
    for (let i = 0; i < 6; i++) fifo.push(new Int16Array(FRAME_SAMPLES));
    fifo.pop(); // plays the first frame; 5 left
    fifo.pop(); // one frame out, one cut: 3 left
    expect(fifo.stats.compressed).toBe(1);
    expect(fifo.depth).toBe(3);
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

describe("ReceiveBuffer", () => {
  it("reuses the frame played at an earlier tick for later packets, without touching the frame of the tick being played", () => {
    const buffer = new ReceiveBuffer();
    // The leg hands over its scratch buffer: the ReceiveBuffer must copy it.
    const scratch = new Int16Array(FRAME_SAMPLES);
    const arrays = new Set<Int16Array>();
    const heard: number[] = [];
    const deliver = (n: number) => {
      scratch.set(frame(n));
      buffer.accept(scratch, n * FRAME_SAMPLES);
    };
    deliver(1);
    for (let tick = 1; tick <= 12; tick++) {
      const played = buffer.frameFor(tick);
      // A second reader in the same tick (a recorder beside the mixer) sees the same frame.
      expect(buffer.frameFor(tick)).toBe(played);
      // The next packet, arriving during the tick, goes elsewhere: the frame played stays whole.
      const value = played[0] ?? -1;
      deliver(tick + 1);
      expect(played.every((sample) => sample === value)).toBe(true);
      heard.push(value);
      if (value !== 0) arrays.add(played);
    }
    // It starts shallow: the first frame plays at the first tick, then one packet after another.
    expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // Arrays of frames long played came back for new packets: a handful in all, not one a packet.
    expect(arrays.size).toBeLessThanOrEqual(3);
  });

  it("keeps its cushion when the far end paused (a timestamp gap: hold, DTMF) and stretches it when the next packet was merely late", () => {
    // What test/media/werift-loop.test.ts once asserted over loopback in real time, where a
    // busy machine delays packets too: here the ticks and the packets' arrival are the test's.
    const buffer = new ReceiveBuffer();
    const cushion = buffer.jitterBufferMs;
    let tick = 0;
    let sent = 0;
    const read = (ticks: number) => {
      for (let i = 0; i < ticks; i++) buffer.frameFor(++tick);
    };
    const send = (n: number) => {
      for (let i = 0; i < n; i++) buffer.accept(frame(++sent), sent * FRAME_SAMPLES);
    };
    // Steady: a packet a tick.
    for (let i = 0; i < 20; i++) {
      send(1);
      read(1);
    }
    expect(buffer.stats.underruns).toBe(0);
    // Paused for 10 ticks; it resumes 10 frames of timestamps later, as a far end that stopped
    // sending does. The FIFO ran dry meanwhile, but the cushion stays.
    read(10);
    expect(buffer.stats.underruns).toBeGreaterThan(0);
    sent += 10;
    for (let i = 0; i < 20; i++) {
      send(1);
      read(1);
    }
    expect(buffer.jitterBufferMs).toBe(cushion);
    // Late: 3 ticks without a packet, then the very next timestamps, all at once.
    const underruns = buffer.stats.underruns;
    read(3);
    expect(buffer.stats.underruns).toBeGreaterThan(underruns);
    send(3);
    expect(buffer.jitterBufferMs).toBeGreaterThan(cushion);
  });

  it("fills lost packets' time with silence in reused frames", () => {
    const buffer = new ReceiveBuffer();
    for (let tick = 1; tick <= 6; tick++) {
      buffer.accept(frame(100 + tick), tick * FRAME_SAMPLES);
      buffer.frameFor(tick);
    }
    buffer.conceal(2);
    buffer.accept(frame(500), 9 * FRAME_SAMPLES);
    const played = [7, 8, 9, 10].map((tick) => {
      const got = buffer.frameFor(tick);
      return [got[0], got[FRAME_SAMPLES - 1]];
    });
    // Each packet played at its own tick (no cushion was needed), the two lost ones as silence.
    expect(played).toEqual([
      [0, 0],
      [0, 0],
      [500, 500],
      [0, 0],
    ]);
  });
});
