// A fresh list page's rows are read as slices of their list block's row texts, joined once per
// block and kept until the block changes (RowTexts.run, server/http/resource.ts; blockMemo,
// server/store/ordered-list.ts). A kept block text must never outlive the block: this checks the
// slices against the rows' own texts through random inserts and removals in tiny blocks (which
// split and empty often), and then a real store of more documents than a block holds, with an
// equality index, through replacements that move documents between the index's lists, deletes,
// creates, concurrent writes and a restart, every page of each list walked by its paging keys
// against the page made afresh.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import { JsonText } from "../../server/http/envelope.js";
import { equalityIndexOn } from "../../server/http/filters.js";
import { listPage, listPageText, RowTexts, type Data } from "../../server/http/resource.js";
import type { Collection, StoredDoc } from "../../server/store/index.js";
import { OrderedList, type OrderedEntry } from "../../server/store/ordered-list.js";
import { closeOpenedStores, openStore } from "../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const START_MS = Date.UTC(2026, 10, 28, 5, 0, 0);

const row = (doc: StoredDoc): Data => ({ id: doc.id, name: doc.data.name, kind: doc.data.kind });

/** RowTexts counting the row texts it is asked for one by one. */
class CountingTexts extends RowTexts {
  asked = 0;
  override of(doc: StoredDoc): string {
    this.asked++;
    return super.of(doc);
  }
}

function fakeDoc(n: number, name: string): StoredDoc {
  return { id: `d${n}`, rev: `1-${n}`, created: 0, modified: 0, data: { name, kind: n % 2 === 0 ? "softphone" : "sip_device" } };
}

/** The runs of at most `size` entries from `from`, as a page's walk takes them. */
function runsOf(list: OrderedList<StoredDoc>, from: string | undefined, size: number): { block: readonly OrderedEntry<StoredDoc>[]; from: number; to: number; docs: StoredDoc[] }[] {
  const runs: { block: readonly OrderedEntry<StoredDoc>[]; from: number; to: number; docs: StoredDoc[] }[] = [];
  let taken = 0;
  list.visitPlaced(from, (doc, _key, block, i) => {
    if (taken++ === size || block === undefined) return false;
    const last = runs[runs.length - 1];
    if (last !== undefined && last.block === block && last.to === i - 1) {
      last.to = i;
      last.docs.push(doc);
    } else runs.push({ block, from: i, to: i, docs: [doc] });
    return true;
  });
  return runs;
}

describe("a list block's row texts joined once", () => {
  it("slices a block's texts as the rows' own texts joined, through inserts and removals in tiny blocks", () => {
    type Op = { insert: string } | { remove: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("a", "b", "c", "d", "e").map((insert) => ({ insert })) },
      { weight: 2, arbitrary: fc.nat().map((remove) => ({ remove })) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 120 }), (blockSize, ops) => {
        const texts = new RowTexts(row);
        const list = new OrderedList<StoredDoc>(blockSize);
        let model: OrderedEntry<StoredDoc>[] = [];
        let seq = 0;
        for (const o of ops) {
          if ("insert" in o) {
            const entry = { key: o.insert, seq, doc: fakeDoc(seq, `n${seq}"é`) };
            seq++;
            list.insert(entry);
            model.push(entry);
          } else {
            const victim = model[o.remove % Math.max(1, model.length)];
            if (victim === undefined) continue;
            list.remove(victim.key, victim.seq);
            model = model.filter((e) => e !== victim);
          }
          // Every block's text made (and kept) after every step, so a stale one would be served.
          for (const from of [undefined, "a", "b", "c", "d", "e", "f"]) {
            for (const size of [1, 3, 1000]) {
              for (const run of runsOf(list, from, size)) {
                expect(texts.run(run.block, run.from, run.to)).toBe(run.docs.map((d) => JSON.stringify(row(d))).join(","));
              }
            }
          }
        }
      }),
      { seed: 20, numRuns: 200 },
    );
  });

  it("joins a block at its second read, then makes a fresh page of its rows without asking for any row's text", () => {
    const texts = new CountingTexts(row);
    const list = OrderedList.fromSorted(
      Array.from({ length: 600 }, (_, seq) => ({ key: `k${String(seq).padStart(4, "0")}`, seq, doc: fakeDoc(seq, `n${seq}`) })),
    );
    // The block's first read since it changed: its page's rows one by one, nothing joined.
    expect(runsOf(list, "k0010", 50).map((r) => texts.run(r.block, r.from, r.to))).toHaveLength(1);
    expect(texts.asked).toBe(50);
    // Its second: the block joined (each row's text asked once more, kept by RowTexts).
    expect(runsOf(list, "k0020", 50).map((r) => texts.run(r.block, r.from, r.to))).toHaveLength(1);
    const joined = texts.asked;
    expect(joined).toBe(50 + 256);
    // Another page of the same block: a slice, no row text asked for.
    const [run] = runsOf(list, "k0100", 50);
    expect(run).toBeDefined();
    if (run === undefined) return;
    expect(texts.run(run.block, run.from, run.to)).toBe(run.docs.map((d) => JSON.stringify(row(d))).join(","));
    expect(texts.asked).toBe(joined);
  });
});

// ---- through a real store ----

const KINDS = ["softphone", "sip_device"] as const;
const INITIAL = 1_300;

type Command =
  | { kind: "replace"; pick: number; to: (typeof KINDS)[number]; name: string }
  | { kind: "delete"; pick: number }
  | { kind: "create"; count: number; to: (typeof KINDS)[number] }
  | { kind: "together"; picks: number[] }
  | { kind: "restart" };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ pick: fc.nat(), to: fc.constantFrom(...KINDS), name: fc.string({ maxLength: 3 }) }).map((c): Command => ({ kind: "replace", ...c })) },
  { weight: 3, arbitrary: fc.nat().map((pick): Command => ({ kind: "delete", pick })) },
  { weight: 2, arbitrary: fc.record({ count: fc.integer({ min: 1, max: 300 }), to: fc.constantFrom(...KINDS) }).map((c): Command => ({ kind: "create", ...c })) },
  { weight: 2, arbitrary: fc.array(fc.nat(), { minLength: 2, maxLength: 6 }).map((picks): Command => ({ kind: "together", picks })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "restart" }) },
);

const QUERIES: Record<string, string>[] = [{ filter_kind: "softphone" }, { filter_kind: "sip_device", page_size: "37" }, { page_size: "200" }];

async function openDevices(dir: string): Promise<Collection> {
  const store = await openStore({ dir, clock: new ManualClock(START_MS) });
  const collection = await store.account(ACCOUNT, "devices");
  collection.equalityIndex(equalityIndexOn("kind"));
  return collection;
}

/** Every page of `query`, followed by its paging keys: the served text against the page made afresh. */
function checkAllPages(collection: Collection, texts: RowTexts, query: Record<string, string>): number {
  let pages = 0;
  let start: string | undefined;
  for (;;) {
    const q = start === undefined ? query : { ...query, start_key: start };
    const fresh = listPage(collection, q, { row });
    const served = listPageText(collection, q, { texts });
    expect(served.data).toBeInstanceOf(JsonText);
    if (!(served.data instanceof JsonText)) return pages;
    expect(served.data.text).toBe(JSON.stringify(fresh.data));
    expect({ paging: served.paging, revision: served.revision }).toEqual({ paging: fresh.paging, revision: fresh.revision });
    pages++;
    start = served.paging?.next_start_key;
    if (start === undefined) return pages;
  }
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sb-block-texts-"));
});
afterAll(async () => {
  await closeOpenedStores();
  await rm(root, { recursive: true, force: true });
});

describe("fresh list pages from block texts, in a store larger than a block", () => {
  it("equal the page made afresh through writes that move rows between lists, deletes, creates, concurrent writes and a restart", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: 8 }), async (commands) => {
        const dir = join(root, `run-${n++}`);
        let collection = await openDevices(dir);
        await Promise.all(Array.from({ length: INITIAL }, (_, i) => collection.create({ name: `device ${i}`, kind: KINDS[i % 2] })));
        const texts = new RowTexts(row);
        const idOf = (pick: number): string | undefined => {
          const ids = collection.all().map((d) => d.id);
          return ids[pick % Math.max(1, ids.length)];
        };
        // Every block text made before every step, so that a stale one would be served after it.
        const checkAll = (): void => {
          for (const query of QUERIES) expect(checkAllPages(collection, texts, query)).toBeGreaterThan(1);
        };
        checkAll();
        for (const c of commands) {
          switch (c.kind) {
            case "replace": {
              const id = idOf(c.pick);
              if (id !== undefined) await collection.update(id, { name: c.name, kind: c.to });
              break;
            }
            case "delete": {
              const id = idOf(c.pick);
              if (id !== undefined) await collection.delete(id);
              break;
            }
            case "create":
              await Promise.all(Array.from({ length: c.count }, (_, i) => collection.create({ name: `new ${i}`, kind: c.to })));
              break;
            case "together": {
              // Writes started at once, pages read while they are pending.
              const writes: Promise<unknown>[] = [];
              for (const [i, pick] of c.picks.entries()) {
                const id = idOf(pick);
                if (id === undefined) continue;
                writes.push((i % 2 === 0 ? collection.update(id, { name: "together", kind: KINDS[i % 2] }) : collection.delete(id)).catch(() => undefined));
                checkAll();
              }
              await Promise.all(writes);
              break;
            }
            case "restart":
              // A crash: the data directory opened again, the journal replayed.
              collection = await openDevices(dir);
              break;
          }
          checkAll();
        }
      }),
      { seed: 20, numRuns: 6 },
    );
  });
});
