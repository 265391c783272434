// The receive buffer's depth adapts as NetEq's does (issue 17, "Audio latency"): it starts at one
// frame, late audio raises a target of spare frames, calm lowers it, and a level that stays above
// the target is played out faster. Fed 20 ms packets by hand and read tick by tick, as a hand-moved
// frame clock would: no real time anywhere.
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { ReceiveBuffer } from "../../server/media/receive-buffer.js";

/** Frame `n` of a continuous 500 Hz tone (a period of 16 samples), as a far end sends it. */
function toneFrame(n: number): Int16Array {
  const out = new Int16Array(FRAME_SAMPLES);
  for (let i = 0; i < FRAME_SAMPLES; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 500 * (n * FRAME_SAMPLES + i)) / 8000));
  return out;
}

/** A far end's stream: packet `n` carries RTP timestamp n * 160. */
class FarEnd {
  next = 0;
  constructor(readonly buffer: ReceiveBuffer) {}
  send(count = 1): void {
    for (let i = 0; i < count; i++) {
      this.buffer.accept(toneFrame(this.next), (this.next * FRAME_SAMPLES) >>> 0);
      this.next++;
    }
  }
}

/** Frames held after each tick's read: the delay a frame arriving now waits, in ticks. */
function heldAfter(buffer: ReceiveBuffer, tick: number): number {
  buffer.frameFor(tick);
  return buffer.depth;
}

describe("ReceiveBuffer depth", () => {
  it("starts shallow: a stream in time waits no tick in the buffer, aiming at one frame (20 ms)", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    expect(buffer.jitterBufferMs).toBe(20);
    const held: number[] = [];
    for (let tick = 0; tick < 100; tick++) {
      far.send();
      held.push(heldAfter(buffer, tick));
    }
    expect(new Set(held)).toEqual(new Set([0]));
    expect(buffer.stats.underruns).toBe(0);
  });

  it("plays a backlog after set-up (a burst of 15 frames) out faster, within a second, without dropping a frame", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    // The first packets piled up while the call was set up, then arrive at once.
    far.send(15);
    const held: number[] = [];
    for (let tick = 0; tick < 150; tick++) {
      far.send();
      held.push(heldAfter(buffer, tick));
    }
    // Held at first (the watch is 25 ticks), then cut: gone within 50 ticks (1 s) of the burst.
    expect(held[0]).toBe(15);
    expect(held.slice(50).every((n) => n === 0)).toBe(true);
    expect(buffer.stats.compressed).toBe(15);
    expect(buffer.stats.dropped).toBe(0);
    expect(buffer.stats.underruns).toBe(0);
    expect(buffer.jitterBufferMs).toBe(20);
  });

  it("keeps the frame a late packet added while the target remembers it, then drops it after calm", () => {
    const buffer = new ReceiveBuffer({ relaxTicks: 100 });
    const far = new FarEnd(buffer);
    let tick = 0;
    for (; tick < 50; tick++) {
      far.send();
      buffer.frameFor(tick);
    }
    // One packet late by a tick: the buffer runs dry, the packet turns up after the read.
    buffer.frameFor(tick++);
    far.send();
    expect(buffer.stats.underruns).toBe(1);
    expect(buffer.stats.late).toBe(1);
    expect(buffer.jitterBufferMs).toBe(40);
    const held: number[] = [];
    for (; tick < 400; tick++) {
      far.send();
      held.push(heldAfter(buffer, tick));
    }
    // A spare frame kept through the watches while the target is 40 ms (100 calm ticks)...
    expect(held.slice(0, 95).every((n) => n === 1)).toBe(true);
    // ...then cut at the first watch after it relaxed: back to no wait, no further underrun.
    expect(held.slice(150).every((n) => n === 0)).toBe(true);
    expect(buffer.jitterBufferMs).toBe(20);
    expect(buffer.stats.compressed).toBe(1);
    expect(buffer.stats.underruns).toBe(1);
  });

  it("does not cut into the cushion steady jitter needs: packets in pairs every other tick run dry once only", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    for (let tick = 0; tick < 1000; tick++) {
      // Every odd packet is a tick late and arrives with the next one.
      if (tick === 0) far.send();
      else if (tick % 2 === 0) far.send(2);
      buffer.frameFor(tick);
    }
    expect(buffer.stats.underruns).toBe(1);
    expect(buffer.stats.late).toBe(1);
    expect(buffer.stats.compressed).toBe(0);
    expect(buffer.stats.dropped).toBe(0);
  });

  it("leaves the target alone when the far end pauses (hold) and resumes with a timestamp gap", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    let tick = 0;
    for (; tick < 30; tick++) {
      far.send();
      buffer.frameFor(tick);
    }
    for (; tick < 60; tick++) buffer.frameFor(tick);
    far.next += 30;
    for (; tick < 100; tick++) {
      far.send();
      expect(heldAfter(buffer, tick)).toBe(0);
    }
    expect(buffer.stats.late).toBe(0);
    expect(buffer.jitterBufferMs).toBe(20);
  });

  it("cuts a burst after a stall mid-call back down once the stream is in time again", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    let tick = 0;
    for (; tick < 50; tick++) {
      far.send();
      buffer.frameFor(tick);
    }
    // Six ticks of nothing (the sender's thread stalled), then the six frames at once: late audio,
    // so the target keeps a spare frame; the rest of the burst is backlog.
    for (let i = 0; i < 6; i++) buffer.frameFor(tick++);
    far.send(7);
    expect(buffer.jitterBufferMs).toBe(40);
    const held: number[] = [];
    for (; tick < 150; tick++) {
      held.push(heldAfter(buffer, tick));
      far.send();
    }
    // Down to the target within 1 s: after each read, before the next packet, one spare frame.
    expect(held[0]).toBe(6);
    expect(held.slice(50).every((n) => n === 1)).toBe(true);
    expect(buffer.stats.compressed).toBe(5);
    expect(buffer.stats.dropped).toBe(0);
  });

  it("counts the silence it played between stretches of audio beyond the far end's own pause", () => {
    const buffer = new ReceiveBuffer();
    const far = new FarEnd(buffer);
    let tick = 0;
    const play = (ticks: number) => {
      for (let i = 0; i < ticks; i++) buffer.frameFor(tick++);
    };
    // Before any audio: priming, nothing inserted.
    play(3);
    for (let i = 0; i < 20; i++) {
      far.send();
      play(1);
    }
    expect(buffer.stats.inserted).toBe(0);
    // Late audio: three silent reads (the underrun's and two waits), then the packets that were
    // late, continuing the last: all three were silence put into the stream.
    play(3);
    far.send(3);
    play(1);
    expect(buffer.stats.underruns).toBe(1);
    expect(buffer.stats.inserted).toBe(3);
    // The two frames left play; then the far end paused five frames (hold, frames it did not
    // send) and this side read five silent frames: its own pause, nothing inserted.
    play(2);
    far.next += 5;
    play(5);
    far.send();
    play(1);
    expect(buffer.stats.underruns).toBe(2);
    expect(buffer.stats.inserted).toBe(3);
    // Paused two frames but five read silent: three inserted by the wait.
    far.next += 2;
    play(5);
    far.send();
    play(1);
    expect(buffer.stats.inserted).toBe(6);
    // A new timeline (the far end's timestamps went back): not known, not counted.
    far.next -= 1000;
    play(3);
    far.send();
    play(1);
    expect(buffer.stats.inserted).toBe(6);
  });
});
