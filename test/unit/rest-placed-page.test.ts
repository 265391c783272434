// A fresh ascending list page is found as runs of its list's blocks without reading its rows'
// entries (OrderedList.placedPage, server/store/ordered-list.ts): the same runs, row count and
// paging keys as the walk that visits each entry (visitPlaced with a PageBuilder), through
// random inserts and removals in tiny blocks, from any start key, at any page size; and it reads
// no row's document.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PageBuilder } from "../../server/http/paging.js";
import { OrderedList, type OrderedEntry } from "../../server/store/ordered-list.js";
import { OrderedListModel, type Doc } from "../helpers/ordered-list-model.js";

/** What the entry-by-entry walk gives for a page of `size` from `from`: runs, count and paging keys. */
function walked(list: OrderedList<Doc>, from: string | undefined, size: number): unknown {
  const builder = new PageBuilder<Doc>({ descending: false, size });
  const runs: { block: readonly OrderedEntry<Doc>[]; from: number; to: number }[] = [];
  list.visitPlaced(from, (doc, key, block, i) => {
    if (!builder.offer(doc, key)) return false;
    const last = runs[runs.length - 1];
    if (block !== undefined && last !== undefined && last.block === block && last.to === i - 1) last.to = i;
    else if (block !== undefined) runs.push({ block, from: i, to: i });
    return true;
  });
  const page = builder.page();
  return { runs, count: page.rows.length, firstKey: page.paging?.start_key, nextKey: page.paging?.next_start_key };
}

describe("a page found as runs of its list's blocks", () => {
  it("has the runs, count and paging keys of the walk that visits each entry, through inserts and removals in tiny blocks", () => {
    type Op = { insert: string } | { remove: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("a", "b", "c", "d", "e", "f").map((insert) => ({ insert })) },
      { weight: 1, arbitrary: fc.nat(200).map((remove) => ({ remove })) },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(op, { maxLength: 80 }),
        fc.array(fc.tuple(fc.option(fc.constantFrom("", "a", "b", "c", "cc", "d", "e", "f", "g"), { nil: undefined }), fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 8 }),
        (blockSize, ops, pages) => {
          const model = new OrderedListModel(blockSize);
          const { list } = model;
          for (const o of ops) {
            if ("insert" in o) model.insert(o.insert);
            else model.remove(o.remove);
            for (const [from, size] of pages) expect(list.placedPage(from, size)).toEqual(walked(list, from, size));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("reads no row's document", () => {
    const list = new OrderedList<Doc>(4);
    let docsRead = 0;
    for (let i = 0; i < 40; i++) {
      const entry = { key: `k${String(i).padStart(2, "0")}`, seq: i } as OrderedEntry<Doc>;
      Object.defineProperty(entry, "doc", {
        get: () => {
          docsRead++;
          return { n: i };
        },
      });
      list.insert(entry);
    }
    const page = list.placedPage("k05", 10);
    expect(docsRead).toBe(0);
    expect(page.count).toBe(10);
    expect([page.firstKey, page.nextKey]).toEqual(["k05", "k15"]);
    expect(page.runs.reduce((n, r) => n + r.to - r.from + 1, 0)).toBe(10);
  });
});
