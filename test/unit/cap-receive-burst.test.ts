// A receive buffer absorbs a sender's catch-up burst (owed frames sent at once after a stall, or
// a browser's backlog after it was starved) instead of dropping it, cuts the backlog it leaves by
// playing faster, and still bounds what it holds. Fed by hand, read tick by tick as a hand-moved
// frame clock would: no real time anywhere.
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { RECEIVE_CAPACITY, ReceiveBuffer } from "../../server/media/receive-buffer.js";

/** Frame n carries n in every sample (a far end's counter): which frame was played is readable. */
function frame(n: number): Int16Array {
  return new Int16Array(FRAME_SAMPLES).fill(n);
}

class FarEnd {
  next = 1;
  constructor(readonly buffer: ReceiveBuffer) {}
  send(count = 1): void {
    for (let i = 0; i < count; i++) {
      this.buffer.accept(frame(this.next), (this.next * FRAME_SAMPLES) >>> 0);
      this.next++;
    }
  }
}

describe("a receive buffer and a catch-up burst", () => {
  it("absorbs a 10-frame burst on top of a 7-frame backlog: nothing dropped, frames played in order", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    const played: number[] = [];
    let tick = 0;
    const read = () => {
      const f = buffer.frameFor(tick++);
      if (f[0] !== 0) played.push(f[0]);
    };
    // A stream in time, then a 7-frame backlog (a first stall's frames, not yet cut by the watch).
    for (let i = 0; i < 20; i++) {
      far.send();
      read();
    }
    far.send(7);
    read();
    // Then a stall of the sender's: ten owed frames at once, while those seven are still held.
    far.send(10);
    for (let i = 0; i < 100; i++) {
      far.send();
      read();
    }
    expect(buffer.stats.dropped).toBe(0);
    // Heard in order (a faster read cross-fades between neighbours, never goes back), to the end.
    expect(played).toEqual([...played].sort((a, b) => a - b));
    expect(played.at(-1)).toBeGreaterThanOrEqual(far.next - 3);
    // The backlog is cut by faster reads, not kept: a frame or two held at the end.
    expect(buffer.depth).toBeLessThanOrEqual(2);
  });

  it("cuts a level at half its capacity at once instead of waiting for the watch", () => {
    const buffer = new ReceiveBuffer({ watchTicks: 1000 });
    const far = new FarEnd(buffer);
    far.send(1);
    buffer.frameFor(0);
    far.send(RECEIVE_CAPACITY / 2 + 2);
    for (let tick = 1; tick < 60; tick++) {
      far.send();
      buffer.frameFor(tick);
    }
    expect(buffer.stats.dropped).toBe(0);
    expect(buffer.stats.compressed).toBeGreaterThanOrEqual(RECEIVE_CAPACITY / 2);
    expect(buffer.depth).toBeLessThanOrEqual(2);
  });

  it("still overflows past its capacity: the oldest frames go, counted, and the depth stays bounded", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    far.send(RECEIVE_CAPACITY + 8);
    expect(buffer.depth).toBe(RECEIVE_CAPACITY);
    expect(buffer.stats.overflowed).toBe(8);
    expect(buffer.stats.dropped).toBe(8);
    // The oldest went: the first frame played is the ninth.
    expect(buffer.frameFor(0)[0]).toBe(9);
  });
});
