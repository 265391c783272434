// A worker leg's RTP counters reach the main thread through its shared memory (leg-memory.ts),
// written after every tick, each stored only when it changed (session 26: fourteen Atomics.store
// per leg per tick were ~2% of a media worker). Each counter lands in its own word, changes after
// writes that changed nothing arrive, a counter back at 0 is stored, and a side made over memory
// that already holds counters does not take them for its own last write.
import { describe, expect, it } from "vitest";
import type { LegCounters } from "../../server/media/leg-api.js";
import { COUNTER_NAMES, LegMemory } from "../../server/media/worker/leg-memory.js";

const NAMES = COUNTER_NAMES;

/** Counters with a distinct value each: `base + 1`, `base + 2` ... in NAMES' order. */
function counters(base: number): LegCounters {
  return Object.fromEntries(NAMES.map((name, i) => [name, base + i + 1])) as unknown as LegCounters;
}

const read = (memory: LegMemory) => {
  const { ringDropped, ...rest } = memory.counters();
  expect(ringDropped).toBe(0);
  return rest;
};

describe("LegMemory's counters", () => {
  it("puts each counter in its own word, whichever changed", () => {
    const main = new LegMemory();
    const worker = new LegMemory(main.buffer);
    expect(read(main)).toEqual(Object.fromEntries(NAMES.map((name) => [name, 0])));
    worker.writeCounters(counters(100));
    expect(read(main)).toEqual(counters(100));
    // Nothing changed, then one counter at a time, each name in turn.
    worker.writeCounters(counters(100));
    const live = counters(100);
    for (const name of NAMES) {
      live[name] += 1000;
      worker.writeCounters(live);
      expect(read(main)).toEqual({ ...live });
    }
    // Back to 0 (a counter only grows, but the word follows what is written).
    worker.writeCounters(Object.fromEntries(NAMES.map((name) => [name, 0])) as unknown as LegCounters);
    expect(read(main)).toEqual(Object.fromEntries(NAMES.map((name) => [name, 0])));
  });

  it("stores a value the memory holds from before this side was made, when it is written", () => {
    const main = new LegMemory();
    new LegMemory(main.buffer).writeCounters(counters(5));
    // A second worker-side view of the same memory (as after a restart of its writer) writing zeros.
    const again = new LegMemory(main.buffer);
    again.writeCounters(Object.fromEntries(NAMES.map((name) => [name, 0])) as unknown as LegCounters);
    expect(read(main)).toEqual(Object.fromEntries(NAMES.map((name) => [name, 0])));
    again.writeCounters(counters(5));
    expect(read(main)).toEqual(counters(5));
  });
});
