// A media worker keeps every frame the main thread's clock writes while catching up after a stall
// (up to ten owed ticks, frame-clock.ts) before the worker reads the first: the out slots hold more
// than that catch-up. Shared memory written and read by hand: no threads, no real time.
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { LegMemory } from "../../server/media/worker/leg-memory.js";

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
