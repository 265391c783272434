// renderer/state/read-order.ts: the one order of a slice's reads and changes. An answer lands for
// a key unless a newer read or a change of that key landed first; a change makes reads asked
// before it older for its key only; a list's answer keeps the rows changed or removed since it
// was asked as the page shows them; a reset makes every earlier ticket stale.
import { describe, expect, it } from "vitest";
import { readOrder } from "../../renderer/state/read-order.js";

describe("readOrder", () => {
  it("lands an answer unless a newer read of its key landed first", () => {
    const order = readOrder();
    const older = order.ask();
    const newer = order.ask();
    expect(order.latest(older)).toBe(false);
    expect(order.latest(newer)).toBe(true);
    expect(order.land(newer)).toBe(true);
    expect(order.land(older)).toBe(false);
    // Per key: one read may land for several keys, and a key of its own is not held back by another.
    expect(order.land(newer, "q1")).toBe(true);
    expect(order.land(newer, "q2")).toBe(true);
    expect(order.land(older, "q3")).toBe(true);
  });

  it("a change makes the reads asked before it older for its key, not for others", () => {
    const order = readOrder();
    const before = order.ask();
    const change = order.changed("prefs");
    expect(order.current(before, "prefs")).toBe(false);
    expect(order.land(before, "prefs")).toBe(false);
    expect(order.land(before, "missed")).toBe(true);
    expect(order.askedSince(change)).toBe(false);
    const after = order.ask();
    expect(order.askedSince(change)).toBe(true);
    expect(order.land(after, "prefs")).toBe(true);
  });

  it("keeps the rows changed or removed since a read was asked as shown; rows made since are not added", () => {
    const order = readOrder();
    const read = order.ask();
    order.changed("b");
    order.removed("c");
    order.changed("d");
    const answer = [
      { id: "a", v: 1 },
      { id: "b", v: 1 },
      { id: "c", v: 1 },
      { id: "d", v: 1 },
    ];
    const shown = [
      { id: "b", v: 2 },
      { id: "e", v: 2 },
    ];
    // d changed but is not shown (an event for a row not read yet): the answer's row stands.
    expect(order.rows(read, answer, shown, (r) => r.id)).toEqual([
      { id: "a", v: 1 },
      { id: "b", v: 2 },
      { id: "d", v: 1 },
    ]);
    const later = order.ask();
    expect(order.rows(later, answer, shown, (r) => r.id)).toEqual(answer);
  });

  it("after a reset, no answer asked before it lands", () => {
    const order = readOrder();
    const old = order.ask();
    order.reset();
    expect(order.land(old)).toBe(false);
    expect(order.latest(old)).toBe(false);
    const fresh = order.ask();
    expect(order.land(fresh)).toBe(true);
  });
});
