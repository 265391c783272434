// The CDRs' number index (server/api/caller-history.ts) kept through writes: random creates,
// updates (numbers changed, dropped, moved between caller and callee) and deletes, some issued at
// once, then a restart; for every number of the pool, the legs the index walk finds (matched
// exactly, as the endpoint does) are those a scan of the whole collection finds, in the same order.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { cdrNumberIndex, NUMBER_TAIL_FIELD, numberTail } from "../../server/api/caller-history.js";
import { cdrSortKey, CDRS_COLLECTION } from "../../server/calls/index.js";
import { toE164 } from "../../server/phone-numbers.js";
import { Store, type Collection, type StoredDoc } from "../../server/store/index.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
/** E.164, national, a number sharing their tail, short extensions, junk. */
const NUMBERS = ["+14155550100", "(415) 555-0100", "4155550100", "+12125550100", "+14155550199", "1002", "1003", "", "anonymous"];
const WANTED = ["+14155550100", "+12125550100", "+14155550199", "1002", "1003"];

const exact = (n: unknown, wanted: string) => typeof n === "string" && (toE164(n, "US") ?? n.replace(/[^\d+]/g, "")) === wanted;
const isOf = (doc: StoredDoc, wanted: string) => exact(doc.data.caller_id_number, wanted) || exact(doc.data.callee_id_number, wanted);

function viaIndex(cdrs: Collection, wanted: string): string[] {
  const tail = numberTail(wanted);
  const ids: string[] = [];
  if (tail === undefined) return ids;
  cdrs.visit(cdrSortKey, { descending: true, equal: { field: NUMBER_TAIL_FIELD, keys: [tail] } }, (doc) => {
    if (isOf(doc, wanted)) ids.push(doc.id);
    return true;
  });
  return ids;
}

function byScan(cdrs: Collection, wanted: string): string[] {
  return cdrs
    .all()
    .filter((d) => isOf(d, wanted))
    .sort((a, b) => (cdrSortKey(a) < cdrSortKey(b) ? 1 : cdrSortKey(a) > cdrSortKey(b) ? -1 : 0))
    .map((d) => d.id);
}

const legData = fc.record({
  caller_id_number: fc.option(fc.constantFrom(...NUMBERS), { nil: undefined }),
  callee_id_number: fc.option(fc.constantFrom(...NUMBERS), { nil: undefined }),
  pvt_started_ms: fc.integer({ min: 0, max: 50 }),
});
const command = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), data: legData }),
  fc.record({ kind: fc.constant("update" as const), pick: fc.nat(), data: legData }),
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("burst" as const), data: fc.array(legData, { minLength: 2, maxLength: 6 }) }),
);

const root = await mkdtemp(join(tmpdir(), "sb-history-index-"));
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function open(dir: string): Promise<{ store: Store; cdrs: Collection }> {
  const store = await Store.open({ dir });
  store.equalityIndex(CDRS_COLLECTION, cdrNumberIndex);
  return { store, cdrs: await store.account(ACCOUNT, CDRS_COLLECTION) };
}

const clean = (data: Record<string, unknown>) => Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));

describe("the CDRs' number index", () => {
  it("finds what a scan finds through creates, updates, deletes, bursts and a restart", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 3, maxLength: 30 }), async (commands) => {
        const dir = join(root, String(n++));
        let { store, cdrs } = await open(dir);
        // The order exists before the writes, so they keep it.
        viaIndex(cdrs, WANTED[0] ?? "");
        for (const c of commands) {
          const ids = cdrs.all().map((d) => d.id);
          if (c.kind === "create") await cdrs.create(clean(c.data));
          else if (c.kind === "burst") await Promise.all(c.data.map((d) => cdrs.create(clean(d))));
          else if (ids.length === 0) continue;
          else if (c.kind === "update") await cdrs.update(ids[c.pick % ids.length] ?? "", clean(c.data));
          else await cdrs.delete(ids[c.pick % ids.length] ?? "");
          for (const wanted of WANTED) expect(viaIndex(cdrs, wanted), wanted).toEqual(byScan(cdrs, wanted));
        }
        await store.close();
        ({ store, cdrs } = await open(dir));
        for (const wanted of WANTED) expect(viaIndex(cdrs, wanted), `${wanted} after a restart`).toEqual(byScan(cdrs, wanted));
        await store.close();
      }),
      { seed: 19, numRuns: 60 },
    );
  });
});
