// A page found in order leaves a hint from its next key to where the next page starts
// (OrderedList's #hints, server/store/ordered-list.ts), so a walk through pages in order skips the
// seek. A hint is checked against the entries where it points before it is followed: one made
// stale by inserts and removals gives the page the seek gives (here: a sorted array's), and any
// start key still works.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OrderedList, type OrderedEntry } from "../../server/store/ordered-list.js";
import { OrderedListModel, type Doc } from "../helpers/ordered-list-model.js";

/** The page of `size` from the first entry whose key is at or past `from`, read off a sorted array. */
function expected(sorted: readonly OrderedEntry<Doc>[], from: string | undefined, size: number): unknown {
  let start = 0;
  if (from !== undefined) while (start < sorted.length && (sorted[start]?.key ?? "") < from) start++;
  const rows = sorted.slice(start, start + size);
  return { rows: rows.map((e) => [e.key, e.seq]), firstKey: rows[0]?.key, nextKey: sorted[start + size]?.key };
}

/** What placedPage gives, its runs read out as rows. */
function placed(list: OrderedList<Doc>, from: string | undefined, size: number): unknown {
  const page = list.placedPage(from, size);
  const rows: [string, number][] = [];
  for (const run of page.runs) for (let i = run.from; i <= run.to; i++) rows.push([run.block[i]?.key ?? "?", run.block[i]?.seq ?? -1]);
  expect(page.count).toBe(rows.length);
  return { rows, firstKey: page.firstKey, nextKey: page.nextKey };
}

/** The first `size` entries an ascending visit from `from` sees (a walk that starts at a hint too). */
function visited(list: OrderedList<Doc>, from: string | undefined, size: number): [string, number][] {
  const rows: [string, number][] = [];
  list.visit(false, from, (entry) => rows.push([entry.key, entry.seq]) < size);
  return rows;
}

describe("a page's hint to where the next page starts", () => {
  it("gives the seek's page through inserts and removals that make hints stale, walked in order and from any key", () => {
    type Op = { insert: string } | { remove: number } | { walk: number } | { from: string; size: number };
    const keys = ["a", "b", "c", "d", "e", "f", "g"];
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...keys).map((insert) => ({ insert })) },
      { weight: 2, arbitrary: fc.nat(300).map((remove) => ({ remove })) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 7 }).map((walk) => ({ walk })) },
      { weight: 1, arbitrary: fc.record({ from: fc.constantFrom("", "a", "b", "bb", "c", "d", "e", "f", "g", "h"), size: fc.integer({ min: 1, max: 9 }) }) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 120 }), (blockSize, ops) => {
        const model = new OrderedListModel(blockSize);
        const { list, live } = model;
        for (const o of ops) {
          if ("insert" in o) {
            model.insert(o.insert);
            continue;
          }
          if ("remove" in o) {
            model.remove(o.remove);
            continue;
          }
          const sorted = model.sorted();
          if ("from" in o) {
            expect(placed(list, o.from, o.size)).toEqual(expected(sorted, o.from, o.size));
            expect(visited(list, o.from, o.size)).toEqual((expected(sorted, o.from, o.size) as { rows: unknown }).rows);
            continue;
          }
          // Every page of the list in order, each from the one before's next key (as a client walks).
          let from: string | undefined;
          for (let pages = 0; pages <= live.length; pages++) {
            const want = expected(sorted, from, o.walk);
            expect(placed(list, from, o.walk)).toEqual(want);
            from = (want as { nextKey?: string }).nextKey;
            if (from === undefined) break;
            expect(visited(list, from, o.walk)).toEqual((expected(sorted, from, o.walk) as { rows: unknown }).rows);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("lets a walk through pages in order skip the seek: four key reads a page instead of a seek's", () => {
    const list = new OrderedList<Doc>(4);
    let keysRead = 0;
    const count = 4_000;
    for (let i = 0; i < count; i++) {
      const key = `k${String(i).padStart(5, "0")}`;
      const entry = { seq: i, doc: { n: i } } as OrderedEntry<Doc>;
      Object.defineProperty(entry, "key", {
        get: () => {
          keysRead++;
          return key;
        },
      });
      list.insert(entry);
    }
    const walk = (): number[] => {
      const reads: number[] = [];
      let from: string | undefined;
      for (;;) {
        keysRead = 0;
        const page = list.placedPage(from, 50);
        reads.push(keysRead);
        from = page.nextKey;
        if (from === undefined) return reads;
      }
    };
    walk();
    const again = walk();
    expect(again).toHaveLength(count / 50);
    // The first page has no start key; every later one starts at its hint: the entry there and the
    // one before it checked, then the page's first key and the next page's.
    expect(again.slice(1).every((n) => n <= 4)).toBe(true);
    // A start key no page left a hint for is sought: a block search over 1,000+ blocks, then one
    // inside the block.
    keysRead = 0;
    expect(list.placedPage("k01234x", 50).firstKey).toBe("k01235");
    expect(keysRead).toBeGreaterThan(12);
  });
});
