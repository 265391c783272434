// The ordered list behind list pages against a plain sorted array: random inserts and removals
// (tiny blocks, so they split and empty often), then every seek in both directions, walked by
// generator and by visitor stopping early.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OrderedList, type OrderedEntry } from "../../../server/store/ordered-list.js";

type Op = { insert: string } | { remove: number } | { removeMissing: string };

const KEYS = fc.constantFrom("", "a", "b", "b", "c", "d", "e", "f", "z");

function sorted(entries: OrderedEntry<number>[]): OrderedEntry<number>[] {
  return [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.seq - b.seq));
}

describe("OrderedList", () => {
  it("walks like a sorted array from every start key, in both directions, through inserts and removals", () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 5, arbitrary: KEYS.map((insert) => ({ insert })) },
      { weight: 3, arbitrary: fc.nat().map((remove) => ({ remove })) },
      { weight: 1, arbitrary: KEYS.map((removeMissing) => ({ removeMissing })) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(KEYS, { maxLength: 40 }), fc.array(op, { maxLength: 300 }), (block, initial, ops) => {
        // Some lists start built in one go from sorted entries, as an order is on first use.
        let model: OrderedEntry<number>[] = initial.map((key, seq) => ({ key, seq, doc: seq }));
        const list = OrderedList.fromSorted(sorted(model), block);
        let seq = model.length;
        for (const o of ops) {
          if ("insert" in o) {
            const entry = { key: o.insert, seq, doc: seq };
            seq++;
            list.insert(entry);
            model.push(entry);
          } else if ("remove" in o) {
            const victim = model[o.remove % Math.max(1, model.length)];
            if (victim === undefined) continue;
            expect(list.remove(victim.key, victim.seq)).toBe(true);
            model = model.filter((e) => e !== victim);
          } else {
            // A key held by other seqs, or by none: nothing to remove.
            expect(list.remove(o.removeMissing, seq + 1)).toBe(false);
          }
        }
        const ascending = sorted(model);
        expect(list.size).toBe(model.length);
        expect(Array.from(list.ascending())).toEqual(ascending);
        expect(Array.from(list.descending())).toEqual([...ascending].reverse());
        for (const from of ["", "a", "aa", "b", "c", "e", "y", "z", "zz"]) {
          expect(Array.from(list.ascending(from))).toEqual(ascending.filter((e) => e.key >= from));
          expect(Array.from(list.descending(from))).toEqual([...ascending].reverse().filter((e) => e.key <= from));
          for (const descending of [false, true]) {
            const visited: OrderedEntry<number>[] = [];
            list.visit(descending, from, (e) => visited.push(e) < 3);
            expect(visited).toEqual(Array.from(list.walk(descending, from)).slice(0, 3));
          }
        }
      }),
      { seed: 17, numRuns: 300 },
    );
  });

  it("keeps a large list in order across many block splits", () => {
    const list = new OrderedList<number>();
    const keys = Array.from({ length: 5_000 }, (_, i) => String((i * 7_919) % 5_000).padStart(4, "0"));
    keys.forEach((key, seq) => list.insert({ key, seq, doc: seq }));
    for (let seq = 0; seq < keys.length; seq += 3) list.remove(keys[seq] ?? "", seq);
    const walked = Array.from(list.ascending(), (e) => e.key);
    expect(walked).toEqual(keys.filter((_, seq) => seq % 3 !== 0).sort());
    expect(Array.from(list.ascending("2500"), (e) => e.key)[0]).toBe("2500");
    expect(Array.from(list.descending("2500"), (e) => e.key)[0]).toBe("2500");
  });
});
