import { appendFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventBus, bindingMatches, EventLog, type BusEvent } from "../../server/events/index.js";
import { publishDocumentChanges } from "../../server/events/objects.js";
import { Store } from "../../server/store/index.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-events-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("bindings", () => {
  it("match segment by segment, * for one, # for the rest, qubicle.* as callq.*", () => {
    expect(bindingMatches("call.CHANNEL_CREATE.*", "call.CHANNEL_CREATE.abc")).toBe(true);
    expect(bindingMatches("call.CHANNEL_CREATE.abc", "call.CHANNEL_CREATE.abc")).toBe(true);
    expect(bindingMatches("call.CHANNEL_CREATE.abc", "call.CHANNEL_CREATE.xyz")).toBe(false);
    expect(bindingMatches("call.CHANNEL_CREATE.*", "call.CHANNEL_ANSWER.abc")).toBe(false);
    expect(bindingMatches("call.*.*", "call.CHANNEL_ANSWER.abc")).toBe(true);
    expect(bindingMatches("call.*", "call.CHANNEL_ANSWER.abc")).toBe(false);
    expect(bindingMatches("call.#", "call.CHANNEL_ANSWER.abc")).toBe(true);
    expect(bindingMatches("object.doc_created.device", "object.doc_created.device")).toBe(true);
    expect(bindingMatches("object.doc_created.*", "object.doc_edited.device")).toBe(false);
    expect(bindingMatches("qubicle.queue.*", "callq.queue.q1")).toBe(true);
  });
});

describe("bus", () => {
  it("numbers events on from the last sequence and keeps delivering when a listener throws", () => {
    const bus = new EventBus({ now: () => 1000 }, 41);
    const got: BusEvent[] = [];
    bus.subscribe(() => {
      throw new Error("bad listener");
    });
    bus.subscribe((e) => got.push(e));
    const e = bus.publish({ account_id: ACCOUNT, routing_key: "x.y", name: "y", data: {} });
    expect(e).toMatchObject({ seq: 42, at: 1000 });
    expect(got.map((g) => g.seq)).toEqual([42]);
  });
});

describe("event log", () => {
  const event = (seq: number, account = ACCOUNT): BusEvent => ({ seq, at: seq, account_id: account, routing_key: "t.e", name: "e", data: { n: seq } });

  it("replays an account's events since a sequence, from memory and from the files, across a reopen", async () => {
    const { log } = await EventLog.open({ dir, memory: 10, fileBytes: 400, files: 100 });
    for (let i = 1; i <= 50; i++) log.append(event(i, i % 2 ? ACCOUNT : "f".repeat(32)));
    await log.flush();
    expect((await readdir(dir)).length).toBeGreaterThan(3);
    const recent = await log.since(ACCOUNT, 45, 100);
    expect(recent.events.map((e) => e.seq)).toEqual([47, 49]);
    const old = await log.since(ACCOUNT, 0, 5);
    expect(old.events.map((e) => e.seq)).toEqual([1, 3, 5, 7, 9]);
    expect(old.complete).toBe(true);

    const again = await EventLog.open({ dir, memory: 10, fileBytes: 400, files: 100 });
    expect(again.lastSeq).toBe(50);
    expect((await again.log.since(ACCOUNT, 40, 100)).events.map((e) => e.seq)).toEqual([41, 43, 45, 47, 49]);
  });

  it("caps its size by dropping the oldest files, and says when a catch-up is incomplete", async () => {
    const { log } = await EventLog.open({ dir, memory: 5, fileBytes: 300, files: 3 });
    for (let i = 1; i <= 100; i++) log.append(event(i));
    await log.flush();
    expect((await readdir(dir)).length).toBeLessThanOrEqual(3);
    const res = await log.since(ACCOUNT, 0, 1000);
    expect(res.complete).toBe(false);
    expect(res.events.at(-1)?.seq).toBe(100);
  });

  it("skips a torn last line when it reopens", async () => {
    const { log } = await EventLog.open({ dir });
    log.append(event(7));
    await log.flush();
    const [file] = await readdir(dir);
    await appendFile(join(dir, file ?? ""), '{"seq":8,"at"');
    expect((await EventLog.open({ dir })).lastSeq).toBe(7);
  });
});

describe("document events", () => {
  it("publish object.doc_created/edited/deleted.<type> for account documents once they are on disk", async () => {
    const store = await Store.open({ dir });
    const bus = new EventBus({ now: () => 0 });
    const got: BusEvent[] = [];
    bus.subscribe((e) => got.push(e));
    publishDocumentChanges(store, bus);
    const devices = await store.account(ACCOUNT, "devices");
    const d = await devices.create({ name: "a" });
    await devices.update(d.id, { name: "b" });
    await devices.delete(d.id);
    await (await store.global("accounts")).create({ name: "x" });
    expect(got.map((e) => e.routing_key)).toEqual(["object.doc_created.device", "object.doc_edited.device", "object.doc_deleted.device"]);
    expect(got[0]?.data).toMatchObject({ action: "doc_created", type: "device", id: d.id, account_id: ACCOUNT });
    await store.close();
  });
});
