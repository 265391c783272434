// A list's pages are kept per collection and query while the collection's `version` stands
// (PageAnswers, server/http/resource.ts; Collection.version, server/store/collection.ts). A kept
// page must never outlive what it shows: this drives a real store through creates, replacements,
// deletes, attachments, durable creates seen before and after their sync, writes started together
// and not awaited, and restarts, asking for pages through the cache before and after every step
// (so that any page a change could leave stale is kept when it comes), and compares each with
// the page made afresh.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import { JsonText } from "../../server/http/envelope.js";
import type { Outcome } from "../../server/http/endpoint.js";
import { listPageText, PAGE_CHARS_KEPT, PageAnswers, PAGES_KEPT, RowTexts, type Data } from "../../server/http/resource.js";
import type { Collection, StoredDoc } from "../../server/store/index.js";
import { closeOpenedStores, openStore } from "../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const START_MS = Date.UTC(2026, 10, 27, 4, 0, 0);

const row = (doc: StoredDoc): Data => ({ id: doc.id, name: doc.data.name, kind: doc.data.kind });
const texts = new RowTexts(row);

type Command =
  | { kind: "create"; data: Data }
  | { kind: "durable"; data: Data }
  | { kind: "replace"; pick: number; data: Data }
  | { kind: "delete"; pick: number }
  | { kind: "attach"; pick: number }
  | { kind: "together"; creates: Data[]; replace: number; remove: number }
  | { kind: "restart" };

const docData: fc.Arbitrary<Data> = fc.record({ name: fc.string({ maxLength: 4 }), kind: fc.constantFrom("softphone", "sip_device") });
const pick = fc.nat(50);
const QUERIES: Record<string, string>[] = [
  {},
  { filter_kind: "softphone" },
  { filter_kind: "sip_device", page_size: "2" },
  { page_size: "1" },
  { paginate: "false" },
  { descending: "true", page_size: "3" },
];
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: docData.map((data): Command => ({ kind: "create", data })) },
  { weight: 2, arbitrary: docData.map((data): Command => ({ kind: "durable", data })) },
  { weight: 4, arbitrary: fc.record({ pick, data: docData }).map((c): Command => ({ kind: "replace", ...c })) },
  { weight: 2, arbitrary: pick.map((p): Command => ({ kind: "delete", pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Command => ({ kind: "attach", pick: p })) },
  { weight: 2, arbitrary: fc.record({ creates: fc.array(docData, { maxLength: 3 }), replace: pick, remove: pick }).map((c): Command => ({ kind: "together", ...c })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "restart" }) },
);

class Run {
  readonly answers = new PageAnswers();
  made = 0;

  private constructor(
    readonly dir: string,
    public collection: Collection,
  ) {}

  static async open(dir: string): Promise<Run> {
    return new Run(dir, await openDevices(dir));
  }

  /** Each page revision (ETag) served in this run, with the query and page text it stood for. */
  readonly revisions = new Map<string, string>();

  /**
   * Every query's page through the cache against the page made afresh; its revision (the one the
   * server sends, made by PageAnswers from the collection's epoch and version) stands for one page
   * only, through every write and restart of the run.
   */
  checkPages(): void {
    for (const query of QUERIES) {
      const served = this.answers.of(this.collection, query, (q, revision) => {
        this.made++;
        return listPageText(this.collection, q, { texts, revision });
      });
      const fresh = listPageText(this.collection, query, { texts });
      expect(textOf(served)).toBe(textOf(fresh));
      expect(served.paging).toEqual(fresh.paging);
      const revision = served.revision ?? "";
      expect(revision).toMatch(/^[0-9a-f]{32}$/);
      const page = `${JSON.stringify(query)} ${textOf(served)}`;
      const before = this.revisions.get(revision);
      if (before !== undefined) expect(page, `revision ${revision} came back for another page`).toBe(before);
      this.revisions.set(revision, page);
    }
  }

  idOf(n: number): string | undefined {
    const ids = this.collection.all().map((d) => d.id);
    return ids.length === 0 ? undefined : ids[n % ids.length];
  }

  async step(c: Command): Promise<void> {
    switch (c.kind) {
      case "create":
        await this.collection.create(c.data);
        return;
      case "durable": {
        // Held back until synced: not shown while the write is pending, shown after.
        const writing = this.collection.create(c.data, { durable: true });
        this.checkPages();
        await writing;
        return;
      }
      case "replace": {
        const id = this.idOf(c.pick);
        if (id !== undefined) await this.collection.update(id, c.data);
        return;
      }
      case "delete": {
        const id = this.idOf(c.pick);
        if (id !== undefined) await this.collection.delete(id);
        return;
      }
      case "attach": {
        const id = this.idOf(c.pick);
        if (id !== undefined) await this.collection.putAttachment(id, "a.wav", Buffer.from("RIFF"), "audio/wav");
        return;
      }
      case "together": {
        // Writes started at once, pages read between them and while they are all pending.
        const replaced = this.idOf(c.replace);
        const removed = this.idOf(c.remove);
        const writes: Promise<unknown>[] = [];
        for (const data of c.creates) {
          writes.push(this.collection.create(data));
          this.checkPages();
        }
        if (replaced !== undefined) writes.push(this.collection.update(replaced, { name: "together", kind: "softphone" }).catch(() => undefined));
        this.checkPages();
        if (removed !== undefined && removed !== replaced) writes.push(this.collection.delete(removed).catch(() => undefined));
        this.checkPages();
        await Promise.all(writes);
        return;
      }
      case "restart":
        // A crash: the data directory opened again, the journal replayed; the same cache asked.
        this.collection = await openDevices(this.dir);
        return;
    }
  }
}

function textOf(outcome: Outcome): string {
  expect(outcome.data).toBeInstanceOf(JsonText);
  return outcome.data instanceof JsonText ? outcome.data.text : "";
}

async function openDevices(dir: string): Promise<Collection> {
  const store = await openStore({ dir, clock: new ManualClock(START_MS) });
  return store.account(ACCOUNT, "devices");
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sb-rest-pages-"));
});
afterAll(async () => {
  await closeOpenedStores();
  await rm(root, { recursive: true, force: true });
});

describe("list pages kept per collection version", () => {
  it("never serve a page older than the collection, through writes, concurrent writes, durable creates and restarts", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (commands) => {
        const run = await Run.open(join(root, `run-${n++}`));
        for (const c of commands) {
          run.checkPages();
          await run.step(c);
          run.checkPages();
        }
      }),
      { numRuns: 40 },
    );
  });

  it("gives a page another revision after a write to one of its rows, a delete, and a reopening of the same data", async () => {
    const dir = join(root, "revisions");
    let run = await Run.open(dir);
    const page = { filter_kind: "softphone", page_size: "2" };
    const revisionOf = (r: Run): string => r.answers.of(r.collection, page, (q, revision) => listPageText(r.collection, q, { texts, revision })).revision ?? "";
    const a = await run.collection.create({ name: "a", kind: "softphone" });
    await run.collection.create({ name: "b", kind: "softphone" });
    const first = revisionOf(run);
    expect(revisionOf(run)).toBe(first);
    await run.collection.update(a.id, { name: "a2", kind: "softphone" });
    const updated = revisionOf(run);
    expect(updated).not.toBe(first);
    await run.collection.delete(a.id);
    const deleted = revisionOf(run);
    expect(new Set([first, updated, deleted]).size).toBe(3);
    // Reopened (a crash and a start): the same rows, the version counted afresh, another revision.
    const version = run.collection.version;
    run = await Run.open(dir);
    const reopened = revisionOf(run);
    expect(new Set([first, updated, deleted, reopened]).size).toBe(4);
    // Writes bring the new object's version to the old one's: still not an old revision.
    while (run.collection.version < version) await run.collection.create({ name: "c", kind: "sip_device" });
    expect([first, updated, deleted]).not.toContain(revisionOf(run));
  });

  it("answers a repeated page without making it again from its second ask, until the collection changes", async () => {
    const run = await Run.open(join(root, "repeat"));
    await run.collection.create({ name: "a", kind: "softphone" });
    run.checkPages();
    expect(run.made).toBe(QUERIES.length);
    // The first ask only noted each query; the second keeps the page it makes.
    run.checkPages();
    const made = run.made;
    expect(made).toBe(2 * QUERIES.length);
    run.checkPages();
    run.checkPages();
    expect(run.made).toBe(made);
    const before = run.collection.version;
    await run.collection.create({ name: "b", kind: "sip_device" });
    expect(run.collection.version).not.toBe(before);
    run.checkPages();
    run.checkPages();
    expect(run.made).toBe(made + 2 * QUERIES.length);
    run.checkPages();
    expect(run.made).toBe(made + 2 * QUERIES.length);
  });

  it("keeps no page of a walk through more distinct pages than it keeps, and the same revisions either way (session 18)", async () => {
    const run = await Run.open(join(root, "walk"));
    for (let i = 0; i < 3; i++) await run.collection.create({ name: `d${i}`, kind: "softphone" });
    let made = 0;
    const make = (q: Record<string, string>, revision: string): Outcome => {
      made++;
      return listPageText(run.collection, q, { texts, revision });
    };
    // Twice PAGES_KEPT distinct queries in turn, three times over: each ask makes its page.
    const queries = Array.from({ length: 2 * PAGES_KEPT }, (_, i) => ({ page_size: String(i + 1) }));
    const revisions = new Map<string, string>();
    for (let round = 0; round < 3; round++) {
      for (const q of queries) {
        const answer = run.answers.of(run.collection, q, make);
        const known = revisions.get(q.page_size);
        if (known !== undefined) expect(answer.revision).toBe(known);
        revisions.set(q.page_size, answer.revision ?? "");
        // Not kept: no ETag made for keeping (answer() makes it from the revision, the same text).
        expect(answer.etag).toBeUndefined();
      }
    }
    expect(made).toBe(3 * queries.length);
    // A page asked twice in a row is kept, with the revision it had when it was not.
    const q = queries[5] ?? { page_size: "6" };
    run.answers.of(run.collection, q, make);
    const kept = run.answers.of(run.collection, q, make);
    expect(run.answers.of(run.collection, q, make)).toBe(kept);
    expect(kept.revision).toBe(revisions.get(q.page_size));
    expect(kept.etag).toBe(`"${kept.revision ?? ""}"`);
  });

  it("does not keep a page larger than PAGE_CHARS_KEPT, and keeps at most that much of a collection", async () => {
    const run = await Run.open(join(root, "chars"));
    const name = "n".repeat(Math.ceil(PAGE_CHARS_KEPT / 8));
    for (let i = 0; i < 10; i++) await run.collection.create({ name, kind: i < 5 ? "softphone" : "sip_device" });
    let made = 0;
    const make = (q: Record<string, string>): Outcome => {
      made++;
      return listPageText(run.collection, q, { texts });
    };
    const whole = { paginate: "false" };
    const big = run.answers.of(run.collection, whole, make);
    expect(textOf(big).length).toBeGreaterThan(PAGE_CHARS_KEPT);
    expect(run.answers.of(run.collection, whole, make)).not.toBe(big);
    expect(run.answers.of(run.collection, whole, make)).not.toBe(big);
    expect(made).toBe(3);
    // Two halves fit one at a time (each kept at its second ask): the second empties what the first kept.
    const half = { paginate: "false", filter_kind: "softphone" };
    const other = { paginate: "false", filter_kind: "sip_device" };
    run.answers.of(run.collection, half, make);
    const first = run.answers.of(run.collection, half, make);
    expect(run.answers.of(run.collection, half, make)).toBe(first);
    run.answers.of(run.collection, other, make);
    run.answers.of(run.collection, other, make);
    expect(run.answers.of(run.collection, half, make)).not.toBe(first);
  });

  it("keeps at most PAGES_KEPT pages of a collection", async () => {
    const run = await Run.open(join(root, "bound"));
    await run.collection.create({ name: "a", kind: "softphone" });
    const make = (q: Record<string, string>): Outcome => listPageText(run.collection, q, { texts });
    // Each page asked twice (kept at its second ask).
    const twice = (q: Record<string, string>): Outcome => {
      run.answers.of(run.collection, q, make);
      return run.answers.of(run.collection, q, make);
    };
    const first = twice({ page_size: "1" });
    for (let i = 2; i <= PAGES_KEPT; i++) twice({ page_size: String(i) });
    expect(run.answers.of(run.collection, { page_size: "1" }, make)).toBe(first);
    twice({ page_size: String(PAGES_KEPT + 1) });
    expect(run.answers.of(run.collection, { page_size: "1" }, make)).not.toBe(first);
  });
});
