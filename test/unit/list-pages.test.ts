// List pages walk an order kept up to date on every write (and equality indexes on some fields)
// instead of sorting and filtering the whole collection per request. Their answer must be the
// full scan's, byte for byte: this drives random collections through random creates, updates,
// deletes (some issued at once, some durable and not yet synced), restarts that replay the
// journal and restarts that recover a damaged file, and after each step compares listPage with
// the full scan (sort everything stably, filter, then page) over random filter and paging queries.
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import { ManualClock } from "../../server/clock-control.js";
import { ApiError } from "../../server/http/errors.js";
import { contentRevision } from "../../server/http/envelope.js";
import { equalityIndexOn, filterFromQuery } from "../../server/http/filters.js";
import type { Paging } from "../../server/http/envelope.js";
import { DEFAULT_PAGE_SIZE } from "../../server/http/paging.js";
import { byId, listPage, view, type Data, type ListOptions } from "../../server/http/resource.js";
import type { Collection, StoredDoc } from "../../server/store/index.js";
import { closeOpenedStores, openStore } from "../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const INDEXED = ["owner_id", "device_type", "n", "tags", "nested.x", "id"];
const START_MS = Date.UTC(2026, 10, 26, 12, 0, 0);
const START_S = toGregorianSeconds(START_MS);

const byName = (doc: StoredDoc): string => String(doc.data.name ?? "");
const byCreated = (doc: StoredDoc): string => `${String(doc.created).padStart(16, "0")}-${doc.id}`;
const idOnly = (doc: StoredDoc): Data => ({ id: doc.id });
const enabledOnly = (doc: StoredDoc): boolean => doc.data.enabled === true;
const ownedByU1 = (doc: StoredDoc): boolean => doc.data.owner_id === "u1";

/**
 * The list shapes the server uses: by id, by a key with many ties (either way), newest first
 * with a `where`, a `where` narrowed by an index (a user's devices).
 */
const LISTS: ListOptions[] = [
  { row: view },
  { row: view, sortKey: byName },
  { row: idOnly, sortKey: byName, descending: true },
  { row: idOnly, sortKey: byCreated, descending: true, where: enabledOnly },
  { row: view, where: ownedByU1, equal: { field: "owner_id", value: "u1" } },
];

const scalar = fc.constantFrom<unknown>("a", "b", "1", "true", "null", "", 1, 0, 1.5, -2, true, false, null);
const docData: fc.Arbitrary<Data> = fc.record(
  {
    name: fc.constantFrom("alice", "bob", "carol", "Bob", ""),
    owner_id: fc.constantFrom<unknown>("u1", "u2", "u3", null, ["u1", "u2"]),
    device_type: fc.constantFrom<unknown>("softphone", "sip_device", "true", "", 1),
    n: fc.constantFrom<unknown>(0, 1, 1.5, -2, 10, "1", "1.0", true, null, [1, "1"]),
    tags: fc.array(fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })), { maxLength: 3 }),
    nested: fc.oneof(fc.record({ x: scalar }, { requiredKeys: [] }), scalar),
    enabled: fc.boolean(),
    empty: fc.constantFrom<unknown>("", [], {}, 0, "x", null),
    pvt_secret: fc.constantFrom("s1", "s2"),
  },
  { requiredKeys: ["name"] },
);

const FIELDS = ["owner_id", "device_type", "n", "tags", "nested.x", "nested", "name", "enabled", "empty", "id", "pvt_secret", "missing"];
const WANTED = [
  "a", "b", "1", "1.0", " 1", "", "true", "false", "null", "u1", "u2", "softphone", "sip_device", "1.5", "-2", "0", "-0", "10",
  "x", "alice", "Bob", '["u1","u2"]', '[1,"a"]', '[true,null]', "[{}]", "[", "$id",
];

/** A query before its placeholders are filled from the collection: `$id` and a start key. */
interface QuerySpec {
  params: Record<string, string>;
  /** Start at the key of the i-th document in sort order, a key past every one, or none. */
  start?: number | "past" | "before";
}

const bound = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: -5, max: 120 }).map((d) => String(START_S + d)) },
  { weight: 1, arbitrary: fc.constantFrom("abc", "-1") },
);
const field = fc.constantFrom(...FIELDS);
const wanted = fc.constantFrom(...WANTED);
/** One query parameter; a query has a few, as a client's would, so most of them match something. */
const param: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(field, wanted).map(([f, w]): [string, string] => [`filter_${f}`, w]) },
  { weight: 2, arbitrary: fc.tuple(field, wanted).map(([f, w]): [string, string] => [`filter_not_${f}`, w]) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("has_key", "key_missing", "has_value", "missing_value", "value_missing"), field) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("created_from", "created_to", "modified_from", "modified_to"), bound) },
  { weight: 6, arbitrary: fc.tuple(fc.constant("page_size"), fc.constantFrom("1", "2", "3", "5", "7", "50", "1", "2", "3", "0", "x")) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom("ascending", "descending"), fc.constantFrom("true", "false")) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("paginate"), fc.constantFrom("false", "true")) },
);
const querySpec: fc.Arbitrary<QuerySpec> = fc
  .tuple(fc.array(param, { maxLength: 4 }), fc.option(fc.oneof(fc.nat({ max: 40 }), fc.constantFrom<"past" | "before">("past", "before")), { freq: 2 }))
  .map(([pairs, start]) => (start === null ? { params: Object.fromEntries(pairs) } : { params: Object.fromEntries(pairs), start }));

type Command =
  | { kind: "create"; data: Data }
  | { kind: "update"; pick: number; data: Data }
  | { kind: "delete"; pick: number }
  | { kind: "batch"; writes: Command[]; durable: boolean; query: QuerySpec; list: number }
  | { kind: "advance"; seconds: number }
  | { kind: "restart"; damaged: boolean }
  | { kind: "check"; query: QuerySpec; list: number };

const write: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: docData.map((data): Command => ({ kind: "create", data })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), docData).map(([pick, data]): Command => ({ kind: "update", pick, data })) },
  { weight: 1, arbitrary: fc.nat().map((pick): Command => ({ kind: "delete", pick })) },
);
const listIndex = fc.nat({ max: LISTS.length - 1 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: write },
  { weight: 1, arbitrary: fc.record({ writes: fc.array(write, { minLength: 2, maxLength: 8 }), durable: fc.boolean(), query: querySpec, list: listIndex }).map((b): Command => ({ kind: "batch", ...b })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }).map((seconds): Command => ({ kind: "advance", seconds })) },
  { weight: 1, arbitrary: fc.boolean().map((damaged): Command => ({ kind: "restart", damaged })) },
  { weight: 4, arbitrary: fc.record({ query: querySpec, list: listIndex }).map((c): Command => ({ kind: "check", ...c })) },
);

/** The full scan, as every list answered before the orders: sort all (stably), filter, then page. */
function fullScan(collection: Collection, query: Record<string, string>, options: ListOptions): unknown {
  const test = filterFromQuery(query);
  const key = options.sortKey ?? byId;
  const sorted = collection.all().map((row) => ({ row, key: key(row) }));
  sorted.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const kept = sorted.filter((k) => test(k.row) && (options.where === undefined || options.where(k.row)));
  let descending = options.descending ?? false;
  if (query.ascending === "true" || query.descending === "false") descending = false;
  if (query.descending === "true" || query.ascending === "false") descending = true;
  const keyed = descending ? [...kept].reverse() : kept;
  let rows: StoredDoc[];
  let paging: Paging | undefined;
  if (query.paginate === "false") {
    rows = keyed.map((k) => k.row);
  } else {
    let size = DEFAULT_PAGE_SIZE;
    if (query.page_size !== undefined) {
      size = Number(query.page_size);
      if (!/^\d+$/.test(query.page_size) || size < 1) throw new ApiError("faulty_request", { page_size: query.page_size });
    }
    let from = 0;
    const start = query.start_key;
    if (start !== undefined) {
      from = keyed.findIndex((k) => (descending ? k.key <= start : k.key >= start));
      if (from < 0) from = keyed.length;
    }
    const slice = keyed.slice(from, from + size);
    const next = keyed[from + size];
    paging = { page_size: slice.length };
    if (slice[0]) paging.start_key = slice[0].key;
    if (next) paging.next_start_key = next.key;
    rows = slice.map((k) => k.row);
  }
  return { data: rows.map(options.row), paging, revision: contentRevision(rows.map((d) => d.rev)) };
}

function answer(run: () => unknown): string {
  try {
    return JSON.stringify({ ok: run() });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return JSON.stringify({ error: err.code, data: err.data });
  }
}

/** The query with its placeholders filled from the collection as it is now. */
function queryOf(spec: QuerySpec, collection: Collection, options: ListOptions): Record<string, string> {
  const docs = collection.all();
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.params)) params[k] = v === "$id" ? (docs[docs.length >> 1]?.id ?? "none") : v;
  if (spec.start === "past") params.start_key = "\uffff";
  else if (spec.start === "before") params.start_key = "";
  else if (spec.start !== undefined) {
    const keys = docs.map(options.sortKey ?? byId).sort();
    const key = keys[spec.start % Math.max(1, keys.length)];
    if (key !== undefined) params.start_key = key;
  }
  return params;
}

/** How many comparisons were made, and how many had rows: a check that the queries are not all empty or refused. */
const seen = { compared: 0, withRows: 0 };

function compare(collection: Collection, spec: QuerySpec, list: number): void {
  const options = LISTS[list] ?? { row: view };
  const query = queryOf(spec, collection, options);
  const expected = answer(() => fullScan(collection, query, options));
  expect(answer(() => listPage(collection, query, options)), JSON.stringify(query)).toBe(expected);
  seen.compared++;
  if (expected.startsWith('{"ok":{"data":[{')) seen.withRows++;
}

/** The devices collection of a data directory, opened as the server opens it. */
async function openDevices(dir: string, clock: ManualClock): Promise<Collection> {
  const store = await openStore({ dir, clock });
  // As the server does on start: declared before the first request.
  for (const field of INDEXED) store.equalityIndex("devices", equalityIndexOn(field));
  return store.account(ACCOUNT, "devices");
}

class Run {
  private constructor(
    readonly dir: string,
    public clock: ManualClock,
    public collection: Collection,
  ) {}

  static async open(dir: string): Promise<Run> {
    const clock = new ManualClock(START_MS);
    return new Run(dir, clock, await openDevices(dir, clock));
  }

  /** Starts a write without awaiting it; a write the collection refuses at once is a settled failure. */
  start(c: Command, durable: boolean): Promise<unknown> {
    const ids = this.collection.all().map((d) => d.id);
    if (c.kind === "create") return this.collection.create(c.data, { durable });
    const id = ids.length === 0 ? undefined : ids[(c.kind === "update" || c.kind === "delete" ? c.pick : 0) % ids.length];
    if (id === undefined) return Promise.resolve();
    if (c.kind === "update") return this.collection.update(id, c.data);
    if (c.kind === "delete") return this.collection.delete(id);
    return Promise.resolve();
  }

  async step(c: Command): Promise<void> {
    switch (c.kind) {
      case "create":
      case "update":
      case "delete":
        await this.start(c, false);
        return;
      case "batch": {
        const pending = c.writes.map((w) => this.start(w, c.durable).catch(() => undefined));
        // In memory but not yet acknowledged (and, if durable, not yet shown): both must agree.
        compare(this.collection, c.query, c.list);
        await Promise.all(pending);
        compare(this.collection, c.query, c.list);
        return;
      }
      case "advance":
        // A quiet second rewrites the file: awaited, so a restart never meets it half done.
        await this.clock.advance(c.seconds * 1000);
        await this.collection.flush();
        return;
      case "restart":
        await this.reopen(c.damaged);
        return;
      case "check":
        compare(this.collection, c.query, c.list);
        return;
    }
  }

  /**
   * Opens the data directory again without closing (a crash: the journal is replayed), with a
   * new clock so the abandoned store's timers never run; `damaged` garbles the collection file
   * first (recovered from its `.bak` and the journal, or what can be salvaged).
   */
  async reopen(damaged: boolean): Promise<void> {
    const before = this.collection.all().map((d) => `${d.id} ${d.rev}`);
    const file = join(this.dir, "accounts", ACCOUNT, "devices.json");
    const exists = await access(file).then(() => true, () => false);
    if (damaged && exists) await writeFile(file, '{"docs": [{"id": "cut short');
    this.clock = new ManualClock(this.clock.now());
    this.collection = await openDevices(this.dir, this.clock);
    if (!damaged) expect(this.collection.all().map((d) => `${d.id} ${d.rev}`)).toEqual(before);
  }
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sb-list-pages-"));
});
afterAll(async () => {
  await closeOpenedStores();
  await rm(root, { recursive: true, force: true });
});

describe("list pages from the kept order", () => {
  it("answer what the full scan answers, byte for byte, through writes, concurrent writes and restarts", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 40 }), fc.array(fc.record({ query: querySpec, list: listIndex }), { minLength: 10, maxLength: 10 }), async (commands, finals) => {
        const run = await Run.open(join(root, String(n++)));
        for (const c of commands) await run.step(c);
        for (const f of finals) compare(run.collection, f.query, f.list);
      }),
      { seed: 17, numRuns: 150 },
    );
    expect(seen.withRows).toBeGreaterThan(seen.compared / 3);
  });

  it("pages a collection of thousands with many ties the same way, every page in turn", async () => {
    const run = await Run.open(join(root, "large"));
    // Orders and indexes exist before the writes, so the writes keep them up to date.
    for (const list of LISTS.keys()) compare(run.collection, { params: {} }, list);
    const samples = fc.sample(docData, { numRuns: 3_000, seed: 9 });
    await Promise.all(samples.map((data) => run.collection.create(data)));
    const docs = run.collection.all();
    await Promise.all(docs.filter((_, i) => i % 7 === 0).map((d) => run.collection.delete(d.id)));
    await Promise.all(docs.filter((_, i) => i % 7 !== 0 && i % 5 === 1).map((d, i) => run.collection.update(d.id, samples[i] ?? {})));
    for (const [list, options] of LISTS.entries()) {
      const queries: Record<string, string>[] = [{ page_size: "397" }, { page_size: "197", filter_owner_id: "u1" }, { page_size: "50", filter_n: "1", filter_device_type: "softphone" }, { page_size: "64", descending: "true", filter_tags: '["a",1]' }];
      for (const params of queries) {
        let start: string | undefined;
        let pages = 0;
        do {
          const query = start === undefined ? params : { ...params, start_key: start };
          compare(run.collection, { params: query }, list);
          const page = listPage(run.collection, query, options) as { paging?: Paging };
          start = page.paging?.next_start_key;
          pages++;
        } while (start !== undefined && pages < 100);
      }
    }
    // Rewrites started by the count of changes finish before the restart reads the files.
    await run.collection.flush();
    await run.reopen(false);
    compare(run.collection, { params: { filter_owner_id: "u2", page_size: "20" }, start: 500 }, 1);
  });
});
