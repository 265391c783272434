// A document's view and its list rows are serialized once per stored document and the envelope is
// joined around those texts (server/http/resource.ts, envelope.ts). A text must never outlive the
// document it was made from: this drives a real store through random creates, replacements,
// deletes, attachment writes and restarts (journal replay, and recovery of a damaged file),
// reading every document and a page of the list before each step so that every text is cached
// when the next write comes, and after each step compares what is served with a model of what
// was written and with serializing afresh.
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import { JsonText, successEnvelope, successEnvelopeText } from "../../server/http/envelope.js";
import { listPage, listPageText, publicFields, RowTexts, view, viewText, type Data } from "../../server/http/resource.js";
import type { Collection, StoredDoc } from "../../server/store/index.js";
import { closeOpenedStores, openStore } from "../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const START_MS = Date.UTC(2026, 10, 27, 4, 0, 0);

const row = (doc: StoredDoc): Data => ({ id: doc.id, name: doc.data.name, kind: doc.data.kind });
const rowTexts = new RowTexts(row);

type Command =
  | { kind: "create"; data: Data }
  | { kind: "replace"; pick: number; data: Data }
  | { kind: "delete"; pick: number }
  | { kind: "attach"; pick: number }
  | { kind: "restart"; damaged: boolean }
  | { kind: "page"; query: Record<string, string> };

const docData: fc.Arbitrary<Data> = fc.record(
  {
    name: fc.string({ maxLength: 6 }),
    kind: fc.constantFrom("softphone", "sip_device"),
    n: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)),
    nested: fc.record({ text: fc.string({ maxLength: 4 }), list: fc.array(fc.integer(), { maxLength: 3 }) }),
    pvt_secret: fc.string({ maxLength: 4 }),
  },
  { requiredKeys: ["name", "kind"] },
);
const pick = fc.nat(50);
const query = fc.record(
  {
    filter_kind: fc.constantFrom("softphone", "sip_device"),
    page_size: fc.constantFrom("1", "3", "50"),
    paginate: fc.constant("false"),
  },
  { requiredKeys: [] },
);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: docData.map((data): Command => ({ kind: "create", data })) },
  { weight: 4, arbitrary: fc.record({ pick, data: docData }).map((c): Command => ({ kind: "replace", ...c })) },
  { weight: 2, arbitrary: pick.map((p): Command => ({ kind: "delete", pick: p })) },
  { weight: 1, arbitrary: pick.map((p): Command => ({ kind: "attach", pick: p })) },
  { weight: 1, arbitrary: fc.boolean().map((damaged): Command => ({ kind: "restart", damaged })) },
  { weight: 2, arbitrary: query.map((q): Command => ({ kind: "page", query: q })) },
);

class Run {
  /** What was written last for each document, as the client sent it: the truth the texts must show. */
  readonly model = new Map<string, Data>();

  private constructor(
    readonly dir: string,
    public collection: Collection,
  ) {}

  static async open(dir: string): Promise<Run> {
    return new Run(dir, await openDevices(dir));
  }

  async step(c: Command): Promise<void> {
    const ids = this.collection.all().map((d) => d.id);
    const id = c.kind === "replace" || c.kind === "delete" || c.kind === "attach" ? ids[c.pick % Math.max(1, ids.length)] : undefined;
    switch (c.kind) {
      case "create": {
        const doc = await this.collection.create(c.data);
        this.model.set(doc.id, c.data);
        return;
      }
      case "replace":
        if (id === undefined) return;
        await this.collection.update(id, c.data);
        this.model.set(id, c.data);
        return;
      case "delete":
        if (id === undefined) return;
        await this.collection.delete(id);
        this.model.delete(id);
        return;
      case "attach":
        // A new revision with the same data: the document is stored anew all the same.
        if (id === undefined) return;
        await this.collection.putAttachment(id, "a.wav", Buffer.from("RIFF"), "audio/wav");
        return;
      case "restart":
        await this.reopen(c.damaged);
        return;
      case "page":
        this.checkPage(c.query);
        return;
    }
  }

  /** Every document's served text against the model and against serializing afresh. */
  checkDocs(): void {
    const docs = this.collection.all();
    expect(docs.map((d) => d.id).sort()).toEqual([...this.model.keys()].sort());
    for (const doc of docs) {
      const served = viewText(doc);
      expect(served.text).toBe(JSON.stringify(view(doc)));
      expect(JSON.parse(served.text)).toEqual({ ...publicFields(JSON.parse(JSON.stringify(this.model.get(doc.id))) as Data), id: doc.id });
      expect(rowTexts.of(doc)).toBe(JSON.stringify(row(doc)));
    }
  }

  /** A page's text (and its envelope) against the page serialized afresh. */
  checkPage(query: Record<string, string>): void {
    const fresh = listPage(this.collection, query, { row });
    const served = listPageText(this.collection, query, { texts: rowTexts });
    expect(served.data).toBeInstanceOf(JsonText);
    if (!(served.data instanceof JsonText)) return;
    expect(served.data.text).toBe(JSON.stringify(fresh.data));
    expect(served.data.value()).toEqual(fresh.data);
    expect({ paging: served.paging, revision: served.revision }).toEqual({ paging: fresh.paging, revision: fresh.revision });
    const envelope = { requestId: "r1", authToken: "t1", now: new Date(START_MS), revision: fresh.revision, paging: fresh.paging };
    expect(successEnvelopeText({ ...envelope, data: served.data })).toBe(JSON.stringify(successEnvelope({ ...envelope, data: fresh.data })));
  }

  /**
   * Opens the data directory again without closing (a crash: the journal is replayed);
   * `damaged` garbles the collection file first, and the model follows what recovery kept.
   */
  async reopen(damaged: boolean): Promise<void> {
    const file = join(this.dir, "accounts", ACCOUNT, "devices.json");
    const exists = await access(file).then(() => true, () => false);
    if (damaged && exists) await writeFile(file, '{"docs": [{"id": "cut short');
    this.collection = await openDevices(this.dir);
    if (!damaged) return;
    const kept = new Set(this.collection.all().map((d) => d.id));
    for (const id of [...this.model.keys()]) if (!kept.has(id)) this.model.delete(id);
  }
}

async function openDevices(dir: string): Promise<Collection> {
  const store = await openStore({ dir, clock: new ManualClock(START_MS) });
  return store.account(ACCOUNT, "devices");
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sb-doc-texts-"));
});
afterAll(async () => {
  await closeOpenedStores();
  await rm(root, { recursive: true, force: true });
});

describe("texts of documents made once per stored document", () => {
  it("never serve a text older than the document, through writes, attachments and restarts", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 40 }), async (commands) => {
        const run = await Run.open(join(root, `run-${n++}`));
        for (const c of commands) {
          // Read everything first, so that any text a write could leave stale is cached.
          run.checkDocs();
          run.checkPage({});
          await run.step(c);
        }
        run.checkDocs();
      }),
      { numRuns: 40 },
    );
  });

  it("gives a JSON text's data back as it is and its envelope byte for byte", () => {
    const data = { a: [1, "x"], b: { c: null } };
    const text = new JsonText(JSON.stringify(data), () => data);
    const options = { requestId: "abc", authToken: null, now: new Date(START_MS) };
    expect(successEnvelopeText({ ...options, data: text })).toBe(JSON.stringify(successEnvelope({ ...options, data })));
    const paged = { ...options, paging: { page_size: 2, start_key: "k\"1", next_start_key: "k2" } };
    expect(successEnvelopeText({ ...paged, data: text })).toBe(JSON.stringify(successEnvelope({ ...paged, data })));
  });
});
