// The machinery the call-queue slices share: the reads a burst of events asks for, coalesced.
import { describe, expect, it } from "vitest";
import { touchedReads } from "../../renderer/state/callq-access.js";
import { manualClock } from "../helpers/manual-clock.js";

describe("touchedReads", () => {
  it("reads every id a burst touched once, together, the delay after the first touch", async () => {
    const clock = manualClock();
    const reads: string[][] = [];
    const coalesced = touchedReads(clock, 500, (ids) => reads.push(ids));
    coalesced.touch("a");
    await clock.advance(300);
    coalesced.touch("b");
    coalesced.touch("a");
    await clock.advance(199);
    expect(reads).toEqual([]);
    await clock.advance(1);
    expect(reads).toEqual([["a", "b"]]);
    coalesced.touch("c");
    await clock.advance(500);
    expect(reads).toEqual([["a", "b"], ["c"]]);
  });

  it("forgets what was touched when cancelled", async () => {
    const clock = manualClock();
    const reads: string[][] = [];
    const coalesced = touchedReads(clock, 500, (ids) => reads.push(ids));
    coalesced.touch("a");
    coalesced.cancel();
    await clock.advance(1000);
    expect(reads).toEqual([]);
    expect(clock.pending()).toBe(0);
    coalesced.touch("b");
    await clock.advance(500);
    expect(reads).toEqual([["b"]]);
  });
});
